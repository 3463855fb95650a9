/* rope and rope_ext: rotary position embedding, normal (GPT-J) and neox
 * pairings, with ggml's extensions (frequency factors, YaRN). gllmk_rope is
 * rope_ext with the defaults: one path.
 *
 * Every extension only changes pair i's angular speed and the magnitude:
 * the angle stays pos · w_i with
 *   w_i = theta_base^(-2i/n_rot) / ff_i · (freq_scale · (1 - mix_i) + mix_i)
 * (mix_i: YaRN's extrapolation share, rope_yarn.h), and cos, sin are scaled
 * by mscale. So w_i is formed once per call and the rest is plain rope.
 *
 * Angles are computed in double: positions reach 10^5 and more, where a
 * float angle would already be off by a sizeable fraction of a radian.
 * Each token's cos/sin table is built once (per thread scratch, laid out
 * as the ISA's rope_row wants it: cpu_cntx.h) and reused for all its
 * heads; the rotation itself is float, with streaming stores when the
 * output is big (cpu_view.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../rope_yarn.h"
#include "cpu_plugin.h"
#include "cpu_view.h"

/* Consecutive positions advance the previous token's angles by one step
 * (a rotation in double) instead of calling cos and sin for every pair;
 * every RESYNC tokens, and at any other position, they are computed
 * afresh, so the recurrence's error stays near 1e-14 (a float ulp is
 * 6e-8). */
#define RESYNC 32

struct rope_job {
	const struct cpu_cntx *k;
	const gllmk_tensor *y, *x;
	const int32_t *pos;
	const double *freq;             /* w_i: radians per position, i < half */
	const double *step_c, *step_s;  /* cos, sin of one position's angle, per pair */
	float *scratch;                 /* 4·half floats per thread: cos, sin */
	double *angles;                 /* 2·half doubles per thread: cos, sin */
	int64_t heads, d, half;         /* rows per token, row length, pairs */
	double mscale;                  /* YaRN magnitude times attn_factor */
	int neox;
	int stream;                     /* rope is the nt twin: fence each piece */
	cpu_rope_row_fn rope;
};

/* cos and sin of every pair's angle at position pos, afresh or, with
 * advance, one step on from the previous position's. */
static void angles_at(const struct rope_job *j, int32_t pos, int advance, double *c, double *s)
{
	double p = (double)pos;

	for (int64_t i = 0; i < j->half; i++) {
		if (advance) {
			double ci = c[i];

			c[i] = ci * j->step_c[i] - s[i] * j->step_s[i];
			s[i] = s[i] * j->step_c[i] + ci * j->step_s[i];
		} else {
			c[i] = cos(p * j->freq[i]);
			s[i] = sin(p * j->freq[i]);
		}
	}
}

/* The token's table in rope_row's layout, scaled by mscale: neox one cos
 * and sin per pair; normal each pair's cos twice and its sin as (−sin, +sin). */
static void angle_table(const struct rope_job *j, const double *c, const double *s, float *cs, float *sn)
{
	for (int64_t i = 0; i < j->half; i++) {
		float ci = (float)(c[i] * j->mscale), si = (float)(s[i] * j->mscale);

		if (j->neox) {
			cs[i] = ci;
			sn[i] = si;
		} else {
			cs[2 * i] = cs[2 * i + 1] = ci;
			sn[2 * i] = -si;
			sn[2 * i + 1] = si;
		}
	}
}

static void rope_tokens(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct rope_job *j = arg;
	const int64_t n_rot = 2 * j->half;
	float *cs = j->scratch + (int64_t)tid * 2 * n_rot, *sn = cs + n_rot;
	double *c = j->angles + (int64_t)tid * 2 * j->half, *s = c + j->half;

	for (int64_t t = begin, since = 0; t < end; t++, since++) {
		int advance = t > begin && since < RESYNC && j->pos[t] == j->pos[t - 1] + 1;

		since = advance ? since : 0;
		angles_at(j, j->pos[t], advance, c, s);
		angle_table(j, c, s, cs, sn);
		for (int64_t h = 0; h < j->heads; h++) {
			int64_t r = t * j->heads + h;
			float *y = cpu_row(j->y, r);
			const float *x = cpu_row(j->x, r);

			j->rope(y, x, cs, sn, n_rot, j->neox);
			if (y != x)
				memcpy(y + n_rot, x + n_rot, (size_t)(j->d - n_rot) * sizeof(float));
		}
	}
	cpu_stream_fence(j->stream);
}

/* Pair i's factor: 1 without freq_factors (1-D, so contiguous). */
static double freq_factor(gllmk_t ff, int64_t i)
{
	return ff ? (double)((const float *)gllmk_tensor_host(ff))[i] : 1.0;
}

/* w_i for every pair, with one position's rotation (cos, sin of w_i). */
static void pair_speeds(const gllmk_rope_ext_params *p, gllmk_t ff, int64_t n_rot, double *w, double *step_c,
			double *step_s)
{
	const struct rope_yarn yarn = rope_yarn_of(p, (int)n_rot);

	for (int64_t i = 0; i < n_rot / 2; i++) {
		double mix = rope_yarn_mix(&yarn, i);
		double inv_freq = pow((double)p->theta_base, -2.0 * (double)i / (double)n_rot) / freq_factor(ff, i);

		w[i] = inv_freq * ((double)p->freq_scale * (1.0 - mix) + mix);
		step_c[i] = cos(w[i]);
		step_s[i] = sin(w[i]);
	}
}

gllmk_status cpu_rope_ext(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t ff, const gllmk_rope_ext_params *p)
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
		.mscale = rope_yarn_of(p, (int)n_rot).mscale,
		.neox = p->mode == GLLMK_ROPE_NEOX,
		.stream = cpu_stream_output(y),
	};
	int64_t per_token = j.heads * d;
	/* w, step_c, step_s; then each thread's angles */
	double *freq = malloc((size_t)(3 + 2 * s->n_threads) * (size_t)(j.half + 1) * sizeof(double));
	float *scratch = malloc((size_t)s->n_threads * (size_t)(4 * j.half + 1) * sizeof(float));

	if (!freq || !scratch) {
		free(freq);
		free(scratch);
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s rope: no memory for %lld angles", s->k->isa,
					  (long long)j.half);
	}
	double *step_c = freq + j.half, *step_s = step_c + j.half;

	pair_speeds(p, ff, n_rot, freq, step_c, step_s);
	j.rope = CPU_WRITER(s->k, j.stream, rope_row);
	j.freq = freq;
	j.step_c = step_c;
	j.step_s = step_s;
	j.angles = step_s + j.half;
	j.scratch = scratch;
	cpu_pool_run(s->pool, tokens, cpu_row_grain(tokens, per_token), rope_tokens, &j);
	free(freq);
	free(scratch);
	return GLLMK_OK;
}

/* ABI 1.0's rope: rope_ext with the defaults. */
gllmk_status cpu_rope(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p)
{
	const gllmk_rope_ext_params q = rope_ext_of(p);

	return cpu_rope_ext(st, y, x, pos, NULL, &q);
}
