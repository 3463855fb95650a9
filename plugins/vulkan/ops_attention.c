/* Fused attention (attention.comp): online softmax, GQA/MQA, contiguous or
 * paged KV in f32, f16, bf16, q8_0 or q4_0, additive mask (shared or per
 * head), causal, sliding window, softcap, ALiBi, sinks.
 *
 * gllmk_attention, gllmk_attention_ext and gllmk_attention_varlen are one
 * dispatch of one shader: every call is described as S sequences (S = 1
 * but for varlen). The per-call index data (cu_q, kv_len, ALiBi slopes,
 * sinks) reaches the shader through the context's scratch buffer in stream
 * order: a 128-byte push block cannot hold it, and the 7 bindings are
 * taken by out, q, k, v, mask and the block table(s).
 *
 * Index data is checked on the host before the dispatch, so a bad entry is
 * GLLMK_E_BOUNDS from the call itself: the block table pages kv_len uses
 * (vk_find_bad_index), and for varlen cu_q, kv_len and each sequence's
 * pages, naming the sequence. The shader clamps a bad block id to 0 and
 * flags it too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vk_plugin.h"
#include "../gpu_common/gpu_common.h"

#define VK_ATTN_DV_SLICE 256 /* output dims per workgroup (64 threads x 4) */
/* Decode-shaped calls (few rows x heads) over long KV split the tokens over
 * up to VK_ATTN_MAX_SPLITS workgroups per (row, head), at least
 * VK_ATTN_SPLIT_TOKENS each, until VK_ATTN_FILL_GROUPS workgroups run;
 * a second pass (attention_merge) combines the splits. */
#define VK_ATTN_FILL_GROUPS 256
#define VK_ATTN_SPLIT_TOKENS 512
#define VK_ATTN_MAX_SPLITS 32

enum { F_MASK = 1, F_CAUSAL = 2, F_PAGED = 4, F_SINKS = 8, F_ALIBI = 16 };

struct attention_push {
	uint32_t rows, Hq, D, Dv;
	uint32_t group, S, flags, B;
	uint32_t nblk;
	float scale, softcap;
	uint32_t window;
	uint32_t qo, qs0, qs1;
	uint32_t oo, os0, os1;
	uint32_t ko, ks0, ks1, ks2;
	uint32_t vo, vs0, vs1, vs2;
	uint32_t mo, ms0, msh;
	uint32_t bto, bts;
	uint32_t splits;
};
_Static_assert(sizeof(struct attention_push) <= VK_PUSH_BYTES, "push constants");

/* One attention call as the shader sees it. */
struct attn_call {
	const char *fn;            /* the public function, for messages */
	gllmk_t out, q, k, v, mask, bt, sinks;
	gllmk_attention_ext_params p;
	bool paged;
	uint32_t S;
	int32_t *idx;              /* host words: cu_q [S+1], kv_len [S], slopes [Hq] */
	int32_t max_kv_len;        /* over the sequences */
};

/* ALiBi slope of head h, exactly as ggml computes it (powf of m0, m1). */
static float alibi_slope(float max_bias, uint32_t n_head, uint32_t h)
{
	uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)n_head));
	float m0 = powf(2.0f, -max_bias / (float)n_head_log2);
	float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);

	return h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - n_head_log2) + 1));
}

/* Writes the index words to scratch and copies the sinks after them;
 * partial_bytes more follow for a split call's partial results. */
static gllmk_status upload_index(struct vk_ctx *c, const struct attn_call *a, uint32_t Hq, uint64_t partial_bytes)
{
	uint64_t words = 2u * a->S + 1u + Hq;
	uint64_t bytes = 4u * (words + (a->sinks ? Hq : 0)) + partial_bytes;
	gllmk_status st = vk_scratch(c, bytes);

	for (uint64_t off = 0; !st && off < 4u * words; off += VK_UPDATE_MAX) {
		uint64_t n = 4u * words - off < VK_UPDATE_MAX ? 4u * words - off : VK_UPDATE_MAX;
		st = vk_record_update(c, c->scratch, off, (const char *)a->idx + off, n);
	}
	if (st || !a->sinks)
		return st;
	struct vk_buf *sb = a->sinks->buf->impl;
	if (a->sinks->stride[0] == 4)
		return vk_record_copy(c, c->scratch, 4u * words, sb, a->sinks->offset, 4u * Hq);
	for (uint32_t h = 0; !st && h < Hq; h++)
		st = vk_record_copy(c, c->scratch, 4u * (words + h), sb,
				    a->sinks->offset + (uint64_t)h * (uint64_t)a->sinks->stride[0], 4);
	return st;
}

/* Byte strides of a k or v tensor: token, head (contiguous) or block,
 * slot, head (paged). */
static void kv_view(struct vk_ctx *c, struct vk_call *call, int slot, gllmk_t t, bool paged, uint32_t *v)
{
	v[0] = vk_bind(c, call, slot, t, false);
	v[1] = (uint32_t)t->stride[0];
	v[2] = (uint32_t)t->stride[1];
	v[3] = paged ? (uint32_t)t->stride[2] : 0;
}

/* How many workgroups share each (row, head, slice)'s tokens. */
static uint32_t attention_splits(uint64_t groups, int32_t max_kv_len)
{
	uint64_t n = max_kv_len / VK_ATTN_SPLIT_TOKENS;

	if (groups >= VK_ATTN_FILL_GROUPS || n < 2)
		return 1;
	if (n > VK_ATTN_MAX_SPLITS)
		n = VK_ATTN_MAX_SPLITS;
	if (n > (VK_ATTN_FILL_GROUPS + groups - 1) / groups)
		n = (VK_ATTN_FILL_GROUPS + groups - 1) / groups;
	return (uint32_t)n;
}

/* Records the dispatch(es) of a call whose index data is checked and in
 * a->idx (its slopes are filled here). */
static gllmk_status attention_dispatch(struct vk_ctx *c, struct attn_call *a)
{
	struct vk_call call = { 0 };
	gllmk_t q = a->q, k = a->k, out = a->out, mask = a->mask;
	uint32_t Hkv = (uint32_t)k->shape[a->paged ? 2 : 1];
	struct attention_push p = {
		.rows = (uint32_t)q->shape[0],
		.Hq = (uint32_t)q->shape[1],
		.D = (uint32_t)q->shape[2],
		.Dv = (uint32_t)out->shape[2],
		.S = a->S,
		.flags = (mask ? F_MASK : 0) | (a->p.causal ? F_CAUSAL : 0) | (a->paged ? F_PAGED : 0) |
			 (a->sinks ? F_SINKS : 0) | (a->p.max_bias > 0.0f ? F_ALIBI : 0),
		.B = a->paged ? (uint32_t)k->shape[1] : 0,
		.nblk = a->paged ? (uint32_t)k->shape[0] : 0,
		.scale = a->p.scale != 0.0f ? a->p.scale : (float)(1.0 / sqrt((double)q->shape[2])),
		.softcap = a->p.softcap,
		.window = a->p.window > 0 ? (uint32_t)a->p.window : 0,
	};
	uint32_t kv[4], vv[4];

	uint32_t slices = (p.Dv + VK_ATTN_DV_SLICE - 1) / VK_ATTN_DV_SLICE;
	uint64_t groups = (uint64_t)p.rows * p.Hq * slices;

	p.group = p.Hq / Hkv;
	p.splits = c->attn_split ? attention_splits(groups, a->max_kv_len) : 1;
	for (uint32_t h = 0; h < p.Hq; h++) {
		float slope = a->p.max_bias > 0.0f ? alibi_slope(a->p.max_bias, p.Hq, h) : 0.0f;
		memcpy(&a->idx[2 * a->S + 1 + h], &slope, 4);
	}
	uint64_t partial_bytes = p.splits > 1 ? 4u * (uint64_t)p.rows * p.Hq * p.splits * (p.Dv + 2u) : 0;
	gllmk_status st = upload_index(c, a, p.Hq, partial_bytes);
	if (st)
		return st;

	p.oo = vk_bind(c, &call, 0, out, true);
	p.os0 = (uint32_t)out->stride[0];
	p.os1 = (uint32_t)out->stride[1];
	p.qo = vk_bind(c, &call, 1, q, false);
	p.qs0 = (uint32_t)q->stride[0];
	p.qs1 = (uint32_t)q->stride[1];
	kv_view(c, &call, 2, k, a->paged, kv);
	kv_view(c, &call, 3, a->v, a->paged, vv);
	p.ko = kv[0], p.ks0 = kv[1], p.ks1 = kv[2], p.ks2 = kv[3];
	p.vo = vv[0], p.vs0 = vv[1], p.vs1 = vv[2], p.vs2 = vv[3];
	if (mask) {
		/* [rows, cols] shared by the heads, or [Hq, rows, cols] */
		p.mo = vk_bind(c, &call, 4, mask, false);
		p.ms0 = (uint32_t)mask->stride[mask->ndim - 2];
		p.msh = mask->ndim == 3 ? (uint32_t)mask->stride[0] : 0;
	}
	if (a->paged) {
		p.bto = vk_bind(c, &call, 5, a->bt, false);
		p.bts = a->bt->ndim == 2 ? (uint32_t)a->bt->stride[0] : 0;
	}
	vk_bind_buf(&call, 6, c->scratch, p.splits > 1); /* a split call writes its partials there */
	const struct vk_kv_kernels *kk = &vk_kv_kernels[k->dtype];
	st = vk_dispatch(c, vk_pick(c, kk->attention, kk->attention_sg), &call, &p, sizeof(p), groups * p.splits);
	if (st || p.splits == 1)
		return st;
	struct vk_call merge = { 0 };
	vk_bind(c, &merge, 0, out, true);
	vk_bind_buf(&merge, 6, c->scratch, false);
	return vk_dispatch(c, VK_KERNEL_ATTENTION_MERGE, &merge, &p, sizeof(p), (uint64_t)p.rows * p.Hq);
}

/* gllmk_attention_ext and the 1.0 slot: one sequence of Tq rows. */
static gllmk_status attention_one(struct vk_ctx *c, struct attn_call *a)
{
	gllmk_t k = a->k;
	uint32_t Hq = (uint32_t)a->q->shape[1];
	uint32_t kv_len = a->p.kv_len ? (uint32_t)a->p.kv_len : (uint32_t)k->shape[0];

	if (a->paged) {
		uint32_t B = (uint32_t)k->shape[1], nblk = (uint32_t)k->shape[0];
		int32_t value;
		int64_t bad = vk_find_bad_index(c, a->bt, (kv_len + B - 1) / B, nblk, &value);

		if (bad >= 0)
			return c->host->set_error(GLLMK_E_BOUNDS, "%s: block_table[%lld] = %d, k has %u blocks", a->fn,
						  (long long)bad, value, nblk);
	}
	a->S = 1;
	a->idx = calloc(3 + Hq, sizeof(int32_t));
	if (!a->idx)
		return c->host->set_error(GLLMK_E_NO_MEMORY, "%s: no host memory", a->fn);
	a->idx[0] = 0;
	a->idx[1] = (int32_t)a->q->shape[0];
	a->idx[2] = (int32_t)kv_len;
	a->max_kv_len = (int32_t)kv_len;
	gllmk_status st = attention_dispatch(c, a);
	free(a->idx);
	return st;
}

gllmk_status vk_attention_ext(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t bt,
			      gllmk_t sinks, const gllmk_attention_ext_params *p)
{
	struct attn_call a = {
		.fn = "gllmk_attention_ext",
		.out = out, .q = q, .k = k, .v = v, .mask = mask, .bt = bt, .sinks = sinks,
		.p = *p, /* the core hands over a full struct */
		.paged = bt != NULL,
	};

	return attention_one(st, &a);
}

/* The 1.0 slot: attention_ext with its defaults. */
gllmk_status vk_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t bt,
			  const gllmk_attention_params *ap)
{
	struct attn_call a = {
		.fn = "gllmk_attention",
		.out = out, .q = q, .k = k, .v = v, .mask = mask, .bt = bt,
		.p = { .struct_size = sizeof(gllmk_attention_ext_params), .scale = ap->scale, .causal = ap->causal,
		       .kv_len = ap->kv_len },
		.paged = bt != NULL,
	};

	return attention_one(st, &a);
}

/* ------------------------------------------------------------ varlen */

/* cu_q, kv_len and the pages each sequence uses, read to the host and
 * checked: GLLMK_E_BOUNDS names the sequence. */
static gllmk_status check_varlen(struct vk_ctx *c, struct attn_call *a, gllmk_t cu_q, gllmk_t kv_len)
{
	gllmk_t bt = a->bt;
	uint32_t S = a->S, rows = (uint32_t)a->q->shape[0];
	int64_t B = a->k->shape[1], nblk = a->k->shape[0], P = bt->shape[1];
	int64_t mask_cols = a->mask ? a->mask->shape[a->mask->ndim - 1] : INT64_MAX;
	int32_t *cu = a->idx, *len = a->idx + S + 1;
	uint64_t bt_bytes = (uint64_t)(S - 1) * (uint64_t)bt->stride[0] + 4u * (uint64_t)P;
	int32_t *table = malloc(bt_bytes);
	gllmk_status st;

	if (!table)
		return c->host->set_error(GLLMK_E_NO_MEMORY, "%s: no host memory for the block tables", a->fn);
	st = vk_read_raw(c, cu_q->buf->impl, cu_q->offset, cu, 4u * (S + 1));
	if (!st)
		st = vk_read_raw(c, kv_len->buf->impl, kv_len->offset, len, 4u * S);
	if (!st)
		st = vk_read_raw(c, bt->buf->impl, bt->offset, table, bt_bytes);
	if (!st) {
		const struct gpu_varlen v = {
			.fn = a->fn, .seqs = S, .rows = rows, .page = B, .blocks = nblk, .pages = P,
			.mask_cols = mask_cols, .cu_q = cu, .kv_len = len, .tables = table,
			.table_words = bt->stride[0] / 4,
		};
		st = gpu_check_varlen(c->host, &v);
	}
	free(table);
	return st;
}

gllmk_status vk_attention_varlen(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t cu_q,
				 gllmk_t kv_len, gllmk_t block_tables, gllmk_t sinks,
				 const gllmk_attention_ext_params *p)
{
	struct vk_ctx *c = st;
	struct attn_call a = {
		.fn = "gllmk_attention_varlen",
		.out = out, .q = q, .k = k, .v = v, .mask = mask, .bt = block_tables, .sinks = sinks,
		.p = *p, /* the core hands over a full struct */
		.paged = true,
		.S = (uint32_t)kv_len->shape[0],
	};
	uint32_t Hq = (uint32_t)q->shape[1];
	gllmk_status s;

	if (a.S == 0)
		return GLLMK_OK;
	a.idx = calloc(2u * a.S + 1u + Hq, sizeof(int32_t));
	if (!a.idx)
		return c->host->set_error(GLLMK_E_NO_MEMORY, "%s: no host memory", a.fn);
	s = check_varlen(c, &a, cu_q, kv_len);
	for (uint32_t i = 0; !s && i < a.S; i++)
		if (a.idx[a.S + 1 + i] > a.max_kv_len)
			a.max_kv_len = a.idx[a.S + 1 + i];
	if (!s)
		s = attention_dispatch(c, &a);
	free(a.idx);
	return s;
}
