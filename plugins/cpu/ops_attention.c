/* gllmk_attention: fused attention with online softmax (SPEC/OPERATORS.md).
 *
 * A work item is one query and one KV head with the Hq/Hkv query heads that
 * share it (GQA/MQA), so each K and V row is read once per group. Tokens
 * are taken KV_CHUNK at a time: the chunk's scores, its max, one rescale of
 * the running (max, sum, acc), then the weighted V rows. No Tq×Tkv matrix
 * exists anywhere. When there are too few items to keep the threads busy
 * (decoding: one query) and the KV is long, each item's tokens are split
 * into ranges whose partial (max, sum, acc) are merged afterwards (split-K).
 * Scores and acc are f32; the running sums are double. The q·k dots and
 * the acc += p·v updates go through the ISA's kernels (dot_f32, axpy_f32,
 * and for f16 K/V dot_f32_f16 and axpy_f16, which read the rows in place).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_plugin.h"
#include "cpu_rows.h"

#define KV_CHUNK 32
#define SPLIT_MIN 256           /* tokens per split range, at least */

struct attn_job {
	const struct cpu_kernels *k;
	const gllmk_tensor *out, *q, *kt, *vt, *mask;
	const int32_t *bt;              /* block table, NULL when contiguous */
	int64_t tq, hq, hkv, group, d, dv, kv_len, page;
	float scale;
	int causal;
	int64_t n_split, split_len;
	char *scratch;                  /* per thread */
	int64_t scratch_bytes;
	float *partial;                 /* split-K: per (item, head) max, sum, acc[dv] */
};

/* Running state of one query head over a token range. */
struct attn_acc {
	float *mx;      /* [group] running max */
	double *sum;    /* [group] running sum of exp(s - mx) */
	float *acc;     /* [group][dv] running Σ exp(s - mx)·v */
	float *s;       /* [group][KV_CHUNK] scores, then weights */
	float *kf, *vf; /* a K and a V row decoded from f16 */
};

static int64_t round64(int64_t x)
{
	return (x + 63) / 64 * 64;
}

static int64_t scratch_size(const struct attn_job *j)
{
	return round64(j->group * (int64_t)sizeof(double)) + round64(j->group * (int64_t)sizeof(float)) +
	       round64(j->group * j->dv * (int64_t)sizeof(float)) +
	       round64(j->group * KV_CHUNK * (int64_t)sizeof(float)) + round64(j->d * (int64_t)sizeof(float)) +
	       round64(j->dv * (int64_t)sizeof(float));
}

static struct attn_acc acc_at(const struct attn_job *j, int tid)
{
	char *p = j->scratch + tid * j->scratch_bytes;
	struct attn_acc a;

	a.sum = (double *)p;
	p += round64(j->group * (int64_t)sizeof(double));
	a.mx = (float *)p;
	p += round64(j->group * (int64_t)sizeof(float));
	a.acc = (float *)p;
	p += round64(j->group * j->dv * (int64_t)sizeof(float));
	a.s = (float *)p;
	p += round64(j->group * KV_CHUNK * (int64_t)sizeof(float));
	a.kf = (float *)p;
	p += round64(j->d * (int64_t)sizeof(float));
	a.vf = (float *)p;
	return a;
}

/* Address of the row of token tok, KV head g, in t. */
static const void *kv_ptr(const struct attn_job *j, const gllmk_tensor *t, int64_t tok, int64_t g)
{
	const char *p = gllmk_tensor_host(t);

	if (j->bt)
		return p + j->bt[tok / j->page] * t->stride[0] + tok % j->page * t->stride[1] + g * t->stride[2];
	return p + tok * t->stride[0] + g * t->stride[1];
}

/* Row of token tok, KV head g, as f32 (f16 rows decoded into buf). */
static const float *kv_row(const struct attn_job *j, const gllmk_tensor *t, int64_t tok, int64_t g, float *buf,
			   int64_t n)
{
	const void *p = kv_ptr(j, t, tok, g);

	if (t->dtype == GLLMK_F32)
		return p;
	j->k->dequant_row[t->dtype](p, buf, n);
	return buf;
}

/* acc += p·v for one V row (f32, or f16 read directly). */
static void axpy_v(const struct attn_job *j, float *acc, float p, const float *vf, const uint16_t *vh)
{
	if (vh)
		j->k->axpy_f16(acc, p, vh, j->dv);
	else if (j->k->axpy_f32)
		j->k->axpy_f32(acc, p, vf, j->dv);
	else
		for (int64_t e = 0; e < j->dv; e++)
			acc[e] += p * vf[e];
}

static const float *q_row(const struct attn_job *j, int64_t i, int64_t h)
{
	return (const float *)((const char *)gllmk_tensor_host(j->q) + i * j->q->stride[0] + h * j->q->stride[1]);
}

static float *out_row(const struct attn_job *j, int64_t i, int64_t h)
{
	return (float *)((char *)gllmk_tensor_host(j->out) + i * j->out->stride[0] + h * j->out->stride[1]);
}

/* Tokens query i sees: [0, end). */
static int64_t visible_end(const struct attn_job *j, int64_t i)
{
	int64_t end = j->kv_len;

	if (j->causal) {
		end = j->kv_len - j->tq + i + 1;
		end = end < 0 ? 0 : end > j->kv_len ? j->kv_len : end;
	}
	return end;
}

/* Scores of chunk [t0, t0 + n) for every head of the group, then each
 * head's running state moved to the chunk's max and the scores turned
 * into weights exp(s - max) (0 for excluded tokens). */
static void score_chunk(const struct attn_job *j, struct attn_acc *a, int64_t i, int64_t g, int64_t t0, int64_t n,
			const float *mask_row)
{
	/* f16 K rows go to the ISA's f16 dot as they are, without a decode */
	const int direct = j->kt->dtype == GLLMK_F16 && j->k->dot_f32_f16;

	for (int64_t tt = 0; tt < n; tt++) {
		const float m = mask_row ? mask_row[t0 + tt] : 0.0f;
		const uint16_t *kh = direct ? kv_ptr(j, j->kt, t0 + tt, g) : NULL;
		const float *kr = direct ? NULL : kv_row(j, j->kt, t0 + tt, g, a->kf, j->d);

		for (int64_t h = 0; h < j->group; h++) {
			const float *qr = q_row(j, i, g * j->group + h);
			const float dot = kh ? j->k->dot_f32_f16(j->d, qr, kh) : j->k->dot_f32(j->d, qr, kr);

			a->s[h * KV_CHUNK + tt] = j->scale * dot + m;
		}
	}
	for (int64_t h = 0; h < j->group; h++) {
		float *s = a->s + h * KV_CHUNK;
		float cmax = -INFINITY;

		for (int64_t tt = 0; tt < n; tt++)
			cmax = s[tt] > cmax ? s[tt] : cmax;
		if (cmax == -INFINITY) {        /* every token masked out */
			memset(s, 0, (size_t)n * sizeof(float));
			continue;
		}
		if (cmax > a->mx[h]) {
			const float corr = expf(a->mx[h] - cmax); /* 0 while mx is -inf */
			float *acc = a->acc + h * j->dv;

			for (int64_t e = 0; e < j->dv; e++)
				acc[e] *= corr;
			a->sum[h] *= corr;
			a->mx[h] = cmax;
		}
		double part = 0.0;

		for (int64_t tt = 0; tt < n; tt++) {
			s[tt] = expf(s[tt] - a->mx[h]);
			part += s[tt];
		}
		a->sum[h] += part;
	}
}

static void accumulate_v(const struct attn_job *j, struct attn_acc *a, int64_t g, int64_t t0, int64_t n)
{
	const int direct = j->vt->dtype == GLLMK_F16 && j->k->axpy_f16;

	for (int64_t tt = 0; tt < n; tt++) {
		const uint16_t *vh = direct ? kv_ptr(j, j->vt, t0 + tt, g) : NULL;
		const float *vr = direct ? NULL : kv_row(j, j->vt, t0 + tt, g, a->vf, j->dv);

		for (int64_t h = 0; h < j->group; h++) {
			const float p = a->s[h * KV_CHUNK + tt];

			if (p != 0.0f)
				axpy_v(j, a->acc + h * j->dv, p, vr, vh);
		}
	}
}

/* Query i, KV head g, tokens [t0, t1): the group's running state in a. */
static void attend(const struct attn_job *j, struct attn_acc *a, int64_t i, int64_t g, int64_t t0, int64_t t1)
{
	const float *mask_row = NULL;

	if (j->mask) {
		const int64_t rs = j->mask->ndim >= 2 ? j->mask->stride[j->mask->ndim - 2] : 0;

		mask_row = (const float *)((const char *)gllmk_tensor_host(j->mask) + i * rs);
	}
	for (int64_t h = 0; h < j->group; h++) {
		a->mx[h] = -INFINITY;
		a->sum[h] = 0.0;
	}
	memset(a->acc, 0, (size_t)(j->group * j->dv) * sizeof(float));
	for (int64_t c = t0; c < t1; c += KV_CHUNK) {
		const int64_t n = t1 - c < KV_CHUNK ? t1 - c : KV_CHUNK;

		score_chunk(j, a, i, g, c, n, mask_row);
		accumulate_v(j, a, g, c, n);
	}
}

static void attend_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct attn_job *j = arg;
	struct attn_acc a = acc_at(j, tid);

	for (int64_t it = begin; it < end; it++) {
		const int64_t i = it / (j->hkv * j->n_split);
		const int64_t g = it / j->n_split % j->hkv;
		const int64_t sp = it % j->n_split;
		const int64_t vis = visible_end(j, i);
		const int64_t t0 = sp * j->split_len;
		const int64_t t1 = t0 + j->split_len < vis ? t0 + j->split_len : vis;

		attend(j, &a, i, g, t0, t1);
		for (int64_t h = 0; h < j->group; h++) {
			const float *acc = a.acc + h * j->dv;

			if (j->n_split > 1) {   /* keep the partial state for the merge */
				float *p = j->partial + (it * j->group + h) * (j->dv + 2);

				p[0] = a.mx[h];
				p[1] = (float)a.sum[h];
				memcpy(p + 2, acc, (size_t)j->dv * sizeof(float));
				continue;
			}
			float *o = out_row(j, i, g * j->group + h);
			const float inv = a.sum[h] > 0.0 ? (float)(1.0 / a.sum[h]) : 0.0f;

			for (int64_t e = 0; e < j->dv; e++)
				o[e] = acc[e] * inv;
		}
	}
}

/* Split-K merge for item (i, g): each head's ranges rescaled to their
 * common max and summed. */
static void merge_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct attn_job *j = arg;

	(void)tid;
	for (int64_t ig = begin; ig < end; ig++) {
		const int64_t i = ig / j->hkv, g = ig % j->hkv;

		for (int64_t h = 0; h < j->group; h++) {
			float *o = out_row(j, i, g * j->group + h);
			float mx = -INFINITY;
			double sum = 0.0;

			for (int64_t sp = 0; sp < j->n_split; sp++) {
				const float *p = j->partial + ((ig * j->n_split + sp) * j->group + h) * (j->dv + 2);

				mx = p[0] > mx ? p[0] : mx;
			}
			memset(o, 0, (size_t)j->dv * sizeof(float));
			if (mx == -INFINITY)
				continue;       /* sees no token: zeros */
			for (int64_t sp = 0; sp < j->n_split; sp++) {
				const float *p = j->partial + ((ig * j->n_split + sp) * j->group + h) * (j->dv + 2);
				const float w = p[0] == -INFINITY ? 0.0f : expf(p[0] - mx);

				sum += (double)w * p[1];
				for (int64_t e = 0; e < j->dv; e++)
					o[e] += w * p[2 + e];
			}
			const float inv = sum > 0.0 ? (float)(1.0 / sum) : 0.0f;

			for (int64_t e = 0; e < j->dv; e++)
				o[e] *= inv;
		}
	}
}

/* Every page the first kv_len tokens use must name a block of the cache. */
static gllmk_status check_block_table(struct cpu_state *s, const struct attn_job *j, int64_t n_blocks)
{
	const int64_t pages = (j->kv_len + j->page - 1) / j->page;

	for (int64_t p = 0; p < pages; p++)
		if (j->bt[p] < 0 || j->bt[p] >= n_blocks)
			return s->host->set_error(GLLMK_E_BOUNDS,
						  "gllmk_attention: block_table[%lld] = %d outside the cache's %lld blocks",
						  (long long)p, j->bt[p], (long long)n_blocks);
	return GLLMK_OK;
}

/* Split the tokens when (query, KV head) items are too few for the threads. */
static void choose_split(struct attn_job *j, int threads)
{
	const int64_t items = j->tq * j->hkv;

	j->n_split = 1;
	if (threads > 1 && items < 2 * threads && j->kv_len >= 2 * SPLIT_MIN) {
		const int64_t by_len = j->kv_len / SPLIT_MIN;
		const int64_t by_threads = (4 * threads + items - 1) / items;

		j->n_split = by_len < by_threads ? by_len : by_threads;
	}
	j->split_len = (j->kv_len + j->n_split - 1) / j->n_split;
}

gllmk_status cpu_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t block_table,
			   const gllmk_attention_params *p)
{
	struct cpu_state *s = st;
	const int paged = block_table != NULL;
	const int threads = cpu_pool_threads(s->pool);
	struct attn_job j = {
		.k = s->k,
		.out = out,
		.q = q,
		.kt = k,
		.vt = v,
		.mask = mask,
		.bt = paged ? gllmk_tensor_host(block_table) : NULL,
		.tq = q->shape[0],
		.hq = q->shape[1],
		.d = q->shape[2],
		.hkv = k->shape[paged ? 2 : 1],
		.dv = v->shape[paged ? 3 : 2],
		.page = paged ? k->shape[1] : 1,
		.kv_len = p->kv_len > 0 ? p->kv_len : k->shape[0],
		.causal = p->causal != 0,
	};
	gllmk_status status;

	j.group = j.hq / j.hkv;
	j.scale = p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)j.d);
	if (paged) {
		status = check_block_table(s, &j, k->shape[0]);
		if (status != GLLMK_OK)
			return status;
	}
	choose_split(&j, threads);
	j.scratch_bytes = scratch_size(&j);

	const int64_t items = j.tq * j.hkv * j.n_split;
	const int64_t partial = j.n_split > 1 ? items * j.group * (j.dv + 2) * (int64_t)sizeof(float) : 0;
	const size_t bytes = (size_t)(threads * j.scratch_bytes + partial);
	char *buf = aligned_alloc(64, (size_t)round64((int64_t)bytes));

	if (!buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_attention: %zu bytes of scratch", bytes);
	j.scratch = buf;
	j.partial = (float *)(buf + threads * j.scratch_bytes);
	cpu_pool_run(s->pool, items, 1, attend_task, &j);
	if (j.n_split > 1)
		cpu_pool_run(s->pool, j.tq * j.hkv, 1, merge_task, &j);
	free(buf);
	return GLLMK_OK;
}
