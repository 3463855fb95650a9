/* Bad input for gllmk_attention_ext and gllmk_attention_varlen, on a real
 * context (cpu-generic by default).
 *
 *   test_validation_attention_ext --plugin-dir DIR [--plugin NAME]
 *
 * Each case starts from a valid call (good_ext, good_paged, good_varlen),
 * changes one thing (a mutation function), makes the call and checks the
 * exact status, that gllmk_last_error() names the function and the
 * argument (a whole word), and that out still holds its poison (nothing is
 * written by a failed call). The rules every tensor argument shares (views,
 * bounds, strides) are the core's and are covered by test_validation.c;
 * these cases are what is particular to the two ops: the K/V dtypes, the
 * masks, sinks, the params struct and its scalars, the varlen index
 * tensors, and the index data only the plugin reads (GLLMK_E_BOUNDS naming
 * the sequence).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gllmk.h"

static struct {
	const char *plugin_dir;
	const char *plugin;
	gllmk_context *ctx;
} run = { .plugin = "cpu-generic" };

/* ----------------------------------------------------------------- a call */

/* The tensor arguments; A_BT is block_table (ext) or block_tables (varlen). */
enum arg { A_OUT, A_Q, A_K, A_V, A_MASK, A_BT, A_SINKS, A_CU, A_KVLEN, A_COUNT };


struct desc {
	int32_t dtype, ndim;
	int64_t shape[4];
};

struct call {
	int varlen;
	struct desc d[A_COUNT];         /* ndim 0: absent (NULL) */
	int32_t idata[3][8];            /* i32 contents of block_table, cu_q, kv_len */
	gllmk_attention_ext_params p;
	int p_null;
	int alias_out_sinks;            /* sinks placed inside out's bytes */
};

#define T(dt, ...) { .dtype = dt, .ndim = (int32_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
		     .shape = { __VA_ARGS__ } }
#define ABSENT { 0 }

static gllmk_attention_ext_params good_params(int32_t kv_len)
{
	return (gllmk_attention_ext_params){ .struct_size = sizeof(gllmk_attention_ext_params), .causal = 1,
					     .kv_len = kv_len };
}

/* Contiguous: Tq 2, Hq 4, Hkv 2, D 32, Tkv 6. */
static struct call good_ext(void)
{
	return (struct call){
		.d = { [A_OUT] = T(GLLMK_F32, 2, 4, 32), [A_Q] = T(GLLMK_F32, 2, 4, 32), [A_K] = T(GLLMK_F32, 6, 2, 32),
		       [A_V] = T(GLLMK_F32, 6, 2, 32), [A_MASK] = T(GLLMK_F32, 2, 6), [A_SINKS] = T(GLLMK_F32, 4) },
		.p = good_params(0),
	};
}

/* Paged: 3 blocks of 4 tokens, a table of 2 pages, kv_len 8. */
static struct call good_paged(void)
{
	struct call c = good_ext();

	c.d[A_K] = (struct desc)T(GLLMK_F16, 3, 4, 2, 32);
	c.d[A_V] = (struct desc)T(GLLMK_F16, 3, 4, 2, 32);
	c.d[A_MASK] = (struct desc)T(GLLMK_F32, 2, 8);
	c.d[A_BT] = (struct desc)T(GLLMK_I32, 2);
	c.idata[0][0] = 2;
	c.idata[0][1] = 0;
	c.p.kv_len = 8;
	return c;
}

/* varlen: 3 sequences of 2, 1, 3 query rows and 5, 7, 3 kv tokens over 4
 * blocks of 4 tokens; block_tables [3, 2]. */
static struct call good_varlen(void)
{
	struct call c = {
		.varlen = 1,
		.d = { [A_OUT] = T(GLLMK_F32, 6, 4, 32), [A_Q] = T(GLLMK_F32, 6, 4, 32),
		       [A_K] = T(GLLMK_Q8_0, 4, 4, 2, 32), [A_V] = T(GLLMK_Q8_0, 4, 4, 2, 32),
		       [A_MASK] = T(GLLMK_F32, 6, 7), [A_BT] = T(GLLMK_I32, 3, 2), [A_SINKS] = T(GLLMK_F32, 4),
		       [A_CU] = T(GLLMK_I32, 4), [A_KVLEN] = T(GLLMK_I32, 3) },
		.idata = { { 0, 1, 2, 3, 3, -1 }, { 0, 2, 3, 6 }, { 5, 7, 3 } },
		.p = good_params(0),
	};

	return c;
}

static int64_t numel(const struct desc *d)
{
	int64_t n = 1;

	for (int i = 0; i < d->ndim; i++)
		n *= d->shape[i];
	return n;
}

/* A buffer holding d: i32 from data, the rest small finite values (f32
 * 0.25, f16/bf16 0x3400/0x3e80, quant blocks of zero bytes but a 1.0
 * scale); out poisoned with 0xff bytes. */
static gllmk_buffer *make(const struct desc *d, const int32_t *data, int output, gllmk_tensor *t)
{
	uint64_t row = 0, bytes;
	gllmk_buffer *buf;
	unsigned char *img;

	if (gllmk_dtype_row_bytes(d->dtype, d->shape[d->ndim - 1], &row) != GLLMK_OK)
		row = (uint64_t)d->shape[d->ndim - 1] * 4;      /* an invalid row: validation will say so */
	bytes = row * (uint64_t)(numel(d) / d->shape[d->ndim - 1]);
	img = calloc(1, bytes + 64);
	assert_non_null(img);
	for (uint64_t i = 0; i < bytes + 64; i++)   /* 64 spare bytes: room for an aliased view */
		img[i] = output ? 0xff : 0;
	if (!output) {
		if (d->dtype == GLLMK_I32 && data)
			memcpy(img, data, (size_t)numel(d) * 4);
		for (int64_t i = 0; d->dtype == GLLMK_F32 && i < numel(d); i++)
			((float *)img)[i] = 0.25f;
		for (int64_t i = 0; (d->dtype == GLLMK_F16 || d->dtype == GLLMK_BF16) && i < numel(d); i++)
			((uint16_t *)img)[i] = d->dtype == GLLMK_F16 ? 0x3400 : 0x3e80;
	}
	assert_int_equal(gllmk_buffer_alloc(run.ctx, bytes + 64, &buf), GLLMK_OK);
	assert_int_equal(gllmk_buffer_write(buf, 0, img, bytes + 64), GLLMK_OK);
	free(img);
	*t = gllmk_tensor_make(buf, 0, (gllmk_dtype)d->dtype, d->ndim, d->shape);
	return buf;
}

static const int32_t *idata_of(const struct call *c, int a)
{
	return a == A_BT ? c->idata[0] : a == A_CU ? c->idata[1] : a == A_KVLEN ? c->idata[2] : NULL;
}

/* Makes the call; *out_intact says whether out's buffer still holds its
 * poison. */
static gllmk_status invoke(const struct call *c, int *out_intact)
{
	gllmk_tensor t[A_COUNT];
	gllmk_buffer *b[A_COUNT] = { 0 };
	const gllmk_tensor *tp[A_COUNT];
	gllmk_status st;

	for (int a = 0; a < A_COUNT; a++) {
		tp[a] = NULL;
		if (c->d[a].ndim > 0) {
			b[a] = make(&c->d[a], idata_of(c, a), a == A_OUT, &t[a]);
			tp[a] = &t[a];
		}
	}
	if (c->alias_out_sinks)
		t[A_SINKS] = gllmk_tensor_make(b[A_OUT], 64, GLLMK_F32, c->d[A_SINKS].ndim, c->d[A_SINKS].shape);
	if (c->varlen)
		st = gllmk_attention_varlen(run.ctx, tp[A_OUT], tp[A_Q], tp[A_K], tp[A_V], tp[A_MASK], tp[A_CU],
					    tp[A_KVLEN], tp[A_BT], tp[A_SINKS], c->p_null ? NULL : &c->p);
	else
		st = gllmk_attention_ext(run.ctx, tp[A_OUT], tp[A_Q], tp[A_K], tp[A_V], tp[A_MASK], tp[A_BT],
					 tp[A_SINKS], c->p_null ? NULL : &c->p);
	*out_intact = 1;
	if (b[A_OUT]) {
		uint64_t n = gllmk_buffer_size(b[A_OUT]);
		unsigned char *img = malloc(n);

		assert_int_equal(gllmk_buffer_read(b[A_OUT], 0, img, n), GLLMK_OK);
		for (uint64_t i = 0; i < n; i++)
			*out_intact &= img[i] == 0xff;
		free(img);
	}
	for (int a = 0; a < A_COUNT; a++)
		gllmk_buffer_free(b[a]);
	return st;
}

/* ------------------------------------------------------------- the cases */

struct vcase {
	const char *what;
	struct call (*base)(void);
	void (*mutate)(struct call *c);
	gllmk_status want;
	const char *word;       /* the message must hold it as a word ("sequence 1": as a phrase) */
};

#define MUT(name, body) \
	static void name(struct call *c) { body; }

MUT(nothing, (void)c)
MUT(out_null, c->d[A_OUT].ndim = 0)
MUT(q_null, c->d[A_Q].ndim = 0)
MUT(k_null, c->d[A_K].ndim = 0)
MUT(v_null, c->d[A_V].ndim = 0)
MUT(p_null, c->p_null = 1)
MUT(no_options, c->d[A_MASK].ndim = 0; c->d[A_SINKS].ndim = 0)
MUT(struct_size_0, c->p.struct_size = 0)
MUT(struct_size_short, c->p.struct_size = offsetof(gllmk_attention_ext_params, softcap); c->p.softcap = -1.0f)
MUT(k_i32, c->d[A_K].dtype = GLLMK_I32; c->d[A_V].dtype = GLLMK_I32)
MUT(k_q4_1, c->d[A_K].dtype = GLLMK_Q4_1; c->d[A_V].dtype = GLLMK_Q4_1)
MUT(k_q4_k, c->d[A_K].dtype = GLLMK_Q4_K; c->d[A_V].dtype = GLLMK_Q4_K)
MUT(kv_mixed, c->d[A_K].dtype = GLLMK_F16)
MUT(kv_bf16, c->d[A_K].dtype = GLLMK_BF16; c->d[A_V].dtype = GLLMK_BF16)
MUT(kv_q8_0, c->d[A_K].dtype = GLLMK_Q8_0; c->d[A_V].dtype = GLLMK_Q8_0)
MUT(kv_q4_0, c->d[A_K].dtype = GLLMK_Q4_0; c->d[A_V].dtype = GLLMK_Q4_0)
MUT(kv_q8_0_d48, c->d[A_K].dtype = GLLMK_Q8_0; c->d[A_V].dtype = GLLMK_Q8_0;
    c->d[A_K].shape[c->d[A_K].ndim - 1] = 48; c->d[A_V].shape[c->d[A_V].ndim - 1] = 48;
    c->d[A_Q].shape[2] = 48; c->d[A_OUT].shape[2] = 48)
MUT(q_f16, c->d[A_Q].dtype = GLLMK_F16)
MUT(out_bf16, c->d[A_OUT].dtype = GLLMK_BF16)
MUT(gqa_3, c->d[A_K].shape[c->d[A_K].ndim - 2] = 3; c->d[A_V].shape[c->d[A_V].ndim - 2] = 3)
MUT(d_mismatch, c->d[A_K].shape[c->d[A_K].ndim - 1] = 64)
MUT(dv_mismatch, c->d[A_V].shape[c->d[A_V].ndim - 1] = 64)
MUT(dv_64, c->d[A_V].shape[c->d[A_V].ndim - 1] = 64; c->d[A_OUT].shape[2] = 64)
MUT(mask_f16, c->d[A_MASK].dtype = GLLMK_F16)
MUT(mask_rows, c->d[A_MASK].shape[0] = 3)
MUT(mask_narrow, c->d[A_MASK].shape[c->d[A_MASK].ndim - 1] = 5)
MUT(mask_head, c->d[A_MASK] = (struct desc)T(GLLMK_F32, 4, 2, 6))
MUT(mask_head_3, c->d[A_MASK] = (struct desc)T(GLLMK_F32, 3, 2, 6))
MUT(mask_head_rows, c->d[A_MASK] = (struct desc)T(GLLMK_F32, 4, 3, 6))
MUT(mask_4d, c->d[A_MASK] = (struct desc)T(GLLMK_F32, 1, 4, 2, 6))
MUT(mask_1d, c->d[A_MASK] = (struct desc)T(GLLMK_F32, 6))
MUT(sinks_long, c->d[A_SINKS].shape[0] = 5)
MUT(sinks_f16, c->d[A_SINKS].dtype = GLLMK_F16)
MUT(sinks_2d, c->d[A_SINKS] = (struct desc)T(GLLMK_F32, 1, 4))
MUT(scale_nan, c->p.scale = NAN)
MUT(causal_2, c->p.causal = 2)
MUT(softcap_neg, c->p.softcap = -1.0f)
MUT(softcap_inf, c->p.softcap = INFINITY)
MUT(softcap_30, c->p.softcap = 30.0f)
MUT(max_bias_neg, c->p.max_bias = -8.0f)
MUT(max_bias_nan, c->p.max_bias = NAN)
MUT(max_bias_8, c->p.max_bias = 8.0f)
MUT(window_neg, c->p.window = -1)
MUT(window_4, c->p.window = 4)
MUT(reserved_1, c->p.reserved = 1)
MUT(kv_len_7, c->p.kv_len = 7)
MUT(kv_len_neg, c->p.kv_len = -1)
MUT(kv_len_0, c->p.kv_len = 0)
MUT(kv_len_9, c->p.kv_len = 9)
MUT(alias_sinks, c->alias_out_sinks = 1)
MUT(bt_2d, c->d[A_BT] = (struct desc)T(GLLMK_I32, 1, 2))
MUT(bt_f32, c->d[A_BT].dtype = GLLMK_F32)
MUT(bt_block_3, c->idata[0][1] = 3)
MUT(bt_block_neg, c->idata[0][0] = -1)
MUT(bt_unused_page, c->idata[0][1] = 99; c->p.kv_len = 4; c->d[A_MASK].shape[1] = 4)
MUT(k_3d_paged, c->d[A_K] = (struct desc)T(GLLMK_F16, 12, 2, 32); c->d[A_V] = (struct desc)T(GLLMK_F16, 12, 2, 32))
/* varlen */
MUT(cu_null, c->d[A_CU].ndim = 0)
MUT(kvlen_null, c->d[A_KVLEN].ndim = 0)
MUT(tables_null, c->d[A_BT].ndim = 0)
MUT(cu_f32, c->d[A_CU].dtype = GLLMK_F32)
MUT(cu_short, c->d[A_CU].shape[0] = 3)
MUT(kvlen_2d, c->d[A_KVLEN] = (struct desc)T(GLLMK_I32, 1, 3))
MUT(tables_1d, c->d[A_BT] = (struct desc)T(GLLMK_I32, 6))
MUT(tables_rows, c->d[A_BT].shape[0] = 2)
MUT(kv_contiguous, c->d[A_K] = (struct desc)T(GLLMK_Q8_0, 16, 2, 32); c->d[A_V] = (struct desc)T(GLLMK_Q8_0, 16, 2, 32))
MUT(vmask_3d, c->d[A_MASK] = (struct desc)T(GLLMK_F32, 4, 6, 7))
MUT(vmask_rows, c->d[A_MASK].shape[0] = 5)
MUT(v_rows, c->d[A_OUT].shape[0] = 5)
MUT(kv_len_param, c->p.kv_len = 12345)
MUT(cu0, c->idata[1][0] = 1)
MUT(cu_down, c->idata[1][2] = 1)
MUT(cu_end, c->idata[1][3] = 5)
MUT(kvlen_neg, c->idata[2][1] = -1)
MUT(kvlen_past, c->idata[2][2] = 9)
MUT(kvlen_mask, c->idata[2][0] = 8; c->idata[0][1] = 1)
MUT(tables_block, c->idata[0][2 * 2 + 0] = 4)
MUT(tables_block_neg, c->idata[0][1 * 2 + 1] = -7)
MUT(empty_seq, c->idata[1][1] = 0; c->idata[1][2] = 0; c->idata[2][0] = 0)

#define E(st) GLLMK_##st
static const struct vcase cases[] = {
	/* attention_ext, contiguous */
	{ "good call", good_ext, nothing, E(OK), NULL },
	{ "no mask, no sinks", good_ext, no_options, E(OK), NULL },
	{ "out NULL", good_ext, out_null, E(E_NULL), "out" },
	{ "q NULL", good_ext, q_null, E(E_NULL), "q" },
	{ "k NULL", good_ext, k_null, E(E_NULL), "k" },
	{ "v NULL", good_ext, v_null, E(E_NULL), "v" },
	{ "p NULL", good_ext, p_null, E(E_NULL), "p" },
	{ "struct_size 0", good_ext, struct_size_0, E(E_INVALID), "struct_size" },
	{ "short struct: fields past it read as 0", good_ext, struct_size_short, E(OK), NULL },
	{ "k, v i32", good_ext, k_i32, E(E_DTYPE), "k" },
	{ "k, v q4_1", good_ext, k_q4_1, E(E_DTYPE), "k" },
	{ "k, v q4_K", good_ext, k_q4_k, E(E_DTYPE), "k" },
	{ "k f16, v f32", good_ext, kv_mixed, E(E_DTYPE), "v" },
	{ "k, v bf16", good_ext, kv_bf16, E(OK), NULL },
	{ "k, v q8_0", good_ext, kv_q8_0, E(OK), NULL },
	{ "k, v q4_0", good_ext, kv_q4_0, E(OK), NULL },
	{ "k, v q8_0 with D 48", good_ext, kv_q8_0_d48, E(E_BLOCK), "k" },
	{ "q f16", good_ext, q_f16, E(E_DTYPE), "q" },
	{ "out bf16", good_ext, out_bf16, E(E_DTYPE), "out" },
	{ "Hq not a multiple of Hkv", good_ext, gqa_3, E(E_SHAPE), "q" },
	{ "k's D != q's", good_ext, d_mismatch, E(E_SHAPE), "k" },
	{ "v's Dv != out's", good_ext, dv_mismatch, E(E_SHAPE), "v" },
	{ "Dv != D", good_ext, dv_64, E(OK), NULL },
	{ "mask f16", good_ext, mask_f16, E(E_DTYPE), "mask" },
	{ "mask rows != Tq", good_ext, mask_rows, E(E_SHAPE), "mask" },
	{ "mask narrower than kv_len", good_ext, mask_narrow, E(E_SHAPE), "mask" },
	{ "per-head mask [Hq, Tq, cols]", good_ext, mask_head, E(OK), NULL },
	{ "per-head mask of 3 heads", good_ext, mask_head_3, E(E_SHAPE), "mask" },
	{ "per-head mask of 3 rows", good_ext, mask_head_rows, E(E_SHAPE), "mask" },
	{ "mask 4-D", good_ext, mask_4d, E(E_SHAPE), "mask" },
	{ "mask 1-D", good_ext, mask_1d, E(E_SHAPE), "mask" },
	{ "sinks of 5 heads", good_ext, sinks_long, E(E_SHAPE), "sinks" },
	{ "sinks f16", good_ext, sinks_f16, E(E_DTYPE), "sinks" },
	{ "sinks 2-D", good_ext, sinks_2d, E(E_SHAPE), "sinks" },
	{ "scale NaN", good_ext, scale_nan, E(E_INVALID), "scale" },
	{ "causal 2", good_ext, causal_2, E(E_INVALID), "causal" },
	{ "softcap < 0", good_ext, softcap_neg, E(E_INVALID), "softcap" },
	{ "softcap inf", good_ext, softcap_inf, E(E_INVALID), "softcap" },
	{ "softcap 30", good_ext, softcap_30, E(OK), NULL },
	{ "max_bias < 0", good_ext, max_bias_neg, E(E_INVALID), "max_bias" },
	{ "max_bias NaN", good_ext, max_bias_nan, E(E_INVALID), "max_bias" },
	{ "max_bias 8", good_ext, max_bias_8, E(OK), NULL },
	{ "window < 0", good_ext, window_neg, E(E_INVALID), "window" },
	{ "window 4", good_ext, window_4, E(OK), NULL },
	{ "reserved 1", good_ext, reserved_1, E(E_INVALID), "reserved" },
	{ "kv_len > Tkv", good_ext, kv_len_7, E(E_INVALID), "kv_len" },
	{ "kv_len < 0", good_ext, kv_len_neg, E(E_INVALID), "kv_len" },
	{ "out over sinks", good_ext, alias_sinks, E(E_ALIAS), "out" },
	/* attention_ext, paged */
	{ "paged good call", good_paged, nothing, E(OK), NULL },
	{ "paged kv_len 0", good_paged, kv_len_0, E(E_INVALID), "kv_len" },
	{ "paged kv_len past the table", good_paged, kv_len_9, E(E_INVALID), "kv_len" },
	{ "block_table 2-D", good_paged, bt_2d, E(E_SHAPE), "block_table" },
	{ "block_table f32", good_paged, bt_f32, E(E_DTYPE), "block_table" },
	{ "block id = nblk", good_paged, bt_block_3, E(E_BOUNDS), "block_table" },
	{ "block id < 0", good_paged, bt_block_neg, E(E_BOUNDS), "block_table" },
	{ "pages past kv_len are never read", good_paged, bt_unused_page, E(OK), NULL },
	{ "paged k 3-D", good_paged, k_3d_paged, E(E_SHAPE), "k" },
	/* attention_varlen */
	{ "varlen good call", good_varlen, nothing, E(OK), NULL },
	{ "varlen no mask, no sinks", good_varlen, no_options, E(OK), NULL },
	{ "varlen p->kv_len ignored", good_varlen, kv_len_param, E(OK), NULL },
	{ "varlen with an empty sequence", good_varlen, empty_seq, E(OK), NULL },
	{ "varlen p NULL", good_varlen, p_null, E(E_NULL), "p" },
	{ "cu_q NULL", good_varlen, cu_null, E(E_NULL), "cu_q" },
	{ "kv_len NULL", good_varlen, kvlen_null, E(E_NULL), "kv_len" },
	{ "block_tables NULL", good_varlen, tables_null, E(E_NULL), "block_tables" },
	{ "cu_q f32", good_varlen, cu_f32, E(E_DTYPE), "cu_q" },
	{ "cu_q of S entries", good_varlen, cu_short, E(E_SHAPE), "cu_q" },
	{ "kv_len 2-D", good_varlen, kvlen_2d, E(E_SHAPE), "kv_len" },
	{ "block_tables 1-D", good_varlen, tables_1d, E(E_SHAPE), "block_tables" },
	{ "block_tables of 2 rows", good_varlen, tables_rows, E(E_SHAPE), "block_tables" },
	{ "varlen k contiguous", good_varlen, kv_contiguous, E(E_SHAPE), "k" },
	{ "varlen k q4_1", good_varlen, k_q4_1, E(E_DTYPE), "k" },
	{ "varlen k, v bf16", good_varlen, kv_bf16, E(OK), NULL },
	{ "varlen mask 3-D", good_varlen, vmask_3d, E(E_SHAPE), "mask" },
	{ "varlen mask rows", good_varlen, vmask_rows, E(E_SHAPE), "mask" },
	{ "varlen out rows", good_varlen, v_rows, E(E_SHAPE), "out" },
	{ "varlen softcap < 0", good_varlen, softcap_neg, E(E_INVALID), "softcap" },
	{ "varlen window < 0", good_varlen, window_neg, E(E_INVALID), "window" },
	{ "varlen sinks of 5 heads", good_varlen, sinks_long, E(E_SHAPE), "sinks" },
	{ "varlen out over sinks", good_varlen, alias_sinks, E(E_ALIAS), "out" },
	{ "cu_q[0] = 1", good_varlen, cu0, E(E_BOUNDS), "cu_q" },
	{ "cu_q decreasing", good_varlen, cu_down, E(E_BOUNDS), "sequence 1" },
	{ "cu_q[S] != sum Tq", good_varlen, cu_end, E(E_BOUNDS), "cu_q" },
	{ "kv_len < 0", good_varlen, kvlen_neg, E(E_BOUNDS), "sequence 1" },
	{ "kv_len past the block table", good_varlen, kvlen_past, E(E_BOUNDS), "sequence 2" },
	{ "kv_len past the mask", good_varlen, kvlen_mask, E(E_BOUNDS), "mask" },
	{ "block id = nblk", good_varlen, tables_block, E(E_BOUNDS), "sequence 2" },
	{ "block id < 0", good_varlen, tables_block_neg, E(E_BOUNDS), "sequence 1" },
};

/* word (or phrase) occurs in text with no identifier character on either side. */
static int has_word(const char *text, const char *word)
{
	const size_t n = strlen(word);

	for (const char *s = strstr(text, word); s; s = strstr(s + 1, word)) {
		const char before = s == text ? ' ' : s[-1], after = s[n];
		const int ib = before == '_' || (before >= 'a' && before <= 'z') || (before >= '0' && before <= '9');
		const int ia = after == '_' || (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9');

		if (!ib && !ia)
			return 1;
	}
	return 0;
}

static void test_cases(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vcase *vc = &cases[i];
		struct call c = vc->base();
		const char *fn = c.varlen ? "gllmk_attention_varlen" : "gllmk_attention_ext";
		int intact;
		gllmk_status st;

		vc->mutate(&c);
		st = invoke(&c, &intact);
		if (st != vc->want) {
			printf("FAIL %s: %s: got %s, want %s (%s)\n", fn, vc->what, gllmk_status_string(st),
			       gllmk_status_string(vc->want), gllmk_last_error());
			failures++;
		} else if (st != GLLMK_OK && (!has_word(gllmk_last_error(), fn) || !has_word(gllmk_last_error(), vc->word))) {
			printf("FAIL %s: %s: the message does not name %s and '%s': %s\n", fn, vc->what, fn, vc->word,
			       gllmk_last_error());
			failures++;
		} else if (st != GLLMK_OK && !intact) {
			printf("FAIL %s: %s: out was written by a failed call\n", fn, vc->what);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

static int group_setup(void **state)
{
	gllmk_options opts = {
		.struct_size = sizeof(gllmk_options),
		.flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_NO_LAYERS,
		.plugins = run.plugin,
		.plugin_dir = run.plugin_dir,
	};

	(void)state;
	if (gllmk_open(&opts, &run.ctx) != GLLMK_OK) {
		fprintf(stderr, "cannot open %s in %s: %s\n", run.plugin, run.plugin_dir, gllmk_last_error());
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	gllmk_close(run.ctx);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_cases) };

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--plugin-dir"))
			run.plugin_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--plugin"))
			run.plugin = argv[i + 1];
	}
	if (!run.plugin_dir) {
		fprintf(stderr, "usage: %s --plugin-dir DIR [--plugin NAME]\n", argv[0]);
		return 2;
	}
	return cmocka_run_group_tests_name("validation attention_ext, attention_varlen", tests, group_setup,
					   group_teardown);
}
