/* Fused attention (attention.cl): gllmk_attention, gllmk_attention_ext and
 * gllmk_attention_varlen are one kernel per k/v dtype. Index data is
 * checked on the host first (blocking reads, SPEC/OPENCL.md), so a bad
 * entry is GLLMK_E_BOUNDS from the call itself: the block table pages
 * kv_len uses, and for varlen cu_q, kv_len and each sequence's pages,
 * naming the sequence. */
#include <math.h>
#include <stdlib.h>

#include "ocl_dtypes.h"
#include "../gpu_common/gpu_common.h"

/* Decode-shaped calls (few rows x heads) over long KV split each (row,
 * head)'s tokens over up to OCL_ATTN_MAX_SPLITS work-items, at least
 * OCL_ATTN_SPLIT_TOKENS each, until OCL_ATTN_FILL_ITEMS work-items run;
 * attention_merge combines the splits' partial records. */
#define OCL_ATTN_FILL_ITEMS 1024
#define OCL_ATTN_SPLIT_TOKENS 256
#define OCL_ATTN_MAX_SPLITS 64

/* One call as the kernel sees it. */
struct attn_call {
	const char *fn;  /* the public function, for messages */
	gllmk_t out, q, k, v, mask, bt, sinks, cu_q, kv_len;
	gllmk_attention_ext_params p;
	int paged;
	int64_t kv_len_one; /* the single-sequence ops' kv_len */
	int64_t max_kv_len; /* over the sequences */
};

static gllmk_status check_table(struct ocl_ctx *s, const char *fn, gllmk_t table, int64_t pages, int64_t nblk)
{
	int32_t *ids = malloc((size_t)pages * sizeof(int32_t));
	gllmk_status st;

	if (!ids)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s: no host memory for the block table", fn);
	st = ocl_read_i32(s, fn, table, pages, ids);
	for (int64_t i = 0; st == GLLMK_OK && i < pages; i++)
		if (ids[i] < 0 || ids[i] >= nblk)
			st = s->host->set_error(GLLMK_E_BOUNDS, "%s: block_table[%lld] = %d, k and v have %lld blocks", fn,
						(long long)i, ids[i], (long long)nblk);
	free(ids);
	return st;
}

/* cu_q, kv_len and block_tables read to the host and checked. */
static gllmk_status check_varlen(struct ocl_ctx *s, struct attn_call *a)
{
	int64_t S = a->kv_len->shape[0], rows = a->q->shape[0];
	int64_t row_words = a->bt->stride[0] / 4, table_words = (S - 1) * row_words + a->bt->shape[1];
	int32_t *cu = malloc((size_t)(2 * S + 1 + table_words) * sizeof(int32_t));
	int32_t *len = cu + S + 1, *table = len + S;
	gllmk_status st;

	if (!cu)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s: no host memory for the index data", a->fn);
	st = ocl_read_i32(s, a->fn, a->cu_q, S + 1, cu);
	if (!st)
		st = ocl_read_i32(s, a->fn, a->kv_len, S, len);
	if (!st)
		st = ocl_read_i32(s, a->fn, a->bt, table_words, table);
	if (!st) {
		const struct gpu_varlen v = {
			.fn = a->fn, .seqs = S, .rows = rows, .page = a->k->shape[1], .blocks = a->k->shape[0],
			.pages = a->bt->shape[1],
			.mask_cols = a->mask ? a->mask->shape[a->mask->ndim - 1] : INT64_MAX,
			.cu_q = cu, .kv_len = len, .tables = table, .table_words = row_words,
		};
		st = gpu_check_varlen(s->host, &v);
	}
	for (int64_t i = 0; !st && i < S; i++)
		a->max_kv_len = len[i] > a->max_kv_len ? len[i] : a->max_kv_len;
	free(cu);
	return st;
}

/* Byte strides of a k or v tensor: per block, per token slot, per head. */
static void kv_strides(gllmk_t t, int paged, struct ocl_args *args)
{
	ocl_arg_mem(args, ocl_mem(t));
	ocl_arg_long(args, (int64_t)t->offset);
	ocl_arg_long(args, paged ? t->stride[0] : 0);
	ocl_arg_long(args, t->stride[paged ? 1 : 0]);
	ocl_arg_long(args, t->stride[paged ? 2 : 1]);
}

/* A buffer argument that may be absent: mem and offset (q's, unread). */
static void opt_mem(struct ocl_args *args, gllmk_t t, gllmk_t stand_in)
{
	ocl_arg_mem(args, ocl_mem(t ? t : stand_in));
	ocl_arg_long(args, t ? (int64_t)t->offset : 0);
}

/* How many work-items share each (row, head)'s tokens. */
static int64_t attention_splits(int64_t items, int64_t max_kv_len)
{
	int64_t n = max_kv_len / OCL_ATTN_SPLIT_TOKENS;

	if (items >= OCL_ATTN_FILL_ITEMS || n < 2)
		return 1;
	if (n > OCL_ATTN_MAX_SPLITS)
		n = OCL_ATTN_MAX_SPLITS;
	if (n > (OCL_ATTN_FILL_ITEMS + items - 1) / items)
		n = (OCL_ATTN_FILL_ITEMS + items - 1) / items;
	return n;
}

/* The second pass of a split call: partial records -> out. */
static gllmk_status attention_merge(struct ocl_ctx *s, const struct attn_call *a, cl_mem part, int64_t splits)
{
	gllmk_t out = a->out;
	int64_t rows = out->shape[0], hq = out->shape[1], dv = out->shape[2];
	struct ocl_args args = ocl_args(s, OCL_KERNEL_ATTENTION_MERGE);

	ocl_arg_mem(&args, ocl_mem(out));
	ocl_arg_long(&args, (int64_t)out->offset);
	ocl_arg_long(&args, out->stride[0]);
	ocl_arg_long(&args, out->stride[1]);
	ocl_arg_mem(&args, part);
	opt_mem(&args, a->sinks, a->q);
	ocl_arg_long(&args, a->sinks ? a->sinks->stride[0] : 0);
	ocl_arg_int(&args, a->sinks != NULL);
	ocl_arg_long(&args, splits);
	ocl_arg_long(&args, rows);
	ocl_arg_long(&args, hq);
	ocl_arg_long(&args, dv);
	return ocl_launch(&args, a->fn, (uint64_t)(rows * hq * dv));
}

static gllmk_status attention_launch(struct ocl_ctx *s, const struct attn_call *a)
{
	gllmk_t q = a->q, k = a->k, out = a->out, mask = a->mask;
	int64_t rows = q->shape[0], hq = q->shape[1], d = q->shape[2], dv = out->shape[2];
	int64_t hkv = k->shape[a->paged ? 2 : 1];
	int varlen = a->cu_q != NULL;
	float scale = a->p.scale != 0.0f ? a->p.scale : (float)(1.0 / sqrt((double)d));
	/* ggml's ALiBi constants; the kernel raises m0 or m1 per head */
	int64_t n_head_log2 = (int64_t)1 << (int)floor(log2((double)hq));
	float m0 = powf(2.0f, -a->p.max_bias / (float)n_head_log2);
	float m1 = powf(2.0f, -(a->p.max_bias / 2.0f) / (float)n_head_log2);
	struct ocl_args args = ocl_args(s, ocl_kv_kernels[k->dtype].attention);
	int64_t splits = attention_splits(rows * hq, a->max_kv_len);
	cl_mem part = NULL; /* the splits' partial records; released below, kept by OpenCL until done */
	gllmk_status rc;

	if (splits > 1) {
		cl_int err;

		part = s->api.clCreateBuffer(s->ctx, CL_MEM_READ_WRITE,
					     (size_t)(rows * hq * splits * (dv + 2)) * sizeof(float), NULL, &err);
		if (err != CL_SUCCESS)
			return ocl_fail(s, a->fn, "clCreateBuffer", err);
	}

	ocl_arg_mem(&args, ocl_mem(out));
	ocl_arg_long(&args, (int64_t)out->offset);
	ocl_arg_long(&args, out->stride[0]);
	ocl_arg_long(&args, out->stride[1]);
	ocl_arg_mem(&args, ocl_mem(q));
	ocl_arg_long(&args, (int64_t)q->offset);
	ocl_arg_long(&args, q->stride[0]);
	ocl_arg_long(&args, q->stride[1]);
	kv_strides(k, a->paged, &args);
	kv_strides(a->v, a->paged, &args);
	/* mask: [rows, cols] shared by the heads, or [Hq, rows, cols] */
	opt_mem(&args, mask, q);
	ocl_arg_long(&args, mask ? mask->stride[mask->ndim - 2] : 0);
	ocl_arg_long(&args, mask && mask->ndim == 3 ? mask->stride[0] : 0);
	ocl_arg_int(&args, mask != NULL);
	opt_mem(&args, a->bt, q);
	ocl_arg_long(&args, a->bt && a->bt->ndim == 2 ? a->bt->stride[0] : 0);
	ocl_arg_int(&args, a->paged);
	ocl_arg_long(&args, a->paged ? k->shape[1] : 1);
	ocl_arg_long(&args, a->paged ? k->shape[0] : 1);
	opt_mem(&args, a->cu_q, q);
	opt_mem(&args, a->kv_len, q);
	ocl_arg_int(&args, varlen);
	ocl_arg_long(&args, varlen ? a->kv_len->shape[0] : 1);
	opt_mem(&args, a->sinks, q);
	ocl_arg_long(&args, a->sinks ? a->sinks->stride[0] : 0);
	ocl_arg_int(&args, a->sinks != NULL);
	ocl_arg_mem(&args, part ? part : ocl_mem(q));
	ocl_arg_long(&args, splits);
	ocl_arg_long(&args, rows);
	ocl_arg_long(&args, hq);
	ocl_arg_long(&args, hq / hkv);
	ocl_arg_long(&args, d);
	ocl_arg_long(&args, dv);
	ocl_arg_long(&args, rows);
	ocl_arg_long(&args, a->kv_len_one);
	ocl_arg_int(&args, a->p.causal);
	ocl_arg_float(&args, scale);
	ocl_arg_float(&args, a->p.softcap);
	ocl_arg_float(&args, m0);
	ocl_arg_float(&args, m1);
	ocl_arg_long(&args, n_head_log2);
	ocl_arg_int(&args, a->p.max_bias > 0.0f);
	ocl_arg_long(&args, a->p.window > 0 ? a->p.window : 0);
	rc = ocl_launch(&args, a->fn, (uint64_t)(rows * hq * splits));
	if (rc == GLLMK_OK && part)
		rc = attention_merge(s, a, part, splits);
	if (part)
		s->api.clReleaseMemObject(part);
	return rc;
}

/* gllmk_attention_ext and the 1.0 slot: one sequence of Tq rows. */
static gllmk_status attention_one(struct ocl_ctx *s, struct attn_call *a)
{
	a->kv_len_one = a->p.kv_len ? a->p.kv_len : a->k->shape[0];
	a->max_kv_len = a->kv_len_one;
	if (a->paged) {
		int64_t page = a->k->shape[1];
		gllmk_status rc = check_table(s, a->fn, a->bt, (a->kv_len_one + page - 1) / page, a->k->shape[0]);

		if (rc != GLLMK_OK)
			return rc;
	}
	return attention_launch(s, a);
}

gllmk_status ocl_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t block_table,
			   const gllmk_attention_params *p)
{
	struct attn_call a = {
		.fn = "gllmk_attention",
		.out = out, .q = q, .k = k, .v = v, .mask = mask, .bt = block_table,
		.p = { .struct_size = sizeof(gllmk_attention_ext_params), .scale = p->scale, .causal = p->causal,
		       .kv_len = p->kv_len },
		.paged = block_table != NULL,
	};

	return attention_one(st, &a);
}

gllmk_status ocl_attention_ext(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t block_table,
			       gllmk_t sinks, const gllmk_attention_ext_params *p)
{
	struct attn_call a = {
		.fn = "gllmk_attention_ext",
		.out = out, .q = q, .k = k, .v = v, .mask = mask, .bt = block_table, .sinks = sinks,
		.p = *p, /* the core hands over a full struct */
		.paged = block_table != NULL,
	};

	return attention_one(st, &a);
}

gllmk_status ocl_attention_varlen(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t cu_q,
				  gllmk_t kv_len, gllmk_t block_tables, gllmk_t sinks, const gllmk_attention_ext_params *p)
{
	struct attn_call a = {
		.fn = "gllmk_attention_varlen",
		.out = out, .q = q, .k = k, .v = v, .mask = mask, .bt = block_tables, .sinks = sinks,
		.cu_q = cu_q, .kv_len = kv_len,
		.p = *p, /* the core hands over a full struct */
		.paged = 1,
	};
	gllmk_status rc;

	if (kv_len->shape[0] == 0)
		return GLLMK_OK;
	rc = check_varlen(st, &a);
	return rc != GLLMK_OK ? rc : attention_launch(st, &a);
}
