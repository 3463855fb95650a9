/* gllmk-probe: what a plugin can do when asked for by name.
 *
 * The plugin is opened by name and every operator of ABI v1 is called once
 * per variant that matters to a user (each weight dtype of matmul, dequantize
 * and get_rows; each conversion; f32, f16 and paged KV in attention) on tiny
 * zero-filled tensors, each followed by gllmk_sync so an error is pinned on the
 * op that caused it. What it reports is the plugin's own answer: OK, or the
 * status and message it (or the core, for an empty slot) gave. Correctness is
 * the self-test's job (--plugin NAME) and the conformance suite's.
 */
#include <string.h>

#include "gllmk_plugin.h" /* GLLMK_OPS */
#include "probe_report.h"
#include "probe_tensor.h"

#define ROW 256 /* one block of every 256-element quant format, eight of the 32-element ones */

typedef gllmk_status (*unary_op)(gllmk_context *, const gllmk_tensor *, const gllmk_tensor *);
typedef gllmk_status (*binary_op)(gllmk_context *, const gllmk_tensor *, const gllmk_tensor *,
				  const gllmk_tensor *);

struct cap_arg {
	gllmk_dtype a, b;
	unary_op unary;
	binary_op binary;
	int variant;
};

struct cap_try {
	const char *name;
	gllmk_status (*run)(struct arena *, const struct cap_arg *);
	struct cap_arg arg;
};

static gllmk_status try_matmul(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 4));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(2, ROW));
	const gllmk_tensor *w = arena_new(a, c->a, NULL, SHAPE(4, ROW));
	const gllmk_tensor *bias = arena_new(a, GLLMK_F32, NULL, SHAPE(4));

	return a->st ? a->st : gllmk_matmul(a->ctx, y, x, w, bias);
}

static gllmk_status try_gemm(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *cc = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 5));
	const gllmk_tensor *aa = arena_new(a, GLLMK_F32, NULL, SHAPE(7, 3));
	const gllmk_tensor *bb = arena_new(a, GLLMK_F32, NULL, SHAPE(5, 7));
	gllmk_gemm_params p = { .trans_a = 1, .trans_b = 1, .alpha = 1.0f, .beta = 0.5f };

	(void)c;
	return a->st ? a->st : gllmk_gemm(a->ctx, cc, aa, bb, &p);
}

/* dequantize, quantize and convert: y (dtype b) = x (dtype a) */
static gllmk_status try_transcode(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, c->b, NULL, SHAPE(2, ROW));
	const gllmk_tensor *x = arena_new(a, c->a, NULL, SHAPE(2, ROW));

	return a->st ? a->st : c->unary(a->ctx, y, x);
}

static gllmk_status try_get_rows(struct arena *a, const struct cap_arg *c)
{
	const int32_t ids[2] = { 3, 1 };
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(2, ROW));
	const gllmk_tensor *table = arena_new(a, c->a, NULL, SHAPE(4, ROW));
	const gllmk_tensor *id = arena_new(a, GLLMK_I32, ids, SHAPE(2));

	return a->st ? a->st : gllmk_get_rows(a->ctx, y, table, id);
}

static gllmk_status try_unary(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));

	return a->st ? a->st : c->unary(a->ctx, y, x);
}

/* add, mul and swiglu; b is broadcast as one row where the op allows it */
static gllmk_status try_binary(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *b = c->variant ? arena_new(a, GLLMK_F32, NULL, SHAPE(33))
					   : arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));

	return a->st ? a->st : c->binary(a->ctx, y, x, b);
}

static gllmk_status try_scale(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));

	(void)c;
	return a->st ? a->st : gllmk_scale(a->ctx, y, x, 0.5f);
}

static gllmk_status try_norm(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *w = arena_new(a, GLLMK_F32, NULL, SHAPE(33));
	const gllmk_tensor *b = arena_new(a, GLLMK_F32, NULL, SHAPE(33));

	if (a->st)
		return a->st;
	return c->variant ? gllmk_layer_norm(a->ctx, y, x, w, b, 1e-5f) : gllmk_rms_norm(a->ctx, y, x, w, 1e-5f);
}

static gllmk_status try_softmax(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 3, 33));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 3, 33));
	const gllmk_tensor *mask = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	gllmk_softmax_params p = { .scale = 0.125f, .causal = 1 };

	(void)c;
	return a->st ? a->st : gllmk_softmax(a->ctx, y, x, mask, &p);
}

static gllmk_status try_rope(struct arena *a, const struct cap_arg *c)
{
	const int32_t pos[3] = { 0, 1, 7 };
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 2, 64));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 2, 64));
	const gllmk_tensor *p = arena_new(a, GLLMK_I32, pos, SHAPE(3));
	gllmk_rope_params rp = { .mode = c->variant, .n_rot = 32, .theta_base = 10000.0f, .freq_scale = 1.0f };

	return a->st ? a->st : gllmk_rope(a->ctx, y, x, p, &rp);
}

/* Llama 3.x frequency factors and YaRN together (rope_ext's every option). */
static gllmk_status try_rope_ext(struct arena *a, const struct cap_arg *c)
{
	const int32_t pos[3] = { 0, 1, 70000 };
	const float ff[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1.5f, 2, 3, 4, 8, 8, 8, 8 };
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 2, 64));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 2, 64));
	const gllmk_tensor *p = arena_new(a, GLLMK_I32, pos, SHAPE(3));
	const gllmk_tensor *f = arena_new(a, GLLMK_F32, ff, SHAPE(16));
	gllmk_rope_ext_params rp = {
		.struct_size = sizeof(rp), .mode = c->variant, .n_rot = 32, .theta_base = 500000.0f,
		.freq_scale = 0.25f, .ext_factor = 1.0f, .n_ctx_orig = 8192,
	};

	return a->st ? a->st : gllmk_rope_ext(a->ctx, y, x, p, f, &rp);
}

/* Three tokens, one skipped, into a paged cache of 4 blocks of 8 rows. */
static gllmk_status try_kv_store(struct arena *a, const struct cap_arg *c)
{
	const int32_t slots[3] = { 9, -1, 31 };
	const gllmk_tensor *cache = arena_new(a, c->a, NULL, SHAPE(4, 8, 2, 64));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 2, 64));
	const gllmk_tensor *s = arena_new(a, GLLMK_I32, slots, SHAPE(3));

	return a->st ? a->st : gllmk_kv_store(a->ctx, cache, x, s);
}

/* variant 0: contiguous KV; 1: paged KV (4 blocks of 8 tokens) */
static gllmk_status try_attention(struct arena *a, const struct cap_arg *c)
{
	const int32_t table[4] = { 2, 0, 3, 1 };
	const gllmk_tensor *out = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 4, 64));
	const gllmk_tensor *q = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 4, 64));
	const gllmk_tensor *k, *v, *bt = NULL;
	gllmk_attention_params p = { .causal = 1 };

	if (c->variant) {
		k = arena_new(a, c->a, NULL, SHAPE(4, 8, 2, 64));
		v = arena_new(a, c->a, NULL, SHAPE(4, 8, 2, 64));
		bt = arena_new(a, GLLMK_I32, table, SHAPE(4));
		p.kv_len = 29;
	} else {
		k = arena_new(a, c->a, NULL, SHAPE(29, 2, 64));
		v = arena_new(a, c->a, NULL, SHAPE(29, 2, 64));
	}
	return a->st ? a->st : gllmk_attention(a->ctx, out, q, k, v, NULL, bt, &p);
}

/* Every option on: softcap, ALiBi, a window, a per-head mask, sinks. */
static gllmk_attention_ext_params ext_params(int32_t kv_len)
{
	return (gllmk_attention_ext_params){ .struct_size = sizeof(gllmk_attention_ext_params), .causal = 1,
					     .kv_len = kv_len, .softcap = 30.0f, .max_bias = 8.0f, .window = 16 };
}

/* paged KV of dtype c->a (4 blocks of 8 tokens) */
static gllmk_status try_attention_ext(struct arena *a, const struct cap_arg *c)
{
	const int32_t table[4] = { 2, 0, 3, 1 };
	const gllmk_tensor *out = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 4, 64));
	const gllmk_tensor *q = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 4, 64));
	const gllmk_tensor *k = arena_new(a, c->a, NULL, SHAPE(4, 8, 2, 64));
	const gllmk_tensor *v = arena_new(a, c->a, NULL, SHAPE(4, 8, 2, 64));
	const gllmk_tensor *mask = arena_new(a, GLLMK_F32, NULL, SHAPE(4, 2, 29));
	const gllmk_tensor *bt = arena_new(a, GLLMK_I32, table, SHAPE(4));
	const gllmk_tensor *sinks = arena_new(a, GLLMK_F32, NULL, SHAPE(4));
	gllmk_attention_ext_params p = ext_params(29);

	return a->st ? a->st : gllmk_attention_ext(a->ctx, out, q, k, v, mask, bt, sinks, &p);
}

/* two sequences (2 queries over 29 tokens, 1 over 9) in one cache, sharing
 * their first block */
static gllmk_status try_attention_varlen(struct arena *a, const struct cap_arg *c)
{
	const int32_t tables[2][4] = { { 2, 0, 3, 1 }, { 2, 1, -1, -1 } }, cu[3] = { 0, 2, 3 }, len[2] = { 29, 9 };
	const gllmk_tensor *out = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 4, 64));
	const gllmk_tensor *q = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 4, 64));
	const gllmk_tensor *k = arena_new(a, c->a, NULL, SHAPE(4, 8, 2, 64));
	const gllmk_tensor *v = arena_new(a, c->a, NULL, SHAPE(4, 8, 2, 64));
	const gllmk_tensor *cut = arena_new(a, GLLMK_I32, cu, SHAPE(3));
	const gllmk_tensor *lent = arena_new(a, GLLMK_I32, len, SHAPE(2));
	const gllmk_tensor *bt = arena_new(a, GLLMK_I32, tables, SHAPE(2, 4));
	gllmk_attention_ext_params p = ext_params(0);

	return a->st ? a->st : gllmk_attention_varlen(a->ctx, out, q, k, v, NULL, cut, lent, bt, NULL, &p);
}

/* variant 0: argmax; 1: temperature + top-k + top-p */
static gllmk_status try_sample(struct arena *a, const struct cap_arg *c)
{
	const float uniform[2] = { 0.25f, 0.75f };
	const gllmk_tensor *ids = arena_new(a, GLLMK_I32, NULL, SHAPE(2));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 100));
	gllmk_sample_params p = { .temperature = 0.8f, .top_k = 40, .top_p = 0.95f };

	if (a->st)
		return a->st;
	return c->variant ? gllmk_sample(a->ctx, ids, x, uniform, &p) : gllmk_argmax(a->ctx, ids, x);
}

/* matmul_id: 2 tokens, 2 of 3 q8_0 experts each, summed with slot weights */
static gllmk_status try_matmul_id(struct arena *a, const struct cap_arg *c)
{
	const int32_t ids[4] = { 2, 0, 1, 2 };
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 4));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(2, ROW));
	const gllmk_tensor *w = arena_new(a, GLLMK_Q8_0, NULL, SHAPE(3, 4, ROW));
	const gllmk_tensor *id = arena_new(a, GLLMK_I32, ids, SHAPE(2, 2));
	const gllmk_tensor *sw = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 2));

	(void)c;
	return a->st ? a->st : gllmk_matmul_id(a->ctx, y, x, w, id, NULL, sw);
}

/* matmul_batched: 2 batches, f16 w */
static gllmk_status try_matmul_batched(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 3, 4));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 3, ROW));
	const gllmk_tensor *w = arena_new(a, GLLMK_F16, NULL, SHAPE(2, 4, ROW));

	(void)c;
	return a->st ? a->st : gllmk_matmul_batched(a->ctx, y, x, w);
}

/* variant 0: clamp; 1: softcap */
static gllmk_status try_clamp_softcap(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));

	if (a->st)
		return a->st;
	return c->variant ? gllmk_softcap(a->ctx, y, x, 30.0f) : gllmk_clamp(a->ctx, y, x, -1.0f, 1.0f);
}

/* gpt-oss's fused form: gate [3, 2·33] holding both halves */
static gllmk_status try_glu(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *y = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 33));
	const gllmk_tensor *gate = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 66));
	gllmk_glu_params p = { .struct_size = sizeof(p), .op = GLLMK_GLU_SWIGLU_OAI };

	(void)c;
	return a->st ? a->st : gllmk_glu(a->ctx, y, gate, NULL, &p);
}

static gllmk_status try_top_k(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *values = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 40));
	const gllmk_tensor *ids = arena_new(a, GLLMK_I32, NULL, SHAPE(2, 40));
	const gllmk_tensor *x = arena_new(a, GLLMK_F32, NULL, SHAPE(2, 1000));

	(void)c;
	return a->st ? a->st : gllmk_top_k(a->ctx, values, ids, x);
}

/* DeepSeek V3's routing: sigmoid, bias, 8 groups of which 4 are kept */
static gllmk_status try_moe_route(struct arena *a, const struct cap_arg *c)
{
	const gllmk_tensor *ids = arena_new(a, GLLMK_I32, NULL, SHAPE(3, 8));
	const gllmk_tensor *w = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 8));
	const gllmk_tensor *logits = arena_new(a, GLLMK_F32, NULL, SHAPE(3, 256));
	const gllmk_tensor *bias = arena_new(a, GLLMK_F32, NULL, SHAPE(256));
	gllmk_moe_route_params p = { .struct_size = sizeof(p), .gating = GLLMK_GATING_SIGMOID, .n_group = 8,
				     .topk_group = 4, .norm = 1, .scale = 2.5f };

	(void)c;
	return a->st ? a->st : gllmk_moe_route(a->ctx, ids, w, logits, bias, &p);
}

/* The weight dtypes (matmul, dequantize and get_rows take them all) and the
 * K/V cache dtypes (kv_store, attention_ext): the rows of abi/gllmk_dtypes.def
 * with WEIGHT 1, or KV 1. Each array below defines DTYPE_CAP to pick one
 * column; the column is a literal 0 or 1, so pasting it picks a macro that
 * keeps the row's entry or drops it. */
#define IF_1(...) __VA_ARGS__
#define IF_0(...)
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) DTYPE_CAP(weight, kv, name, e)
#define FLOAT_PAIRS(X)                                                                     \
	X(f32, GLLMK_F32, f16, GLLMK_F16) X(f32, GLLMK_F32, bf16, GLLMK_BF16)              \
	X(f16, GLLMK_F16, f32, GLLMK_F32) X(bf16, GLLMK_BF16, f32, GLLMK_F32)              \
	X(f16, GLLMK_F16, bf16, GLLMK_BF16) X(bf16, GLLMK_BF16, f16, GLLMK_F16)

#define CAP_MATMUL(n, dt) { "matmul:" #n, try_matmul, { .a = dt } },
#define CAP_DEQUANT(n, dt) { "dequantize:" #n, try_transcode, { .a = dt, .b = GLLMK_F32, .unary = gllmk_dequantize } },
#define CAP_GET_ROWS(n, dt) { "get_rows:" #n, try_get_rows, { .a = dt } },
#define CAP_KV_STORE(n, dt) { "kv_store:" #n, try_kv_store, { .a = dt } },
#define CAP_ATTENTION_EXT(n, dt) { "attention_ext:" #n, try_attention_ext, { .a = dt } },
#define CAP_CONVERT(n, a_, m, b_) { "convert:" #n ">" #m, try_transcode, { .a = a_, .b = b_, .unary = gllmk_convert } },
#define CAP_UNARY(op) { #op, try_unary, { .unary = gllmk_##op } }

/* The variants tried per operator: one array caps_<op> for each op of
 * GLLMK_OPS (abi/gllmk_plugin.h), in its order. cap_lists below is built
 * from GLLMK_OPS, so an op added to the ABI without its array here fails to
 * compile rather than going unprobed. */
static const struct cap_try caps_matmul[] = {
#define DTYPE_CAP(weight, kv, n, dt) IF_##weight(CAP_MATMUL(n, dt))
#include "gllmk_dtypes.def"
#undef DTYPE_CAP
};
static const struct cap_try caps_gemm[] = { { "gemm", try_gemm, { 0 } } };
static const struct cap_try caps_dequantize[] = {
#define DTYPE_CAP(weight, kv, n, dt) IF_##weight(CAP_DEQUANT(n, dt))
#include "gllmk_dtypes.def"
#undef DTYPE_CAP
};
static const struct cap_try caps_quantize[] = {
	{ "quantize:q8_0", try_transcode, { .a = GLLMK_F32, .b = GLLMK_Q8_0, .unary = gllmk_quantize } },
	{ "quantize:q8_K", try_transcode, { .a = GLLMK_F32, .b = GLLMK_Q8_K, .unary = gllmk_quantize } },
};
static const struct cap_try caps_convert[] = { FLOAT_PAIRS(CAP_CONVERT) };
static const struct cap_try caps_add[] = { { "add", try_binary, { .binary = gllmk_add, .variant = 1 } } };
static const struct cap_try caps_mul[] = { { "mul", try_binary, { .binary = gllmk_mul, .variant = 1 } } };
static const struct cap_try caps_scale[] = { { "scale", try_scale, { 0 } } };
static const struct cap_try caps_silu[] = { CAP_UNARY(silu) };
static const struct cap_try caps_gelu_tanh[] = { CAP_UNARY(gelu_tanh) };
static const struct cap_try caps_gelu_erf[] = { CAP_UNARY(gelu_erf) };
static const struct cap_try caps_relu[] = { CAP_UNARY(relu) };
static const struct cap_try caps_tanh[] = { CAP_UNARY(tanh) };
static const struct cap_try caps_exp[] = { CAP_UNARY(exp) };
static const struct cap_try caps_swiglu[] = { { "swiglu", try_binary, { .binary = gllmk_swiglu } } };
static const struct cap_try caps_rms_norm[] = { { "rms_norm", try_norm, { .variant = 0 } } };
static const struct cap_try caps_layer_norm[] = { { "layer_norm", try_norm, { .variant = 1 } } };
static const struct cap_try caps_softmax[] = { { "softmax", try_softmax, { 0 } } };
static const struct cap_try caps_rope[] = {
	{ "rope:normal", try_rope, { .variant = GLLMK_ROPE_NORMAL } },
	{ "rope:neox", try_rope, { .variant = GLLMK_ROPE_NEOX } },
};
static const struct cap_try caps_get_rows[] = {
#define DTYPE_CAP(weight, kv, n, dt) IF_##weight(CAP_GET_ROWS(n, dt))
#include "gllmk_dtypes.def"
#undef DTYPE_CAP
};
static const struct cap_try caps_attention[] = {
	{ "attention:f32", try_attention, { .a = GLLMK_F32 } },
	{ "attention:f16", try_attention, { .a = GLLMK_F16 } },
	{ "attention:paged-f16", try_attention, { .a = GLLMK_F16, .variant = 1 } },
};
static const struct cap_try caps_argmax[] = { { "argmax", try_sample, { .variant = 0 } } };
static const struct cap_try caps_sample[] = { { "sample", try_sample, { .variant = 1 } } };
static const struct cap_try caps_rope_ext[] = {
	{ "rope_ext:normal", try_rope_ext, { .variant = GLLMK_ROPE_NORMAL } },
	{ "rope_ext:neox", try_rope_ext, { .variant = GLLMK_ROPE_NEOX } },
};
static const struct cap_try caps_attention_ext[] = {
#define DTYPE_CAP(weight, kv, n, dt) IF_##kv(CAP_ATTENTION_EXT(n, dt))
#include "gllmk_dtypes.def"
#undef DTYPE_CAP
};
static const struct cap_try caps_attention_varlen[] = {
	{ "attention_varlen:f16", try_attention_varlen, { .a = GLLMK_F16 } },
};
static const struct cap_try caps_kv_store[] = {
#define DTYPE_CAP(weight, kv, n, dt) IF_##kv(CAP_KV_STORE(n, dt))
#include "gllmk_dtypes.def"
#undef DTYPE_CAP
};
static const struct cap_try caps_top_k[] = { { "top_k", try_top_k, { 0 } } };
static const struct cap_try caps_moe_route[] = { { "moe_route", try_moe_route, { 0 } } };
static const struct cap_try caps_matmul_id[] = { { "matmul_id", try_matmul_id, { 0 } } };
static const struct cap_try caps_matmul_batched[] = { { "matmul_batched", try_matmul_batched, { 0 } } };
static const struct cap_try caps_glu[] = { { "glu", try_glu, { 0 } } };
static const struct cap_try caps_sigmoid[] = { CAP_UNARY(sigmoid) };
static const struct cap_try caps_clamp[] = { { "clamp", try_clamp_softcap, { .variant = 0 } } };
static const struct cap_try caps_softcap[] = { { "softcap", try_clamp_softcap, { .variant = 1 } } };

#undef GLLMK_DTYPE

#define CAPS_LEN(op) (sizeof(caps_##op) / sizeof(caps_##op[0]))

struct cap_list {
	const struct cap_try *tries;
	size_t count;
};

#define CAP_LIST(op, fn) { caps_##op, CAPS_LEN(op) },
static const struct cap_list cap_lists[] = { GLLMK_OPS(CAP_LIST) };
#undef CAP_LIST

#define CAP_COUNT(op, fn) +CAPS_LEN(op)
_Static_assert(0 GLLMK_OPS(CAP_COUNT) <= PROBE_MAX_CAPS, "PROBE_MAX_CAPS too small");
#undef CAP_COUNT

static void run_one(gllmk_context *ctx, const struct cap_try *t, struct probe_cap *out)
{
	struct arena a = { .ctx = ctx };
	gllmk_status st = t->run(&a, &t->arg);

	if (st == GLLMK_OK)
		st = gllmk_sync(ctx);
	probe_copy(out->op, t->name);
	out->status = st;
	if (st != GLLMK_OK)
		probe_copy(out->message, a.st ? a.err : gllmk_last_error());
	arena_free(&a);
}

void probe_capabilities(struct probe_plugin_caps *caps, const struct probe_options *opt, const char *plugin)
{
	gllmk_context *ctx;
	size_t i;

	caps->tried = true;
	if (probe_open_named(opt, plugin, &ctx, caps->open_error, sizeof(caps->open_error)) != GLLMK_OK)
		return;
	caps->opened = true;
	for (i = 0; i < sizeof(cap_lists) / sizeof(cap_lists[0]); i++) {
		for (size_t j = 0; j < cap_lists[i].count; j++) {
			struct probe_cap *out = &caps->caps[caps->n_caps++];

			run_one(ctx, &cap_lists[i].tries[j], out);
			caps->n_ok += out->status == GLLMK_OK;
		}
	}
	gllmk_close(ctx);
}
