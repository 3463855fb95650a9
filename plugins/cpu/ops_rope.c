/* rope: rotary position embedding, normal (GPT-J) and neox pairings.
 *
 * Angles are computed in double: positions reach 10^5 and more, where a
 * float angle would already be off by a sizeable fraction of a radian.
 * Each token's cos/sin table is built once (per thread scratch) and reused
 * for all its heads; the rotation itself is float.
 */
#include <math.h>
#include <stdlib.h>

#include "cpu_plugin.h"
#include "cpu_rows.h"

#define PAR_MIN_ELEMS (64 * 1024)
#define PIECE_MIN_ELEMS (16 * 1024)

struct rope_job {
	const gllmk_tensor *y, *x;
	const int32_t *pos;
	const double *inv_freq;         /* theta_base^(-2i/n_rot), i < half */
	float *scratch;                 /* 2·half floats per thread: cos, sin */
	int64_t heads, d, half;         /* rows per token, row length, pairs */
	double freq_scale;
	int neox;
};

static void rotate_row(const struct rope_job *j, float *y, const float *x, const float *cs, const float *sn)
{
	int64_t half = j->half;
	int64_t step = j->neox ? 1 : 2;          /* a_i = x[i·step] */
	int64_t b_off = j->neox ? half : 1;      /* b_i = a_i[b_off] */

	for (int64_t i = 0; i < half; i++) {
		float a = x[i * step], b = x[i * step + b_off];

		y[i * step] = a * cs[i] - b * sn[i];
		y[i * step + b_off] = a * sn[i] + b * cs[i];
	}
	if (y != x) {
		for (int64_t i = 2 * half; i < j->d; i++)
			y[i] = x[i];
	}
}

static void rope_tokens(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct rope_job *j = arg;
	float *cs = j->scratch + (int64_t)tid * 2 * j->half, *sn = cs + j->half;

	for (int64_t t = begin; t < end; t++) {
		double p = (double)j->pos[t] * j->freq_scale;

		for (int64_t i = 0; i < j->half; i++) {
			double theta = p * j->inv_freq[i];

			cs[i] = (float)cos(theta);
			sn[i] = (float)sin(theta);
		}
		for (int64_t h = 0; h < j->heads; h++) {
			int64_t r = t * j->heads + h;

			rotate_row(j, cpu_row(j->y, r), cpu_row(j->x, r), cs, sn);
		}
	}
}

gllmk_status cpu_rope(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p)
{
	const struct cpu_state *s = st;
	int64_t tokens = pos->shape[0], d = cpu_row_len(x);
	int64_t n_rot = p->n_rot > 0 ? p->n_rot : d;
	struct rope_job j = {
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
	int64_t grain = PIECE_MIN_ELEMS / per_token > 1 ? PIECE_MIN_ELEMS / per_token : 1;
	double *inv_freq = malloc((size_t)(j.half + 1) * sizeof(double));
	float *scratch = malloc((size_t)s->n_threads * (size_t)(2 * j.half + 1) * sizeof(float));

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
	if (tokens * per_token <= PAR_MIN_ELEMS)
		grain = tokens;
	cpu_pool_run(s->pool, tokens, grain, rope_tokens, &j);
	free(inv_freq);
	free(scratch);
	return GLLMK_OK;
}
