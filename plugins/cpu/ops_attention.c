/* gllmk_attention, gllmk_attention_ext, gllmk_attention_varlen: fused
 * attention with online softmax (SPEC/OPERATORS.md). One engine serves the
 * three slots: attention is attention_ext with the options off, and
 * attention_ext is attention_varlen with one sequence (a contiguous or a
 * paged cache).
 *
 * A work item is one query of one sequence (in a prompt, PROMPT_BLOCK
 * consecutive queries), a block of KV heads (with the
 * Hq/Hkv query heads of each, its GQA group) and a range of tokens. Tokens
 * are taken a chunk at a time (KV_CHUNK, a prompt KV_CHUNK_PROMPT); for each KV head of the block, the chunk's
 * scores for the whole group (one kernel call), the score options (scale,
 * softcap, ALiBi, then the mask inside the softmax row kernels), the
 * chunk's max and one rescale of each head's running (max, sum, acc), the
 * weights exp(s - max), then the weighted V rows added for the whole group
 * (one kernel call); a prompt's block of queries has the scores of all
 * its queries × the group's heads in one call (scores_t, the queries as a
 * panel built once per work item). The chunk kernels (cpu_cntx.h, attn)
 * read each K and V row once per group, in place, decoding
 * f16/bf16/q8_0/q4_0 in registers;
 * without them the framework composes the row kernels. Causal and window
 * only bound the token range a query walks. No Tq×Tkv matrix exists
 * anywhere.
 *
 * Decoding (few queries) is memory-bound: an item then takes every KV head,
 * so that a thread streams whole [tokens, Hkv, D] blocks of the cache in
 * address order, and a sequence's tokens are split into ranges (split-K)
 * whose partial (max, sum, acc) are merged afterwards. The ranges are sized
 * from the whole call's work (Σ queries × tokens seen), so a batch of decode
 * sequences of different lengths is cut into pieces of about equal cost:
 * the call costs the sum of their KV bytes spread over the threads. Only
 * when that gives too few items are the heads divided between items. The
 * next chunk's rows are prefetched while the current one is worked on.
 * Scores and acc are f32; the running sums are double. A sink joins the
 * denominator when a query's output is finished.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_plugin.h"
#include "cpu_view.h"
#include "quant_blocks.h"

/* Tokens a chunk: KV_CHUNK for a sequence of few queries (decoding: its
 * rows stream from DRAM and the next chunk's are prefetched, which must
 * stay well inside L2), KV_CHUNK_PROMPT for one of PROMPT_QUERIES or more,
 * whose rows its queries share from the caches: the per-chunk work (row
 * tables, max, rescale, three kernel calls a head) spread over 4x the
 * tokens ran a 1B layer's 512-token causal attention 1.095x faster on
 * Zen 3, where the same chunks cut decode's KV read rate almost in half
 * (BENCHMARKS.md, "Session 20"). */
#define KV_CHUNK 32
#define KV_CHUNK_PROMPT 128
#define PROMPT_QUERIES 8
/* Queries a work item of a prompt (a sequence of PROMPT_QUERIES or more,
 * one token range, no window): each chunk's K and V rows, read from L2 or
 * L3, then serve PROMPT_BLOCK queries from L1, and its row tables are
 * built once for them. */
#define PROMPT_BLOCK 8
#define SPLIT_MIN 256           /* tokens per split range, at least */
#define ITEMS_PER_THREAD 2      /* what the split aims for, for balance */
#define CACHE_LINE 64

/* One sequence of the call (attention_ext: the only one). */
struct attn_seq {
	int64_t q0, tq;                 /* its query rows [q0, q0 + tq) of q and out */
	int64_t kv_len;
	const int32_t *bt;              /* its block table row, NULL when contiguous */
	int64_t lo, hi;                 /* the tokens some query of it sees */
	int64_t n_split, split_len;     /* its token ranges */
	int64_t chunk;                  /* tokens a chunk: KV_CHUNK or KV_CHUNK_PROMPT */
	int64_t qb;                     /* queries a work item: PROMPT_BLOCK or 1 */
	int64_t item0;                  /* its first work item */
	int64_t part0, pq0;             /* split-K: its first partial slot, its first merged query */
};

struct attn_job {
	const struct cpu_cntx *k;
	struct cpu_attn_kernel kern;    /* scores for k's dtype, accum for v's */
	const gllmk_tensor *out, *q, *kt, *vt;
	const char *mask;               /* NULL or its first byte */
	int64_t mask_hs, mask_rs;       /* bytes from one head's mask to the next (0: shared), one row's */
	const float *sinks;             /* NULL or [hq] */
	const float *slopes;            /* ALiBi: NULL or [hq] */
	int64_t hq, hkv, group, d, dv, page;
	int64_t krow_bytes, vrow_bytes; /* one head's K row, V row */
	float scale, softcap;
	int causal;
	int64_t window;
	const struct attn_seq *seq;
	int64_t n_seq, items, n_merge;
	int64_t hb, n_hblk;             /* KV heads per item, blocks of them */
	int64_t qb;                     /* the most queries an item of the call has */
	char *scratch;                  /* per thread */
	int64_t scratch_bytes;
	float *partial;                 /* split-K: per (slot, head) max, sum, acc[dv] */
};

/* Running state of an item's hb·group query heads. */
struct attn_acc {
	float *mx;      /* [nh] running max */
	double *sum;    /* [nh] running sum of exp(s - mx) */
	float *acc;     /* [nh][dv] running Σ exp(s - mx)·v */
	float *s;       /* [nh][KV_CHUNK_PROMPT] scores, then weights */
	const void **krow, **vrow;      /* [KV_CHUNK_PROMPT] the chunk's rows of one KV head */
	const void **kpf, **vpf;        /* [KV_CHUNK_PROMPT + hb] rows to prefetch */
	const char **kbase, **vbase;    /* [2·KV_CHUNK_PROMPT] KV head g0's rows: the chunk's, the next's */
	float *kf, *vf; /* a K and a V row decoded to f32 (fallback) */
	/* scores_t: the item's query rows as panels [hb][d][rp], their
	 * score rows [qb·group], the kernel's decoded K rows */
	float *qt, *kbuf;
	float **srow;
};

/* Rows of a scores_t panel: qb queries × the group's heads, rounded up. */
static int64_t panel_rows(const struct attn_job *j)
{
	const int64_t r = j->qb * j->group;

	return (r + CPU_ATTN_ST_ROWS - 1) / CPU_ATTN_ST_ROWS * CPU_ATTN_ST_ROWS;
}

static int64_t round64(int64_t x)
{
	return (x + 63) / 64 * 64;
}

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* Carves j->qb struct attn_acc out of p (p NULL: only sizes them): each
 * its own running state and scores, all the same row tables. */
static int64_t carve(const struct attn_job *j, char *p, struct attn_acc *a)
{
	const int64_t nh = j->hb * j->group, qb = j->qb;
	const int64_t sizes[] = {
		qb * nh * (int64_t)sizeof(double), qb * nh * (int64_t)sizeof(float),
		qb * nh * j->dv * (int64_t)sizeof(float), qb * nh * KV_CHUNK_PROMPT * (int64_t)sizeof(float),
		KV_CHUNK_PROMPT * (int64_t)sizeof(void *),
		KV_CHUNK_PROMPT * (int64_t)sizeof(void *), (KV_CHUNK_PROMPT + j->hb) * (int64_t)sizeof(void *),
		(KV_CHUNK_PROMPT + j->hb) * (int64_t)sizeof(void *), j->d * (int64_t)sizeof(float),
		j->dv * (int64_t)sizeof(float), 2 * KV_CHUNK_PROMPT * (int64_t)sizeof(void *),
		2 * KV_CHUNK_PROMPT * (int64_t)sizeof(void *),
		j->qb > 1 ? j->hb * j->d * panel_rows(j) * (int64_t)sizeof(float) : 0,
		j->qb > 1 ? CPU_ATTN_ST_TOKENS * j->d * (int64_t)sizeof(float) : 0,
		j->qb > 1 ? qb * j->group * (int64_t)sizeof(float *) : 0,
	};
	void *at[sizeof(sizes) / sizeof(sizes[0])];
	int64_t off = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		at[i] = p ? p + off : NULL;
		off += round64(sizes[i]);
	}
	for (int64_t i = 0; a && i < qb; i++)
		a[i] = (struct attn_acc){ .sum = (double *)at[0] + i * nh, .mx = (float *)at[1] + i * nh,
					  .acc = (float *)at[2] + i * nh * j->dv,
					  .s = (float *)at[3] + i * nh * KV_CHUNK_PROMPT, .krow = at[4], .vrow = at[5],
					  .kpf = at[6], .vpf = at[7], .kf = at[8], .vf = at[9], .kbase = at[10],
					  .vbase = at[11], .qt = at[12], .kbuf = at[13], .srow = at[14] };
	return off;
}

/* Bytes from one KV head's row to the next in t. */
static int64_t head_stride(const gllmk_tensor *t)
{
	return t->stride[t->ndim - 2];
}

/* base[0 .. n): the rows of KV head g0 in t for tokens [t0, t0 + n) of
 * sequence sq. A paged cache is walked page by page, without a division
 * per token. With `prefetch`, the rows of every KV head of the item (bytes
 * each) are prefetched too, all at once: the first chunk of an item, and the
 * next chunk where no chunk kernel spreads the prefetches over its work. */
static void token_rows(const struct attn_job *j, const struct attn_seq *sq, const gllmk_tensor *t, int64_t t0,
		       int64_t n, int64_t g0, const char **base, int64_t bytes, int prefetch)
{
	const int64_t hs = head_stride(t);
	const char *p = (const char *)gllmk_tensor_host(t) + g0 * hs;
	const int32_t *bt = sq->bt;

	for (int64_t tt = 0, page = bt ? t0 / j->page : 0, slot = bt ? t0 % j->page : 0; tt < n; tt++) {
		base[tt] = bt ? p + bt[page] * t->stride[0] + slot * t->stride[1] : p + (t0 + tt) * t->stride[0];
		if (bt && ++slot == j->page) {
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
	const int64_t lo = n * part / j->hb, hi = n * (part + 1) / j->hb, hs = head_stride(t);
	int64_t r = 0;

	for (int64_t tt = lo; tt < hi; tt++)
		for (int64_t g = 0; g < j->hb; g++)
			rows[r++] = base[tt] + g * hs;
	return r;
}

static const float *q_row(const struct attn_job *j, int64_t r, int64_t h)
{
	return (const float *)((const char *)gllmk_tensor_host(j->q) + r * j->q->stride[0] + h * j->q->stride[1]);
}

static float *out_row(const struct attn_job *j, int64_t r, int64_t h)
{
	return (float *)((char *)gllmk_tensor_host(j->out) + r * j->out->stride[0] + h * j->out->stride[1]);
}

/* Row r's mask for query head h from token t0 on, or NULL. */
static const float *mask_at(const struct attn_job *j, int64_t r, int64_t h, int64_t t0)
{
	if (!j->mask)
		return NULL;
	return (const float *)(j->mask + h * j->mask_hs + r * j->mask_rs) + t0;
}

/* Query i's position: its sequence's last Tq tokens are the queries. */
static int64_t query_pos(const struct attn_seq *sq, int64_t i)
{
	return sq->kv_len - sq->tq + i;
}

/* Tokens query i of sq sees: [*begin, *end) (causal bounds the end, the
 * window the beginning). */
static void visible(const struct attn_job *j, const struct attn_seq *sq, int64_t i, int64_t *begin, int64_t *end)
{
	const int64_t pos = query_pos(sq, i);

	*end = j->causal ? clamp64(pos + 1, 0, sq->kv_len) : sq->kv_len;
	*begin = j->window > 0 ? clamp64(pos - j->window + 1, 0, *end) : 0;
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
			s[h * KV_CHUNK_PROMPT + tt] = direct ? j->k->dot_f32_f16(j->d, q + h * qs, a->krow[tt])
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
			const float p = s[h * KV_CHUNK_PROMPT + tt];

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

/* The score options before the mask, in place: scale, softcap, ALiBi
 * (query position pos, tokens t0 ..). The softmax kernels then take s
 * with scale 1. */
static void shape_scores(const struct attn_job *j, float *s, int64_t n, int64_t t0, int64_t pos, int64_t h)
{
	float mul = j->scale;

	if (j->softcap > 0.0f) {
		j->k->scale_row(s, s, j->scale / j->softcap, n);
		j->k->tanh_row(s, s, n);
		mul = j->softcap;
	}
	if (!j->slopes) {
		j->k->scale_row(s, s, mul, n);
		return;
	}
	for (int64_t t = 0; t < n; t++)
		s[t] = s[t] * mul - j->slopes[h] * fabsf((float)(pos - (t0 + t)));
}

/* Each query head hq0 .. hq0 + group (local ones h0 ..) moved to its running
 * max over the chunk's scores (tokens c .. c + n of query row r at
 * position pos), which become the weights exp(s - max) (0 for excluded
 * tokens). */
static void softmax_chunk(const struct attn_job *j, struct attn_acc *a, int64_t h0, int64_t hq0, int64_t r,
			  int64_t pos, int64_t c, int64_t n)
{
	const int shaped = j->softcap > 0.0f || j->slopes;
	const float scale = shaped ? 1.0f : j->scale;

	for (int64_t h = h0; h < h0 + j->group; h++) {
		float *s = a->s + h * KV_CHUNK_PROMPT;
		const float *mask = mask_at(j, r, hq0 + h - h0, c);
		float cmax;

		if (shaped)
			shape_scores(j, s, n, c, pos, hq0 + h - h0);
		cmax = j->k->softmax_max_row(s, mask, scale, n);
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
		a->sum[h] += j->k->softmax_exp_row(s, s, mask, scale, a->mx[h], n);
	}
}

/* a->qt: the panels of queries [i, i + nq) of sq for scores_t, one per KV
 * head of the item: row q·group + h of head g's panel is query i + q's
 * head (g0 + g)·group + h, the rows past nq·group zero. */
static void query_panels(const struct attn_job *j, struct attn_acc *a, const struct attn_seq *sq, int64_t i,
			 int64_t nq, int64_t g0)
{
	const int64_t rp = panel_rows(j), rows = nq * j->group;

	for (int64_t g = 0; g < j->hb; g++) {
		float *qt = a->qt + g * j->d * rp;

		for (int64_t r = 0; r < rp; r++) {
			const float *qr = r < rows ? q_row(j, sq->q0 + i + r / j->group, (g0 + g) * j->group + r % j->group)
						   : NULL;

			for (int64_t e = 0; e < j->d; e++)
				qt[e * rp + r] = qr ? qr[e] : 0.0f;
		}
	}
}

/* The scores of KV head g (local h0 = its first query head) for every
 * query of the block at once, into each query's s (scores_t). */
static void block_scores(const struct attn_job *j, struct attn_acc *a, int64_t nq, int64_t g, int64_t h0,
			 int64_t n)
{
	const int64_t rp = panel_rows(j);

	for (int64_t r = 0; r < nq * j->group; r++)
		a->srow[r] = a[r / j->group].s + (h0 + r % j->group) * KV_CHUNK_PROMPT;
	/* the first query's accum would wait for the V rows: fetched with
	 * the scores */
	j->kern.scores_t(a->srow, nq * j->group, a->qt + g * j->d * rp, rp, a->krow, n, j->d, a->kbuf,
			 (const void *const *)a->vrow, j->vrow_bytes);
}

/* Queries [i, i + nq) of sq (nq 1, or up to qb with one t0 and each its
 * own end: a causal prompt), KV heads [g0, g0 + hb), tokens [t0, t1[q]):
 * query q's state in a[q]. A chunk's row tables are built once for them
 * and its rows read by each in turn, from L1 after the first. With
 * several queries and scores_t, the block's scores of a KV head are one
 * call (block_scores). */
static void attend(const struct attn_job *j, struct attn_acc *a, const struct attn_seq *sq, int64_t i, int64_t nq,
		   int64_t g0, int64_t t0, const int64_t *t1)
{
	const int64_t nh = j->hb * j->group, qs = j->q->stride[1] / (int64_t)sizeof(float);
	const int64_t chunk = sq->chunk;
	const int block = nq > 1 && j->kern.scores_t;
	int64_t end = t0;

	for (int64_t q = 0; q < nq; q++) {
		for (int64_t h = 0; h < nh; h++) {
			a[q].mx[h] = -INFINITY;
			a[q].sum[h] = 0.0;
		}
		memset(a[q].acc, 0, (size_t)(nh * j->dv) * sizeof(float));
		end = t1[q] > end ? t1[q] : end;
	}
	if (block)
		query_panels(j, a, sq, i, nq, g0);
	for (int64_t c = t0; c < end; c += chunk) {
		const int64_t n = end - c < chunk ? end - c : chunk;
		const int64_t left = end - (c + n);
		/* a prompt's queries share the rows from the caches: no next
		 * chunk to prefetch (its lists and the kernels' prefetch
		 * cursors cost a 1B layer's prompt attention 8 %) */
		const int64_t next = chunk == KV_CHUNK_PROMPT ? 0 : left < chunk ? left : chunk;

		token_rows(j, sq, j->kt, c, n, g0, a->kbase, j->krow_bytes, c == t0);
		token_rows(j, sq, j->vt, c, n, g0, a->vbase, j->vrow_bytes, c == t0);
		token_rows(j, sq, j->kt, c + n, next, g0, a->kbase + n, j->krow_bytes, !j->kern.scores);
		token_rows(j, sq, j->vt, c + n, next, g0, a->vbase + n, j->vrow_bytes, !j->kern.accum);
		for (int64_t g = g0; g < g0 + j->hb; g++) {
			const int64_t h0 = (g - g0) * j->group;
			const int64_t npf = ahead_rows(j, j->kt, a->kbase + n, next, g - g0, a->kpf);

			ahead_rows(j, j->vt, a->vbase + n, next, g - g0, a->vpf);
			head_rows(a->kbase, n, (g - g0) * head_stride(j->kt), a->krow);
			head_rows(a->vbase, n, (g - g0) * head_stride(j->vt), a->vrow);
			if (block)
				block_scores(j, a, nq, g - g0, h0, n);
			for (int64_t q = 0; q < nq; q++) {
				const int64_t nt = clamp64(t1[q] - c, 0, n), r = sq->q0 + i + q;
				const float *qr = q_row(j, r, g * j->group);
				struct attn_acc *aq = &a[q];
				float *sc = aq->s + h0 * KV_CHUNK_PROMPT, *acc = aq->acc + h0 * j->dv;

				if (nt == 0)
					continue;
				if (!block && j->kern.scores)
					j->kern.scores(sc, KV_CHUNK_PROMPT, qr, qs, j->group, a->krow, nt, j->d, a->kpf, npf);
				else if (!block)
					scores_rows(j, aq, sc, qr, qs, nt);
				softmax_chunk(j, aq, h0, g * j->group, r, query_pos(sq, i + q), c, nt);
				if (j->kern.accum)
					j->kern.accum(acc, j->dv, sc, KV_CHUNK_PROMPT, j->group, a->vrow, nt, j->dv, a->vpf,
						      npf);
				else
					accum_rows(j, aq, acc, sc, nt);
			}
		}
	}
}

/* out = acc / (sum + head h's sink share), all on the larger of the two
 * maxima; zeros for a query that saw no token (sink or not). out may be
 * acc. */
static void finish(const struct attn_job *j, int64_t h, float mx, double sum, const float *acc, float *out)
{
	double den = sum, corr = 1.0;

	if (mx == -INFINITY) {
		memset(out, 0, (size_t)j->dv * sizeof(float));
		return;
	}
	if (j->sinks) {
		const float sink = j->sinks[h];

		if (sink > mx) {
			corr = exp((double)mx - sink);
			den = sum * corr + 1.0;
		} else {
			den = sum + exp((double)sink - mx);
		}
	}
	j->k->scale_row(out, acc, (float)(corr / den), j->dv);
}

/* The sequence holding key, a work item (merge 0) or a split query
 * (merge 1): the last s whose first key is <= key, since an empty sequence
 * (or one without split queries) starts where the next one does. */
static const struct attn_seq *seq_of(const struct attn_job *j, int64_t key, int merge)
{
	int64_t lo = 0, hi = j->n_seq - 1;

	while (lo < hi) {
		const int64_t mid = (lo + hi + 1) / 2;
		const int64_t first = merge ? j->seq[mid].pq0 : j->seq[mid].item0;

		if (first <= key)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &j->seq[lo];
}

static void attend_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct attn_job *j = arg;
	const int64_t nh = j->hb * j->group;
	struct attn_acc a[PROMPT_BLOCK];

	carve(j, j->scratch + tid * j->scratch_bytes, a);
	for (int64_t it = begin; it < end; it++) {
		const struct attn_seq *sq = seq_of(j, it, 0);
		const int64_t local = it - sq->item0, blocks = (sq->tq + sq->qb - 1) / sq->qb;
		const int64_t b0 = local / (j->n_hblk * sq->n_split);
		/* causal: a query's work grows with i, so the last queries go
		 * first and the chunks claimed last are the light ones (a
		 * 512-token prompt's attention 8-13 % faster on 2 threads:
		 * the heaviest chunk had been the last, with one thread idle) */
		const int64_t i = (j->causal ? blocks - 1 - b0 : b0) * sq->qb;
		const int64_t nq = sq->tq - i < sq->qb ? sq->tq - i : sq->qb;
		const int64_t g0 = local / sq->n_split % j->n_hblk * j->hb;
		const int64_t sp = local % sq->n_split;
		const int64_t hq0 = g0 * j->group;
		int64_t t0 = 0, t1[PROMPT_BLOCK];

		for (int64_t q = 0; q < nq; q++) {      /* with qb > 1 every t0 is the same (no window) */
			visible(j, sq, i + q, &t0, &t1[q]);
			t0 = clamp64(sq->lo + sp * sq->split_len, t0, t1[q]);
			t1[q] = clamp64(sq->lo + (sp + 1) * sq->split_len, t0, t1[q]);
		}
		attend(j, a, sq, i, nq, g0, t0, t1);
		for (int64_t q = 0; q < nq; q++)
			for (int64_t h = 0; h < nh; h++) {
				const float *acc = a[q].acc + h * j->dv;

				if (sq->n_split > 1) {   /* keep the partial state for the merge */
					float *p = j->partial +
						   ((sq->part0 + (i + q) * sq->n_split + sp) * j->hq + hq0 + h) * (j->dv + 2);

					p[0] = a[q].mx[h];
					p[1] = (float)a[q].sum[h];
					memcpy(p + 2, acc, (size_t)j->dv * sizeof(float));
					continue;
				}
				finish(j, hq0 + h, a[q].mx[h], a[q].sum[h], acc, out_row(j, sq->q0 + i + q, hq0 + h));
			}
	}
}

/* Split-K merge for (split query m, head h): the ranges rescaled to their
 * common max and summed. */
static void merge_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct attn_job *j = arg;

	(void)tid;
	for (int64_t mh = begin; mh < end; mh++) {
		const int64_t m = mh / j->hq, h = mh % j->hq;
		const struct attn_seq *sq = seq_of(j, m, 1);
		const int64_t i = m - sq->pq0;
		const float *first = j->partial + ((sq->part0 + i * sq->n_split) * j->hq + h) * (j->dv + 2);
		const int64_t step = j->hq * (j->dv + 2);       /* from one range to the next */
		float *o = out_row(j, sq->q0 + i, h);
		float mx = -INFINITY;
		double sum = 0.0;

		for (int64_t sp = 0; sp < sq->n_split; sp++)
			mx = first[sp * step] > mx ? first[sp * step] : mx;
		memset(o, 0, (size_t)j->dv * sizeof(float));
		for (int64_t sp = 0; sp < sq->n_split && mx != -INFINITY; sp++) {
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
		finish(j, h, mx, sum, o, o);
	}
}

/* ------------------------------------------------------- the work split */

/* Work items for the threads. Every query with all its heads, and the
 * tokens a query sees split into ranges of split_len (whole chunks, at
 * least SPLIT_MIN) when a query sees more than the call's work per wanted
 * item; when even that is too few items, the KV heads divided. Fills each
 * sequence's n_split, chunk, qb, item0, part0, pq0 and the job's items. */
static void choose_split(struct attn_job *j, struct attn_seq *seq, int threads)
{
	const int64_t want = threads > 1 ? ITEMS_PER_THREAD * threads : 1;
	int64_t work = 0, items = 0, split_len = INT64_MAX, part = 0, pq = 0;

	for (int64_t s = 0; s < j->n_seq; s++)
		work += seq[s].tq * (seq[s].hi - seq[s].lo);
	if (want > 1) {
		split_len = (work + want - 1) / want;
		split_len = split_len > SPLIT_MIN ? split_len : SPLIT_MIN;
		split_len = (split_len + KV_CHUNK - 1) / KV_CHUNK * KV_CHUNK;
	}
	j->qb = 1;
	for (int64_t s = 0; s < j->n_seq; s++) {
		const int64_t len = seq[s].hi - seq[s].lo;
		/* the one place a sequence is judged a prompt: its chunk size,
		 * and its query blocks where every query of a block starts at
		 * the same token (one range, no window) */
		const int prompt = seq[s].tq >= PROMPT_QUERIES;

		seq[s].n_split = len > split_len ? (len + split_len - 1) / split_len : 1;
		seq[s].split_len = seq[s].n_split > 1 ? split_len : (len > 0 ? len : 1);
		seq[s].chunk = prompt ? KV_CHUNK_PROMPT : KV_CHUNK;
		seq[s].qb = prompt && seq[s].n_split == 1 && j->window <= 0 ? PROMPT_BLOCK : 1;
		j->qb = seq[s].qb > j->qb ? seq[s].qb : j->qb;
		items += (seq[s].tq + seq[s].qb - 1) / seq[s].qb * seq[s].n_split;
	}
	j->n_hblk = 1;
	if (items < want && items > 0) {
		const int64_t need = (want + items - 1) / items;

		j->n_hblk = j->hkv;
		for (int64_t b = need; b < j->hkv; b++)
			if (j->hkv % b == 0) {
				j->n_hblk = b;
				break;
			}
	}
	j->hb = j->hkv / j->n_hblk;
	j->items = 0;
	for (int64_t s = 0; s < j->n_seq; s++) {
		seq[s].item0 = j->items;
		seq[s].part0 = part;
		seq[s].pq0 = pq;
		j->items += (seq[s].tq + seq[s].qb - 1) / seq[s].qb * j->n_hblk * seq[s].n_split;
		if (seq[s].n_split > 1) {
			part += seq[s].tq * seq[s].n_split;
			pq += seq[s].tq;
		}
	}
	j->n_merge = pq;
}

/* ------------------------------------------------------------ the call */

/* The tokens some query of sq sees: [lo, hi). */
static void seq_range(const struct attn_job *j, struct attn_seq *sq)
{
	int64_t b, e;

	sq->lo = sq->hi = 0;
	if (sq->tq == 0)
		return;
	visible(j, sq, 0, &sq->lo, &e);
	visible(j, sq, sq->tq - 1, &b, &sq->hi);
}

/* ggml's ALiBi slopes (f32, as ggml computes them): n_log2 the largest
 * power of two <= Hq; head h < n_log2 gets m0^(h+1), the others
 * m1^(2(h - n_log2) + 1). */
static void alibi_slopes(float *slopes, int64_t hq, float max_bias)
{
	int64_t n_log2 = 1;

	while (n_log2 * 2 <= hq)
		n_log2 *= 2;

	const float m0 = powf(2.0f, -max_bias / (float)n_log2);
	const float m1 = powf(2.0f, -max_bias / 2.0f / (float)n_log2);

	for (int64_t h = 0; h < hq; h++)
		slopes[h] = h < n_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_log2) + 1));
}

/* The job of a call, less its sequences. */
static struct attn_job job_of(struct cpu_state *s, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
			      gllmk_t sinks, const gllmk_attention_ext_params *p, int paged)
{
	struct attn_job j = {
		.k = s->k,
		.kern = { .scores = s->k->attn[k->dtype].scores, .accum = s->k->attn[v->dtype].accum,
			  .scores_t = s->k->attn[k->dtype].scores_t },
		.out = out,
		.q = q,
		.kt = k,
		.vt = v,
		.sinks = sinks ? gllmk_tensor_host(sinks) : NULL,
		.hq = q->shape[1],
		.d = q->shape[2],
		.hkv = k->shape[paged ? 2 : 1],
		.dv = v->shape[paged ? 3 : 2],
		.page = paged ? k->shape[1] : 1,
		.causal = p->causal != 0,
		.softcap = p->softcap,
		.window = p->window,
	};

	j.group = j.hq / j.hkv;
	j.scale = p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)j.d);
	j.krow_bytes = cpu_row_bytes(k->dtype, j.d);
	j.vrow_bytes = cpu_row_bytes(v->dtype, j.dv);
	if (mask) {
		j.mask = gllmk_tensor_host(mask);
		j.mask_hs = mask->ndim == 3 ? mask->stride[0] : 0;
		j.mask_rs = mask->stride[mask->ndim - 2];
	}
	return j;
}

/* Splits the work over seq[0 .. n_seq) and runs it. */
static gllmk_status run_job(struct cpu_state *s, const char *fn, struct attn_job *j, struct attn_seq *seq,
			    float max_bias)
{
	const int threads = cpu_pool_threads(s->pool);
	int64_t parts = 0;

	j->seq = seq;
	for (int64_t i = 0; i < j->n_seq; i++)
		seq_range(j, &seq[i]);
	choose_split(j, seq, threads);
	j->scratch_bytes = carve(j, NULL, NULL);
	for (int64_t i = 0; i < j->n_seq; i++)
		parts += seq[i].n_split > 1 ? seq[i].tq * seq[i].n_split : 0;

	const int64_t partial = parts * j->hq * (j->dv + 2) * (int64_t)sizeof(float);
	const int64_t slopes = max_bias > 0.0f ? round64(j->hq * (int64_t)sizeof(float)) : 0;
	const size_t bytes = (size_t)(threads * j->scratch_bytes + slopes + partial);
	char *buf = aligned_alloc(64, (size_t)round64((int64_t)bytes));

	if (!buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s: %zu bytes of scratch", fn, bytes);
	j->scratch = buf;
	if (slopes) {
		alibi_slopes((float *)(buf + threads * j->scratch_bytes), j->hq, max_bias);
		j->slopes = (const float *)(buf + threads * j->scratch_bytes);
	}
	j->partial = (float *)(buf + threads * j->scratch_bytes + slopes);
	cpu_pool_run(s->pool, j->items, 1, attend_task, j);
	if (j->n_merge > 0)
		cpu_pool_run(s->pool, j->n_merge * j->hq, 1, merge_task, j);
	free(buf);
	return GLLMK_OK;
}

/* Every page the first kv_len tokens use must name a block of the cache. */
static gllmk_status check_pages(struct cpu_state *s, const char *fn, const char *what, const int32_t *bt,
				int64_t kv_len, int64_t page, int64_t n_blocks)
{
	const int64_t pages = (kv_len + page - 1) / page;

	for (int64_t p = 0; p < pages; p++)
		if (bt[p] < 0 || bt[p] >= n_blocks)
			return s->host->set_error(GLLMK_E_BOUNDS, "%s: %s%lld] = %d outside the cache's %lld blocks", fn,
						  what, (long long)p, bt[p], (long long)n_blocks);
	return GLLMK_OK;
}

/* attention and attention_ext: one sequence, contiguous or paged. */
static gllmk_status attention_one(struct cpu_state *s, const char *fn, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
				  gllmk_t mask, gllmk_t block_table, gllmk_t sinks,
				  const gllmk_attention_ext_params *p)
{
	const int paged = block_table != NULL;
	struct attn_job j = job_of(s, out, q, k, v, mask, sinks, p, paged);
	struct attn_seq seq = {
		.tq = q->shape[0],
		.kv_len = p->kv_len > 0 ? p->kv_len : k->shape[0],
		.bt = paged ? gllmk_tensor_host(block_table) : NULL,
	};

	if (paged) {
		gllmk_status st = check_pages(s, fn, "block_table[", seq.bt, seq.kv_len, j.page, k->shape[0]);

		if (st != GLLMK_OK)
			return st;
	}
	j.n_seq = 1;
	return run_job(s, fn, &j, &seq, p->max_bias);
}

gllmk_status cpu_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t block_table,
			   const gllmk_attention_params *p)
{
	const gllmk_attention_ext_params ext = {
		.struct_size = sizeof(ext), .scale = p->scale, .causal = p->causal != 0, .kv_len = p->kv_len,
	};

	return attention_one(st, "gllmk_attention", out, q, k, v, mask, block_table, NULL, &ext);
}

gllmk_status cpu_attention_ext(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
			       gllmk_t block_table, gllmk_t sinks, const gllmk_attention_ext_params *p)
{
	return attention_one(st, "gllmk_attention_ext", out, q, k, v, mask, block_table, sinks, p);
}

/* varlen's index data (SPEC/OPERATORS.md): cu_q starts at 0, never
 * decreases and ends at the row count; each kv_len fits its block table
 * row and the mask; each used page names a block. */
static gllmk_status check_varlen(struct cpu_state *s, const struct attn_seq *seq, int64_t n_seq, const int32_t *cu,
				 gllmk_t q, gllmk_t k, gllmk_t block_tables, gllmk_t mask)
{
	static const char fn[] = "gllmk_attention_varlen";
	const int64_t rows = q->shape[0], page = k->shape[1], cap = block_tables->shape[1] * page;

	if (cu[0] != 0)
		return s->host->set_error(GLLMK_E_BOUNDS, "%s: cu_q[0] = %d (must be 0)", fn, cu[0]);
	for (int64_t i = 0; i < n_seq; i++) {
		char what[64];

		if (cu[i + 1] < cu[i] || cu[i + 1] > rows)
			return s->host->set_error(GLLMK_E_BOUNDS,
						  "%s: cu_q[%lld] = %d outside [cu_q[%lld] = %d, %lld] (sequence %lld's query rows)",
						  fn, (long long)i + 1, cu[i + 1], (long long)i, cu[i], (long long)rows,
						  (long long)i);
		if (seq[i].kv_len < 0 || seq[i].kv_len > cap)
			return s->host->set_error(GLLMK_E_BOUNDS,
						  "%s: kv_len[%lld] = %lld outside [0, P * B = %lld] (sequence %lld)", fn,
						  (long long)i, (long long)seq[i].kv_len, (long long)cap, (long long)i);
		if (mask && seq[i].kv_len > mask->shape[1])
			return s->host->set_error(GLLMK_E_BOUNDS,
						  "%s: mask.shape[1] = %lld < kv_len[%lld] = %lld (sequence %lld)", fn,
						  (long long)mask->shape[1], (long long)i, (long long)seq[i].kv_len,
						  (long long)i);
		snprintf(what, sizeof(what), "sequence %lld: block_tables[%lld, ", (long long)i, (long long)i);
		if (check_pages(s, fn, what, seq[i].bt, seq[i].kv_len, page, k->shape[0]) != GLLMK_OK)
			return GLLMK_E_BOUNDS;
	}
	if (cu[n_seq] != rows)
		return s->host->set_error(GLLMK_E_BOUNDS, "%s: cu_q[%lld] = %d but q holds %lld rows (sum Tq)", fn,
					  (long long)n_seq, cu[n_seq], (long long)rows);
	return GLLMK_OK;
}

gllmk_status cpu_attention_varlen(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
				  gllmk_t cu_q, gllmk_t kv_len, gllmk_t block_tables, gllmk_t sinks,
				  const gllmk_attention_ext_params *p)
{
	struct cpu_state *s = st;
	struct attn_job j = job_of(s, out, q, k, v, mask, sinks, p, 1);
	const int32_t *cu = gllmk_tensor_host(cu_q), *len = gllmk_tensor_host(kv_len);
	const char *bt = gllmk_tensor_host(block_tables);
	struct attn_seq *seq;
	gllmk_status status;

	j.n_seq = kv_len->shape[0];
	seq = calloc((size_t)j.n_seq, sizeof(*seq));
	if (!seq)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_attention_varlen: %lld sequences",
					  (long long)j.n_seq);
	for (int64_t i = 0; i < j.n_seq; i++)
		seq[i] = (struct attn_seq){ .q0 = cu[i], .tq = (int64_t)cu[i + 1] - cu[i], .kv_len = len[i],
					    .bt = (const int32_t *)(bt + i * block_tables->stride[0]) };
	status = check_varlen(s, seq, j.n_seq, cu, q, k, block_tables, mask);
	if (status == GLLMK_OK)
		status = run_job(s, "gllmk_attention_varlen", &j, seq, p->max_bias);
	free(seq);
	return status;
}
