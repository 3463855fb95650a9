/* gllmk_attention: fused attention with online softmax (SPEC/OPERATORS.md).
 *
 * A work item is one query, a block of KV heads (with the Hq/Hkv query
 * heads of each, its GQA group) and a range of tokens. Tokens are taken
 * KV_CHUNK at a time; for each KV head of the block, the chunk's scores
 * for the whole group (one kernel call), the chunk's max and one rescale
 * of each head's running (max, sum, acc), the weights exp(s - max), then
 * the weighted V rows added for the whole group (one kernel call). The
 * chunk kernels (cpu_kernels.h, attn) read each K and V row once per
 * group, in place; without them the framework composes the row kernels.
 * No Tq×Tkv matrix exists anywhere.
 *
 * Decoding (few queries) is memory-bound: an item then takes every KV head,
 * so that a thread streams whole [tokens, Hkv, D] blocks of the cache in
 * address order, and the tokens are split into ranges (split-K) whose
 * partial (max, sum, acc) are merged afterwards. Only when the KV is too
 * short to split are the heads divided between items. The next chunk's
 * rows are prefetched while the current one is worked on.
 * Scores and acc are f32; the running sums are double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_plugin.h"
#include "cpu_rows.h"

#define KV_CHUNK 32
#define SPLIT_MIN 256           /* tokens per split range, at least */
#define ITEMS_PER_THREAD 2      /* what the split aims for, for balance */
#define CACHE_LINE 64

struct attn_job {
	const struct cpu_kernels *k;
	struct cpu_attn_kernel kern;    /* scores for k's dtype, accum for v's */
	const gllmk_tensor *out, *q, *kt, *vt, *mask;
	const int32_t *bt;              /* block table, NULL when contiguous */
	int64_t tq, hq, hkv, group, d, dv, kv_len, page;
	float scale;
	int causal;
	int64_t hb, n_hblk;             /* KV heads per item, blocks of them */
	int64_t n_split, split_len;
	char *scratch;                  /* per thread */
	int64_t scratch_bytes;
	float *partial;                 /* split-K: per (query, range, head) max, sum, acc[dv] */
};

/* Running state of an item's hb·group query heads. */
struct attn_acc {
	float *mx;      /* [nh] running max */
	double *sum;    /* [nh] running sum of exp(s - mx) */
	float *acc;     /* [nh][dv] running Σ exp(s - mx)·v */
	float *s;       /* [nh][KV_CHUNK] scores, then weights */
	const void **krow, **vrow;      /* [KV_CHUNK] the chunk's rows of one KV head */
	const void **kpf, **vpf;        /* [KV_CHUNK + hb] rows to prefetch */
	const char **kbase, **vbase;    /* [2·KV_CHUNK] KV head g0's rows: the chunk's, the next's */
	float *kf, *vf; /* a K and a V row decoded to f32 (fallback) */
};

static int64_t round64(int64_t x)
{
	return (x + 63) / 64 * 64;
}

/* Carves the pieces of struct attn_acc out of p (p NULL: only sizes them). */
static int64_t carve(const struct attn_job *j, char *p, struct attn_acc *a)
{
	const int64_t nh = j->hb * j->group;
	const int64_t sizes[] = {
		nh * (int64_t)sizeof(double), nh * (int64_t)sizeof(float), nh * j->dv * (int64_t)sizeof(float),
		nh * KV_CHUNK * (int64_t)sizeof(float), KV_CHUNK * (int64_t)sizeof(void *),
		KV_CHUNK * (int64_t)sizeof(void *), (KV_CHUNK + j->hb) * (int64_t)sizeof(void *),
		(KV_CHUNK + j->hb) * (int64_t)sizeof(void *), j->d * (int64_t)sizeof(float),
		j->dv * (int64_t)sizeof(float), 2 * KV_CHUNK * (int64_t)sizeof(void *),
		2 * KV_CHUNK * (int64_t)sizeof(void *),
	};
	void *at[sizeof(sizes) / sizeof(sizes[0])];
	int64_t off = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		at[i] = p ? p + off : NULL;
		off += round64(sizes[i]);
	}
	if (a)
		*a = (struct attn_acc){ .sum = at[0], .mx = at[1], .acc = at[2], .s = at[3],
					.krow = at[4], .vrow = at[5], .kpf = at[6], .vpf = at[7], .kf = at[8],
					.vf = at[9], .kbase = at[10], .vbase = at[11] };
	return off;
}

/* Bytes from one KV head's row to the next in t. */
static int64_t head_stride(const struct attn_job *j, const gllmk_tensor *t)
{
	return t->stride[j->bt ? 2 : 1];
}

/* base[0 .. n): the rows of KV head g0 in t for tokens [t0, t0 + n). A
 * paged cache is walked page by page, without a division per token. With
 * `prefetch`, the rows of every KV head of the item (len elements each) are
 * prefetched too, all at once: the first chunk of an item, and the next
 * chunk where no chunk kernel spreads the prefetches over its work. */
static void token_rows(const struct attn_job *j, const gllmk_tensor *t, int64_t t0, int64_t n, int64_t g0,
		       const char **base, int64_t len, int prefetch)
{
	const int64_t hs = head_stride(j, t), bytes = len * (t->dtype == GLLMK_F16 ? 2 : 4);
	const char *p = (const char *)gllmk_tensor_host(t) + g0 * hs;

	for (int64_t tt = 0, page = j->bt ? t0 / j->page : 0, slot = j->bt ? t0 % j->page : 0; tt < n; tt++) {
		base[tt] = j->bt ? p + j->bt[page] * t->stride[0] + slot * t->stride[1] : p + (t0 + tt) * t->stride[0];
		if (j->bt && ++slot == j->page) {
			slot = 0;
			page++;
		}
		for (int64_t g = 0; prefetch && g < j->hb; g++)
			for (int64_t b = 0; b < bytes; b += CACHE_LINE)
				__builtin_prefetch(base[tt] + g * hs + b, 0, 2);
	}
}

/* rows[0 .. n): base[i] + off, the chunk's rows of one KV head. */
static void head_rows(const char *const *base, int64_t n, int64_t off, const void **rows)
{
	for (int64_t tt = 0; tt < n; tt++)
		rows[tt] = base[tt] + off;
}

/* rows[0 .. return): what to prefetch while KV head g0 + part of the item
 * is worked on: part `part` of hb of the next chunk's n tokens (base), every
 * KV head of the item, in address order (token-major), so that the memory
 * sees one forward stream per tensor and the hardware prefetchers can join
 * in; the chunk kernels spread the prefetches over their work. */
static int64_t ahead_rows(const struct attn_job *j, const gllmk_tensor *t, const char *const *base, int64_t n,
			  int64_t part, const void **rows)
{
	const int64_t lo = n * part / j->hb, hi = n * (part + 1) / j->hb, hs = head_stride(j, t);
	int64_t r = 0;

	for (int64_t tt = lo; tt < hi; tt++)
		for (int64_t g = 0; g < j->hb; g++)
			rows[r++] = base[tt] + g * hs;
	return r;
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

/* ------------------------------------------- fallback: the row kernels */

/* A K or V row as f32 (f16 rows decoded into buf). */
static const float *row_f32(const struct attn_job *j, const gllmk_tensor *t, const void *row, float *buf,
			    int64_t n)
{
	if (t->dtype == GLLMK_F32)
		return row;
	j->k->dequant_row[t->dtype](row, buf, n);
	return buf;
}

static void scores_rows(const struct attn_job *j, struct attn_acc *a, float *s, const float *q, int64_t qs,
			int64_t n)
{
	const int direct = j->kt->dtype == GLLMK_F16 && j->k->dot_f32_f16;

	for (int64_t tt = 0; tt < n; tt++) {
		const float *kr = direct ? NULL : row_f32(j, j->kt, a->krow[tt], a->kf, j->d);

		for (int64_t h = 0; h < j->group; h++)
			s[h * KV_CHUNK + tt] = direct ? j->k->dot_f32_f16(j->d, q + h * qs, a->krow[tt])
						      : j->k->dot_f32(j->d, q + h * qs, kr);
	}
}

static void axpy_row(const struct attn_job *j, float *acc, float p, const float *vf)
{
	if (j->k->axpy_f32) {
		j->k->axpy_f32(acc, p, vf, j->dv);
		return;
	}
	for (int64_t e = 0; e < j->dv; e++)
		acc[e] += p * vf[e];
}

static void accum_rows(const struct attn_job *j, struct attn_acc *a, float *acc, const float *s, int64_t n)
{
	const int direct = j->vt->dtype == GLLMK_F16 && j->k->axpy_f16;

	for (int64_t tt = 0; tt < n; tt++) {
		const float *vr = direct ? NULL : row_f32(j, j->vt, a->vrow[tt], a->vf, j->dv);

		for (int64_t h = 0; h < j->group; h++) {
			const float p = s[h * KV_CHUNK + tt];

			if (p == 0.0f)
				continue;
			if (direct)
				j->k->axpy_f16(acc + h * j->dv, p, a->vrow[tt], j->dv);
			else
				axpy_row(j, acc + h * j->dv, p, vr);
		}
	}
}

/* ------------------------------------------------------------ the item */

/* Each of heads [h0, h0 + group) moved to its running max over the chunk's
 * scores, which become the weights exp(s - max) (0 for excluded tokens). */
static void softmax_chunk(const struct attn_job *j, struct attn_acc *a, int64_t h0, int64_t n, const float *mask)
{
	for (int64_t h = h0; h < h0 + j->group; h++) {
		float *s = a->s + h * KV_CHUNK;
		const float cmax = j->k->softmax_max_row(s, mask, j->scale, n);

		if (cmax == -INFINITY) {        /* every token masked out */
			memset(s, 0, (size_t)n * sizeof(float));
			continue;
		}
		if (cmax > a->mx[h]) {
			if (a->mx[h] != -INFINITY) {    /* else acc and sum are 0 */
				const float corr = expf(a->mx[h] - cmax);
				float *acc = a->acc + h * j->dv;

				j->k->scale_row(acc, acc, corr, j->dv);
				a->sum[h] *= corr;
			}
			a->mx[h] = cmax;
		}
		a->sum[h] += j->k->softmax_exp_row(s, s, mask, j->scale, a->mx[h], n);
	}
}

/* Query i, KV heads [g0, g0 + hb), tokens [t0, t1): the state in a. */
static void attend(const struct attn_job *j, struct attn_acc *a, int64_t i, int64_t g0, int64_t t0, int64_t t1)
{
	const int64_t nh = j->hb * j->group;
	const int64_t qs = j->q->stride[1] / (int64_t)sizeof(float);
	const float *mask_row = NULL;

	if (j->mask) {
		const int64_t rs = j->mask->ndim >= 2 ? j->mask->stride[j->mask->ndim - 2] : 0;

		mask_row = (const float *)((const char *)gllmk_tensor_host(j->mask) + i * rs);
	}
	for (int64_t h = 0; h < nh; h++) {
		a->mx[h] = -INFINITY;
		a->sum[h] = 0.0;
	}
	memset(a->acc, 0, (size_t)(nh * j->dv) * sizeof(float));
	for (int64_t c = t0; c < t1; c += KV_CHUNK) {
		const int64_t n = t1 - c < KV_CHUNK ? t1 - c : KV_CHUNK;
		const int64_t left = t1 - (c + n);
		const int64_t next = left < KV_CHUNK ? left : KV_CHUNK;

		token_rows(j, j->kt, c, n, g0, a->kbase, j->d, c == t0);
		token_rows(j, j->vt, c, n, g0, a->vbase, j->dv, c == t0);
		token_rows(j, j->kt, c + n, next, g0, a->kbase + n, j->d, !j->kern.scores);
		token_rows(j, j->vt, c + n, next, g0, a->vbase + n, j->dv, !j->kern.accum);
		for (int64_t g = g0; g < g0 + j->hb; g++) {
			const int64_t h0 = (g - g0) * j->group;
			const float *q = q_row(j, i, g * j->group);
			float *s = a->s + h0 * KV_CHUNK, *acc = a->acc + h0 * j->dv;
			const int64_t npf = ahead_rows(j, j->kt, a->kbase + n, next, g - g0, a->kpf);

			ahead_rows(j, j->vt, a->vbase + n, next, g - g0, a->vpf);
			head_rows(a->kbase, n, (g - g0) * head_stride(j, j->kt), a->krow);
			head_rows(a->vbase, n, (g - g0) * head_stride(j, j->vt), a->vrow);
			if (j->kern.scores)
				j->kern.scores(s, KV_CHUNK, q, qs, j->group, a->krow, n, j->d, a->kpf, npf);
			else
				scores_rows(j, a, s, q, qs, n);
			softmax_chunk(j, a, h0, n, mask_row ? mask_row + c : NULL);
			if (j->kern.accum)
				j->kern.accum(acc, j->dv, s, KV_CHUNK, j->group, a->vrow, n, j->dv, a->vpf, npf);
			else
				accum_rows(j, a, acc, s, n);
		}
	}
}

static void attend_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct attn_job *j = arg;
	const int64_t nh = j->hb * j->group;
	struct attn_acc a;

	carve(j, j->scratch + tid * j->scratch_bytes, &a);
	for (int64_t it = begin; it < end; it++) {
		const int64_t i = it / (j->n_hblk * j->n_split);
		const int64_t g0 = it / j->n_split % j->n_hblk * j->hb;
		const int64_t sp = it % j->n_split;
		const int64_t vis = visible_end(j, i);
		const int64_t t0 = sp * j->split_len;
		const int64_t t1 = t0 + j->split_len < vis ? t0 + j->split_len : vis;
		const int64_t hq0 = g0 * j->group;

		attend(j, &a, i, g0, t0, t1);
		for (int64_t h = 0; h < nh; h++) {
			const float *acc = a.acc + h * j->dv;

			if (j->n_split > 1) {   /* keep the partial state for the merge */
				float *p = j->partial + ((i * j->n_split + sp) * j->hq + hq0 + h) * (j->dv + 2);

				p[0] = a.mx[h];
				p[1] = (float)a.sum[h];
				memcpy(p + 2, acc, (size_t)j->dv * sizeof(float));
				continue;
			}
			const float inv = a.sum[h] > 0.0 ? (float)(1.0 / a.sum[h]) : 0.0f;

			j->k->scale_row(out_row(j, i, hq0 + h), acc, inv, j->dv);
		}
	}
}

/* Split-K merge for (query i, head h): the ranges rescaled to their common
 * max and summed. */
static void merge_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct attn_job *j = arg;

	(void)tid;
	for (int64_t ih = begin; ih < end; ih++) {
		const int64_t i = ih / j->hq, h = ih % j->hq;
		const float *first = j->partial + (i * j->n_split * j->hq + h) * (j->dv + 2);
		const int64_t step = j->hq * (j->dv + 2);       /* from one range to the next */
		float *o = out_row(j, i, h);
		float mx = -INFINITY;
		double sum = 0.0;

		for (int64_t sp = 0; sp < j->n_split; sp++)
			mx = first[sp * step] > mx ? first[sp * step] : mx;
		memset(o, 0, (size_t)j->dv * sizeof(float));
		if (mx == -INFINITY)
			continue;       /* sees no token: zeros */
		for (int64_t sp = 0; sp < j->n_split; sp++) {
			const float *p = first + sp * step;
			const float w = p[0] == -INFINITY ? 0.0f : expf(p[0] - mx);

			if (w == 0.0f)
				continue;
			sum += (double)w * p[1];
			if (j->k->axpy_f32)
				j->k->axpy_f32(o, w, p + 2, j->dv);
			else
				for (int64_t e = 0; e < j->dv; e++)
					o[e] += w * p[2 + e];
		}
		j->k->scale_row(o, o, sum > 0.0 ? (float)(1.0 / sum) : 0.0f, j->dv);
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

/* Work items for the threads: every query with all its heads when there
 * are enough queries; else the tokens split into ranges (whole chunks, at
 * least SPLIT_MIN), and when even that is too few, the KV heads divided. */
static void choose_split(struct attn_job *j, int threads)
{
	const int64_t want = threads > 1 ? ITEMS_PER_THREAD * threads : 1;

	j->n_split = 1;
	j->n_hblk = 1;
	if (j->tq < want) {
		const int64_t by_len = j->kv_len / SPLIT_MIN;
		const int64_t by_items = (want + j->tq - 1) / j->tq;

		j->n_split = by_len < by_items ? by_len : by_items;
		j->n_split = j->n_split > 1 ? j->n_split : 1;
	}
	if (j->tq * j->n_split < want) {
		const int64_t need = (want + j->tq * j->n_split - 1) / (j->tq * j->n_split);

		j->n_hblk = j->hkv;
		for (int64_t b = need; b < j->hkv; b++)
			if (j->hkv % b == 0) {
				j->n_hblk = b;
				break;
			}
	}
	j->hb = j->hkv / j->n_hblk;
	j->split_len = (j->kv_len + j->n_split - 1) / j->n_split;
	j->split_len = (j->split_len + KV_CHUNK - 1) / KV_CHUNK * KV_CHUNK;
	j->n_split = (j->kv_len + j->split_len - 1) / j->split_len;
	j->n_split = j->n_split > 1 ? j->n_split : 1;
}

gllmk_status cpu_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t block_table,
			   const gllmk_attention_params *p)
{
	struct cpu_state *s = st;
	const int paged = block_table != NULL;
	const int threads = cpu_pool_threads(s->pool);
	struct attn_job j = {
		.k = s->k,
		.kern = { s->k->attn[k->dtype].scores, s->k->attn[v->dtype].accum },
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
	j.scratch_bytes = carve(&j, NULL, NULL);

	const int64_t items = j.tq * j.n_hblk * j.n_split;
	const int64_t partial = j.n_split > 1 ? j.tq * j.n_split * j.hq * (j.dv + 2) * (int64_t)sizeof(float) : 0;
	const size_t bytes = (size_t)(threads * j.scratch_bytes + partial);
	char *buf = aligned_alloc(64, (size_t)round64((int64_t)bytes));

	if (!buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_attention: %zu bytes of scratch", bytes);
	j.scratch = buf;
	j.partial = (float *)(buf + threads * j.scratch_bytes);
	cpu_pool_run(s->pool, items, 1, attend_task, &j);
	if (j.n_split > 1)
		cpu_pool_run(s->pool, j.tq * j.hq, 1, merge_task, &j);
	free(buf);
	return GLLMK_OK;
}
