/* rope: rotary position embedding, normal (GPT-J) and neox pairings.
 *
 * Angles are computed in double: positions reach 10^5 and more, where a
 * float angle would already be off by a sizeable fraction of a radian.
 * Each token's cos/sin table is built once (per thread scratch, laid out
 * as the ISA's rope_row wants it: cpu_kernels.h) and reused for all its
 * heads; the rotation itself is float.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_plugin.h"
#include "cpu_rows.h"

struct rope_job {
	const struct cpu_kernels *k;
	const gllmk_tensor *y, *x;
	const int32_t *pos;
	const double *inv_freq;         /* theta_base^(-2i/n_rot), i < half */
	float *scratch;                 /* 4·half floats per thread: cos, sin */
	int64_t heads, d, half;         /* rows per token, row length, pairs */
	double freq_scale;
	int neox;
};

/* The token's table in rope_row's layout: neox one cos and sin per pair;
 * normal each pair's cos twice and its sin as (−sin, +sin). */
static void angle_table(const struct rope_job *j, int32_t pos, float *cs, float *sn)
{
	double p = (double)pos * j->freq_scale;

	for (int64_t i = 0; i < j->half; i++) {
		double theta = p * j->inv_freq[i];
		float c = (float)cos(theta), s = (float)sin(theta);

		if (j->neox) {
			cs[i] = c;
			sn[i] = s;
		} else {
			cs[2 * i] = cs[2 * i + 1] = c;
			sn[2 * i] = -s;
			sn[2 * i + 1] = s;
		}
	}
}

static void rope_tokens(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct rope_job *j = arg;
	const int64_t n_rot = 2 * j->half;
	float *cs = j->scratch + (int64_t)tid * 2 * n_rot, *sn = cs + n_rot;

	for (int64_t t = begin; t < end; t++) {
		angle_table(j, j->pos[t], cs, sn);
		for (int64_t h = 0; h < j->heads; h++) {
			int64_t r = t * j->heads + h;
			float *y = cpu_row(j->y, r);
			const float *x = cpu_row(j->x, r);

			j->k->rope_row(y, x, cs, sn, n_rot, j->neox);
			if (y != x)
				memcpy(y + n_rot, x + n_rot, (size_t)(j->d - n_rot) * sizeof(float));
		}
	}
}

gllmk_status cpu_rope(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p)
{
	const struct cpu_state *s = st;
	int64_t tokens = pos->shape[0], d = cpu_row_len(x);
	int64_t n_rot = p->n_rot > 0 ? p->n_rot : d;
	struct rope_job j = {
		.k = s->k,
		.y = y,
		.x = x,
		.pos = gllmk_tensor_host(pos),
		.heads = cpu_rows(x) / tokens,
		.d = d,
		.half = n_rot / 2,
		.freq_scale = p->freq_scale,
		.neox = p->mode == GLLMK_ROPE_NEOX,
	};
	int64_t per_token = j.heads * d;
	double *inv_freq = malloc((size_t)(j.half + 1) * sizeof(double));
	float *scratch = malloc((size_t)s->n_threads * (size_t)(4 * j.half + 1) * sizeof(float));

	if (!inv_freq || !scratch) {
		free(inv_freq);
		free(scratch);
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s rope: no memory for %lld angles", s->k->isa,
					  (long long)j.half);
	}
	for (int64_t i = 0; i < j.half; i++)
		inv_freq[i] = pow((double)p->theta_base, -2.0 * (double)i / (double)n_rot);
	j.inv_freq = inv_freq;
	j.scratch = scratch;
	cpu_pool_run(s->pool, tokens, cpu_row_grain(tokens, per_token), rope_tokens, &j);
	free(inv_freq);
	free(scratch);
	return GLLMK_OK;
}
