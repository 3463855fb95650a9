/* Reference attention: see ref_attention.h. */
#include <math.h>
#include <stdlib.h>

#include "conf_extra.h"
#include "ref_attention.h"

/* s_t for one query and head; -inf for a token the query does not see. */
static void scores(const struct ref_attn *a, const float *qi, const float *k, int64_t kvh, const float *mask_row,
		   int64_t i, double *s)
{
	int64_t last = a->causal ? a->kv_len - a->tq + i : a->kv_len - 1;

	for (int64_t t = 0; t < a->kv_len; t++) {
		const float *kt = k + (t * a->hkv + kvh) * a->d;
		double dot = 0.0;

		if (t > last) {
			s[t] = -INFINITY;
			continue;
		}
		for (int64_t j = 0; j < a->d; j++)
			dot += (double)qi[j] * kt[j];
		s[t] = a->scale * dot + (mask_row ? (double)mask_row[t] : 0.0);
	}
}

static void attend(const struct ref_attn *a, const double *s, const float *v, int64_t kvh, double *out, double *mag)
{
	double max = -INFINITY, sum = 0.0;

	for (int64_t j = 0; j < a->dv; j++)
		out[j] = mag[j] = 0.0;
	for (int64_t t = 0; t < a->kv_len; t++)
		max = fmax(max, s[t]);
	if (max == -INFINITY)
		return; /* sees nothing: zeros */
	for (int64_t t = 0; t < a->kv_len; t++) {
		const float *vt = v + (t * a->hkv + kvh) * a->dv;
		double p = exp(s[t] - max);

		if (p == 0.0)
			continue;
		sum += p;
		for (int64_t j = 0; j < a->dv; j++) {
			out[j] += p * vt[j];
			mag[j] += p * fabs((double)vt[j]);
		}
	}
	for (int64_t j = 0; j < a->dv; j++) {
		out[j] /= sum;
		mag[j] /= sum;
	}
}

void ref_attention(const struct ref_attn *a, const float *q, const float *k, const float *v, const float *mask,
		   int64_t mask_cols, double *out, double *mag)
{
	double *s = conf_xmalloc(sizeof(double) * (size_t)a->kv_len);
	int64_t group = a->hq / a->hkv;

	for (int64_t i = 0; i < a->tq; i++) {
		for (int64_t h = 0; h < a->hq; h++) {
			int64_t o = (i * a->hq + h) * a->dv;

			scores(a, q + (i * a->hq + h) * a->d, k, h / group, mask ? mask + i * mask_cols : NULL, i, s);
			attend(a, s, v, h / group, out + o, mag + o);
		}
	}
	free(s);
}
