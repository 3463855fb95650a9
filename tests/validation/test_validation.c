/* Bad input for every public function (issue 2, section 5), on a real
 * context (cpu-generic).
 *
 *   test_validation --plugin-dir DIR [--plugin NAME]
 *
 * Every case starts from a valid call of one function (fn_descs: its
 * arguments and their good shapes), changes one to three things
 * (mutations), makes the call and checks:
 *   - the exact status (abi/gllmk.h, SPEC/OPERATORS.md "Tensors and views");
 *   - on failure, that gllmk_last_error() names the function and the
 *     argument (a whole word: "w" in "gllmk_matmul: w.dtype = i32 ...");
 *   - on failure, that nothing was written: every buffer of the call (and
 *     the host memory of buffer_read) is byte for byte what it was.
 * Cases come from two tables: tensor_rules, applied to every tensor
 * argument of every operator (NULL, foreign buffer, unknown dtypes, rank,
 * empty dims, bounds, alignment, strides), and cases, one line each, for
 * what is particular to a function. One cmocka test per function runs all
 * of its cases and lists every case that fails before failing.
 */
#include <inttypes.h>
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

#define MAX_ARGS 7
#define MAX_MUTS 4

/* --------------------------------------------------------------- functions */

enum fn {
	F_MATMUL, F_GEMM, F_DEQUANTIZE, F_QUANTIZE, F_CONVERT, F_ADD, F_MUL, F_SCALE,
	F_SILU, F_GELU_TANH, F_GELU_ERF, F_RELU, F_TANH, F_EXP, F_SWIGLU,
	F_RMS_NORM, F_LAYER_NORM, F_SOFTMAX, F_ROPE, F_GET_ROWS, F_ATTENTION, F_ATTENTION_PAGED,
	F_ARGMAX, F_SAMPLE,
	F_SIGMOID, F_CLAMP, F_SOFTCAP, F_GLU, F_GLU_FUSED, F_TOP_K, F_MOE_ROUTE,
	F_ROPE_EXT, F_KV_STORE, F_KV_STORE_PAGED,
	F_BUFFER_ALLOC, F_BUFFER_WRAP, F_BUFFER_WRITE, F_BUFFER_READ, F_BUFFER_COPY, F_SYNC,
	F_OPEN, F_SURVEY, F_ROW_BYTES,
	F_COUNT,
};

/* An argument: a tensor (ndim >= 1), an optional tensor left out of the
 * good call (ndim 0), or a plain pointer (ndim -1: params, uniform, out). */
struct arg_spec {
	const char *name;
	int32_t dtype;
	int32_t ndim;
	int64_t shape[4];
	int optional; /* 1: NULL is a valid value; -1: NULL changes the call (a case of its own) */
};

#define NARGS_(a, b, c, d, n, ...) n
#define NARGS(...) NARGS_(__VA_ARGS__, 4, 3, 2, 1, 0)
#define TENSOR(nm, dt, ...) { .name = nm, .dtype = dt, .ndim = NARGS(__VA_ARGS__), .shape = { __VA_ARGS__ } }
#define OPTIONAL(nm, dt, ...) { .name = nm, .dtype = dt, .ndim = NARGS(__VA_ARGS__), .shape = { __VA_ARGS__ }, .optional = 1 }
#define ABSENT(nm) { .name = nm, .ndim = 0, .optional = 1 }
#define POINTER(nm) { .name = nm, .ndim = -1 }

struct fn_desc {
	const char *name;      /* as the message must say it */
	int is_op;             /* an operator: ctx first, tensor rules apply, args[0] is the output */
	struct arg_spec args[MAX_ARGS];
};

/* Good calls. Elementwise rows are 32 long so that a quant dtype put in
 * their place still makes a valid view and fails on the dtype rule alone. */
static const struct fn_desc fn_descs[F_COUNT] = {
	[F_MATMUL] = { "gllmk_matmul", 1, { TENSOR("y", GLLMK_F32, 3, 8), TENSOR("x", GLLMK_F32, 3, 32),
		TENSOR("w", GLLMK_F32, 8, 32), OPTIONAL("bias", GLLMK_F32, 8) } },
	[F_GEMM] = { "gllmk_gemm", 1, { TENSOR("c", GLLMK_F32, 3, 8), TENSOR("a", GLLMK_F32, 3, 32),
		TENSOR("b", GLLMK_F32, 32, 8), POINTER("p") } },
	[F_DEQUANTIZE] = { "gllmk_dequantize", 1, { TENSOR("y", GLLMK_F32, 2, 64), TENSOR("x", GLLMK_Q8_0, 2, 64) } },
	[F_QUANTIZE] = { "gllmk_quantize", 1, { TENSOR("y", GLLMK_Q8_0, 2, 64), TENSOR("x", GLLMK_F32, 2, 64) } },
	[F_CONVERT] = { "gllmk_convert", 1, { TENSOR("y", GLLMK_F16, 2, 32), TENSOR("x", GLLMK_F32, 2, 32) } },
	[F_ADD] = { "gllmk_add", 1, { TENSOR("y", GLLMK_F32, 2, 3, 32), TENSOR("a", GLLMK_F32, 2, 3, 32),
		TENSOR("b", GLLMK_F32, 3, 32) } },
	[F_MUL] = { "gllmk_mul", 1, { TENSOR("y", GLLMK_F32, 2, 3, 32), TENSOR("a", GLLMK_F32, 2, 3, 32),
		TENSOR("b", GLLMK_F32, 3, 32) } },
	[F_SCALE] = { "gllmk_scale", 1, { TENSOR("y", GLLMK_F32, 2, 32), TENSOR("x", GLLMK_F32, 2, 32) } },
#define UNARY_DESC(op) { "gllmk_" #op, 1, { TENSOR("y", GLLMK_F32, 2, 32), TENSOR("x", GLLMK_F32, 2, 32) } }
	[F_SILU] = UNARY_DESC(silu),
	[F_GELU_TANH] = UNARY_DESC(gelu_tanh),
	[F_GELU_ERF] = UNARY_DESC(gelu_erf),
	[F_RELU] = UNARY_DESC(relu),
	[F_TANH] = UNARY_DESC(tanh),
	[F_EXP] = UNARY_DESC(exp),
	[F_SWIGLU] = { "gllmk_swiglu", 1, { TENSOR("y", GLLMK_F32, 2, 32), TENSOR("gate", GLLMK_F32, 2, 32),
		TENSOR("up", GLLMK_F32, 2, 32) } },
	[F_RMS_NORM] = { "gllmk_rms_norm", 1, { TENSOR("y", GLLMK_F32, 2, 32), TENSOR("x", GLLMK_F32, 2, 32),
		OPTIONAL("w", GLLMK_F32, 32) } },
	[F_LAYER_NORM] = { "gllmk_layer_norm", 1, { TENSOR("y", GLLMK_F32, 2, 32), TENSOR("x", GLLMK_F32, 2, 32),
		OPTIONAL("w", GLLMK_F32, 32), OPTIONAL("b", GLLMK_F32, 32) } },
	[F_SOFTMAX] = { "gllmk_softmax", 1, { TENSOR("y", GLLMK_F32, 2, 4, 32), TENSOR("x", GLLMK_F32, 2, 4, 32),
		OPTIONAL("mask", GLLMK_F32, 4, 32), POINTER("p") } },
	[F_ROPE] = { "gllmk_rope", 1, { TENSOR("y", GLLMK_F32, 4, 2, 8), TENSOR("x", GLLMK_F32, 4, 2, 8),
		TENSOR("pos", GLLMK_I32, 4), POINTER("p") } },
	[F_GET_ROWS] = { "gllmk_get_rows", 1, { TENSOR("y", GLLMK_F32, 3, 32), TENSOR("table", GLLMK_Q8_0, 10, 32),
		TENSOR("ids", GLLMK_I32, 3) } },
	[F_ATTENTION] = { "gllmk_attention", 1, { TENSOR("out", GLLMK_F32, 2, 4, 8), TENSOR("q", GLLMK_F32, 2, 4, 8),
		TENSOR("k", GLLMK_F32, 6, 2, 8), TENSOR("v", GLLMK_F32, 6, 2, 8), OPTIONAL("mask", GLLMK_F32, 2, 6),
		ABSENT("block_table"), POINTER("p") } },
	[F_ATTENTION_PAGED] = { "gllmk_attention", 1, { TENSOR("out", GLLMK_F32, 2, 4, 8),
		TENSOR("q", GLLMK_F32, 2, 4, 8), TENSOR("k", GLLMK_F32, 3, 4, 2, 8), TENSOR("v", GLLMK_F32, 3, 4, 2, 8),
		OPTIONAL("mask", GLLMK_F32, 2, 6),
		{ .name = "block_table", .dtype = GLLMK_I32, .ndim = 1, .shape = { 2 }, .optional = -1 }, POINTER("p") } },
	[F_ARGMAX] = { "gllmk_argmax", 1, { TENSOR("ids", GLLMK_I32, 3), TENSOR("x", GLLMK_F32, 3, 10) } },
	[F_SAMPLE] = { "gllmk_sample", 1, { TENSOR("ids", GLLMK_I32, 3), TENSOR("logits", GLLMK_F32, 3, 10),
		POINTER("uniform"), POINTER("p") } },
	[F_SIGMOID] = UNARY_DESC(sigmoid),
	[F_CLAMP] = UNARY_DESC(clamp),
	[F_SOFTCAP] = UNARY_DESC(softcap),
	/* up NULL makes it the fused form: a case of its own (F_GLU_FUSED) */
	[F_GLU] = { "gllmk_glu", 1, { TENSOR("y", GLLMK_F32, 2, 32), TENSOR("gate", GLLMK_F32, 2, 32),
		{ .name = "up", .dtype = GLLMK_F32, .ndim = 2, .shape = { 2, 32 }, .optional = -1 }, POINTER("p") } },
	[F_GLU_FUSED] = { "gllmk_glu", 1, { TENSOR("y", GLLMK_F32, 2, 16), TENSOR("gate", GLLMK_F32, 2, 32),
		ABSENT("up"), POINTER("p") } },
	[F_TOP_K] = { "gllmk_top_k", 1, { OPTIONAL("values", GLLMK_F32, 3, 4), TENSOR("ids", GLLMK_I32, 3, 4),
		TENSOR("x", GLLMK_F32, 3, 10) } },
	[F_MOE_ROUTE] = { "gllmk_moe_route", 1, { TENSOR("ids", GLLMK_I32, 3, 2), TENSOR("weights", GLLMK_F32, 3, 2),
		TENSOR("logits", GLLMK_F32, 3, 8), OPTIONAL("bias", GLLMK_F32, 8), POINTER("p") } },
	[F_ROPE_EXT] = { "gllmk_rope_ext", 1, { TENSOR("y", GLLMK_F32, 4, 2, 8), TENSOR("x", GLLMK_F32, 4, 2, 8),
		TENSOR("pos", GLLMK_I32, 4), OPTIONAL("freq_factors", GLLMK_F32, 4), POINTER("p") } },
	[F_KV_STORE] = { "gllmk_kv_store", 1, { TENSOR("cache", GLLMK_F16, 10, 2, 32), TENSOR("x", GLLMK_F32, 3, 2, 32),
		TENSOR("slots", GLLMK_I32, 3) } },
	[F_KV_STORE_PAGED] = { "gllmk_kv_store", 1, { TENSOR("cache", GLLMK_Q8_0, 3, 4, 2, 32),
		TENSOR("x", GLLMK_F32, 3, 2, 32), TENSOR("slots", GLLMK_I32, 3) } },
	[F_BUFFER_ALLOC] = { "gllmk_buffer_alloc", 0, { POINTER("out") } },
	[F_BUFFER_WRAP] = { "gllmk_buffer_wrap", 0, { POINTER("host"), POINTER("out") } },
	[F_BUFFER_WRITE] = { "gllmk_buffer_write", 0, { POINTER("buf"), POINTER("src") } },
	[F_BUFFER_READ] = { "gllmk_buffer_read", 0, { POINTER("buf"), POINTER("dst") } },
	[F_BUFFER_COPY] = { "gllmk_buffer_copy", 0, { POINTER("dst"), POINTER("src") } },
	[F_SYNC] = { "gllmk_sync", 0, { { .name = NULL } } },
	[F_OPEN] = { "gllmk_open", 0, { POINTER("ctx") } },
	[F_SURVEY] = { "gllmk_survey", 0, { POINTER("out") } },
	[F_ROW_BYTES] = { "gllmk_dtype_row_bytes", 0, { POINTER("bytes") } },
};

/* ----------------------------------------------------------------- params */

/* Scalars a case may set; name is how the message must call it. */
enum param {
	P_S, P_EPS, P_TRANS_A, P_TRANS_B, P_SM_SCALE, P_SM_CAUSAL, P_ROPE_MODE, P_N_ROT, P_THETA, P_FREQ,
	P_ATT_SCALE, P_ATT_CAUSAL, P_KV_LEN, P_TEMP, P_TOP_K, P_TOP_P, P_UNIFORM0,
	P_OFF, P_OFF2, P_SIZE, P_N, P_DTYPE, P_STRUCT_SIZE, P_FLAGS, P_N_THREADS,
	P_LO, P_HI, P_CAP, P_GLU_OP, P_GLU_SWAPPED, P_GLU_ALPHA, P_GLU_LIMIT,
	P_GATING, P_N_GROUP, P_TOPK_GROUP, P_NORM, P_MOE_SCALE,
	P_EXT_FACTOR, P_ATTN_FACTOR, P_BETA_FAST, P_BETA_SLOW, P_N_CTX_ORIG, P_ROPE_STRUCT_SIZE,
	P_COUNT,
};

static const char *const param_names[P_COUNT] = {
	[P_S] = "s", [P_EPS] = "eps", [P_TRANS_A] = "trans_a", [P_TRANS_B] = "trans_b",
	[P_SM_SCALE] = "scale", [P_SM_CAUSAL] = "causal", [P_ROPE_MODE] = "mode", [P_N_ROT] = "n_rot",
	[P_THETA] = "theta_base", [P_FREQ] = "freq_scale", [P_ATT_SCALE] = "scale", [P_ATT_CAUSAL] = "causal",
	[P_KV_LEN] = "kv_len", [P_TEMP] = "temperature", [P_TOP_K] = "top_k", [P_TOP_P] = "top_p",
	[P_UNIFORM0] = "uniform", [P_OFF] = "offset", [P_OFF2] = "src_offset", [P_SIZE] = "size", [P_N] = "n",
	[P_DTYPE] = "dtype", [P_STRUCT_SIZE] = "struct_size", [P_FLAGS] = "flags", [P_N_THREADS] = "n_threads",
	[P_LO] = "lo", [P_HI] = "hi", [P_CAP] = "c", [P_GLU_OP] = "op", [P_GLU_SWAPPED] = "swapped",
	[P_GLU_ALPHA] = "alpha", [P_GLU_LIMIT] = "limit", [P_GATING] = "gating", [P_N_GROUP] = "n_group",
	[P_TOPK_GROUP] = "topk_group", [P_NORM] = "norm", [P_MOE_SCALE] = "scale",
	[P_EXT_FACTOR] = "ext_factor", [P_ATTN_FACTOR] = "attn_factor", [P_BETA_FAST] = "beta_fast",
	[P_BETA_SLOW] = "beta_slow", [P_N_CTX_ORIG] = "n_ctx_orig", [P_ROPE_STRUCT_SIZE] = "struct_size",
};

struct params {
	float s, eps;
	gllmk_gemm_params gemm;
	gllmk_softmax_params softmax;
	gllmk_rope_params rope;
	gllmk_rope_ext_params rope_ext; /* mode, n_rot, theta_base, freq_scale: as rope's */
	gllmk_attention_params attn;
	gllmk_sample_params sample;
	float lo, hi, cap;
	gllmk_glu_params glu;
	gllmk_moe_route_params moe;
	float uniform[4];
	uint64_t off, off2, size;
	int64_t n;
	int32_t dtype;
	gllmk_options opts;
};

/* -------------------------------------------------------------- mutations */

enum mkind {
	M_END = 0,
	M_NULL,          /* pass NULL for arg */
	M_CTX_NULL,      /* pass NULL for ctx */
	M_CTX_OTHER,     /* pass the other context (buffers stay in the first) */
	M_BUF_NULL,      /* arg.buf = NULL */
	M_BUF_OTHER,     /* arg's buffer comes from the other context */
	M_DTYPE,         /* arg.dtype = i (strides follow, as gllmk_tensor_make) */
	M_NDIM,          /* arg.ndim = i */
	M_SHAPE,         /* arg.shape[d] = i (d < 0: from the innermost) */
	M_STRIDE,        /* arg.stride[d] = i, after shapes */
	M_STRIDE_WRONG,  /* innermost stride neither 0 nor the element size */
	M_STRIDE_NEG,    /* stride[0] = -stride[0] */
	M_STRIDE_ODD,    /* stride[0] += half the dtype's alignment */
	M_OFFSET,        /* arg.offset = i; its buffer grows by i (still ends at the end) */
	M_OFFSET_ODD,    /* offset = half the dtype's alignment; the buffer grows too */
	M_BUFSIZE,       /* arg's buffer is i bytes larger (negative: smaller) than its view */
	M_ALIAS,         /* arg lives in arg2's buffer at arg2.offset + i */
	M_I32,           /* element d of arg's data = i */
	M_PARAM,         /* param d = f (or i for integer params) */
};

struct mut {
	enum mkind k;
	const char *arg;
	int d;
	int64_t i;
	double f;
	const char *arg2;
};

#define NUL(a) { .k = M_NULL, .arg = a }
#define CTX_NULL { .k = M_CTX_NULL, .arg = "ctx" }
#define CTX_OTHER { .k = M_CTX_OTHER, .arg = "ctx" }
#define BUF_NULL(a) { .k = M_BUF_NULL, .arg = a }
#define BUF_OTHER(a) { .k = M_BUF_OTHER, .arg = a }
#define DTYPE(a, v) { .k = M_DTYPE, .arg = a, .i = v }
#define NDIM(a, v) { .k = M_NDIM, .arg = a, .i = v }
#define SHAPE(a, dim, v) { .k = M_SHAPE, .arg = a, .d = dim, .i = v }
#define STRIDE(a, dim, v) { .k = M_STRIDE, .arg = a, .d = dim, .i = v }
#define OFFSET(a, v) { .k = M_OFFSET, .arg = a, .i = v }
#define BUFSIZE(a, v) { .k = M_BUFSIZE, .arg = a, .i = v }
#define ALIAS(a, b, delta) { .k = M_ALIAS, .arg = a, .i = delta, .arg2 = b }
#define I32(a, idx, v) { .k = M_I32, .arg = a, .d = idx, .i = v }
#define PARAM(p, v) { .k = M_PARAM, .d = p, .i = (int64_t)(v), .f = (double)(v) }
#define NOTHING { .k = M_END }
#define ODD_OFFSET { .k = M_OFFSET_ODD }
#define WRONG_INNER_STRIDE { .k = M_STRIDE_WRONG }
#define NEGATIVE_STRIDE { .k = M_STRIDE_NEG }
#define ODD_STRIDE { .k = M_STRIDE_ODD }

#define NaN ((double)NAN)
#define INF ((double)INFINITY)
#define P2(e) ((int64_t)1 << (e))

/* ------------------------------------------------------------------ cases */

struct vcase {
	enum fn fn;
	gllmk_status want;
	const char *arg;       /* the word(s) the message must hold, "a|b" = either; NULL: the first mutation's */
	struct mut m[MAX_MUTS];
	int may_write;         /* the plugin finds it in the data and may have written rows before */
};

#define C(f, st, a, ...) { .fn = f, .want = GLLMK_##st, .arg = a, .m = { __VA_ARGS__ } }
#define CW(f, st, a, ...) { .fn = f, .want = GLLMK_##st, .arg = a, .m = { __VA_ARGS__ }, .may_write = 1 }

/* One line per case. What every tensor argument gets is in tensor_rules. */
static const struct vcase cases[] = {
	/* matmul: x, y, bias f32; w any dtype but i32; y overlaps nothing */
	C(F_MATMUL, E_DTYPE, NULL, DTYPE("x", GLLMK_I32)),
	C(F_MATMUL, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_MATMUL, E_DTYPE, NULL, DTYPE("w", GLLMK_I32)),
	C(F_MATMUL, E_DTYPE, NULL, DTYPE("y", GLLMK_F16)),
	C(F_MATMUL, E_DTYPE, NULL, DTYPE("bias", GLLMK_F16)),
	C(F_MATMUL, OK, NULL, DTYPE("w", GLLMK_F16)),
	C(F_MATMUL, OK, NULL, DTYPE("w", GLLMK_BF16)),
	C(F_MATMUL, OK, NULL, DTYPE("w", GLLMK_Q4_0)),
	C(F_MATMUL, OK, NULL, DTYPE("w", GLLMK_Q8_0)),
	C(F_MATMUL, OK, NULL, DTYPE("w", GLLMK_Q4_K), SHAPE("w", 1, 256), SHAPE("x", 1, 256)),
	C(F_MATMUL, OK, NULL, DTYPE("w", GLLMK_Q6_K), SHAPE("w", 1, 256), SHAPE("x", 1, 256)),
	C(F_MATMUL, E_BLOCK, NULL, DTYPE("w", GLLMK_Q8_0), SHAPE("w", 1, 48), SHAPE("x", 1, 48)),
	C(F_MATMUL, E_BLOCK, NULL, DTYPE("w", GLLMK_Q4_K), SHAPE("w", 1, 288), SHAPE("x", 1, 288)),
	C(F_MATMUL, E_BLOCK, NULL, DTYPE("w", GLLMK_Q4_0), SHAPE("w", 1, 16), SHAPE("x", 1, 16)),
	C(F_MATMUL, E_SHAPE, "x|w", SHAPE("x", 1, 31)),
	C(F_MATMUL, E_SHAPE, "y|x", SHAPE("y", 0, 4)),
	C(F_MATMUL, E_SHAPE, "y|w", SHAPE("y", 1, 9)),
	C(F_MATMUL, E_SHAPE, "bias|w", SHAPE("bias", 0, 7)),
	C(F_MATMUL, E_SHAPE, NULL, NDIM("x", 3), SHAPE("x", 2, 32)),
	C(F_MATMUL, E_SHAPE, NULL, NDIM("w", 1), SHAPE("w", 0, 32)),
	C(F_MATMUL, E_SHAPE, NULL, NDIM("bias", 2), SHAPE("bias", 1, 1)),
	C(F_MATMUL, E_ALIAS, "y|x", ALIAS("y", "x", 0)),
	C(F_MATMUL, E_ALIAS, "y|x", ALIAS("y", "x", 200)),
	C(F_MATMUL, E_ALIAS, "y|w", ALIAS("y", "w", 1020)),
	C(F_MATMUL, E_ALIAS, "y|bias", ALIAS("y", "bias", 0)),
	C(F_MATMUL, OK, NULL, ALIAS("y", "x", 384)),
	C(F_MATMUL, OK, NULL, ALIAS("bias", "x", 384)),
	C(F_MATMUL, E_OVERFLOW, NULL, SHAPE("w", 0, P2(61))),
	C(F_MATMUL, OK, NULL, STRIDE("w", 0, 0)),

	/* gemm: all f32; c overlaps nothing */
	C(F_GEMM, E_INVALID, "trans_a", PARAM(P_TRANS_A, 2)),
	C(F_GEMM, E_INVALID, "trans_b", PARAM(P_TRANS_B, -1)),
	C(F_GEMM, E_SHAPE, "a|b", PARAM(P_TRANS_A, 1)),
	C(F_GEMM, OK, NULL, PARAM(P_TRANS_A, 1), SHAPE("a", 0, 32), SHAPE("a", 1, 3)),
	C(F_GEMM, OK, NULL, PARAM(P_TRANS_B, 1), SHAPE("b", 0, 8), SHAPE("b", 1, 32)),
	C(F_GEMM, E_DTYPE, NULL, DTYPE("a", GLLMK_F16)),
	C(F_GEMM, E_DTYPE, NULL, DTYPE("b", GLLMK_Q8_0), SHAPE("b", 1, 32)),
	C(F_GEMM, E_DTYPE, NULL, DTYPE("c", GLLMK_I32)),
	C(F_GEMM, E_SHAPE, "c|b", SHAPE("c", 1, 9)),
	C(F_GEMM, E_SHAPE, "c|a", SHAPE("c", 0, 2)),
	C(F_GEMM, E_SHAPE, "a|b", SHAPE("b", 0, 31)),
	C(F_GEMM, E_ALIAS, "c|a", ALIAS("c", "a", 0)),
	C(F_GEMM, E_ALIAS, "c|b", ALIAS("c", "b", 900)),
	C(F_GEMM, OK, NULL, PARAM(P_TRANS_A, 0), ALIAS("c", "a", 384)),

	/* dequantize: y f32; x anything but i32 */
	C(F_DEQUANTIZE, E_DTYPE, NULL, DTYPE("x", GLLMK_I32)),
	C(F_DEQUANTIZE, E_DTYPE, NULL, DTYPE("y", GLLMK_F16)),
	C(F_DEQUANTIZE, E_DTYPE, NULL, DTYPE("y", GLLMK_Q8_0)),
	C(F_DEQUANTIZE, OK, NULL, DTYPE("x", GLLMK_F32)),
	C(F_DEQUANTIZE, OK, NULL, DTYPE("x", GLLMK_F16)),
	C(F_DEQUANTIZE, OK, NULL, DTYPE("x", GLLMK_Q4_0)),
	C(F_DEQUANTIZE, OK, NULL, DTYPE("x", GLLMK_Q4_K), SHAPE("x", 1, 256), SHAPE("y", 1, 256)),
	C(F_DEQUANTIZE, E_BLOCK, NULL, DTYPE("x", GLLMK_Q4_K)),
	C(F_DEQUANTIZE, E_BLOCK, NULL, SHAPE("x", 1, 40), SHAPE("y", 1, 40)),
	C(F_DEQUANTIZE, E_SHAPE, "y|x", SHAPE("y", 1, 32)),
	C(F_DEQUANTIZE, E_SHAPE, "y|x", NDIM("y", 1), SHAPE("y", 0, 128)),
	C(F_DEQUANTIZE, E_ALIAS, "y|x", ALIAS("y", "x", 36)),

	/* quantize: y q8_0 or q8_K; x f32 */
	C(F_QUANTIZE, E_DTYPE, NULL, DTYPE("y", GLLMK_Q4_0)),
	C(F_QUANTIZE, E_DTYPE, NULL, DTYPE("y", GLLMK_F32)),
	C(F_QUANTIZE, E_DTYPE, NULL, DTYPE("y", GLLMK_Q4_K), SHAPE("y", 1, 256), SHAPE("x", 1, 256)),
	C(F_QUANTIZE, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_QUANTIZE, OK, NULL, DTYPE("y", GLLMK_Q8_K), SHAPE("y", 1, 256), SHAPE("x", 1, 256)),
	C(F_QUANTIZE, E_BLOCK, NULL, DTYPE("y", GLLMK_Q8_K)),
	C(F_QUANTIZE, E_BLOCK, NULL, SHAPE("y", 1, 48), SHAPE("x", 1, 48)),
	C(F_QUANTIZE, E_SHAPE, "y|x", SHAPE("x", 0, 3)),

	/* convert: f32, f16, bf16, any pair */
	C(F_CONVERT, E_DTYPE, NULL, DTYPE("y", GLLMK_I32)),
	C(F_CONVERT, E_DTYPE, NULL, DTYPE("x", GLLMK_Q8_0)),
	C(F_CONVERT, E_DTYPE, NULL, DTYPE("y", GLLMK_Q4_0)),
	C(F_CONVERT, OK, NULL, DTYPE("y", GLLMK_BF16)),
	C(F_CONVERT, OK, NULL, DTYPE("y", GLLMK_F32), DTYPE("x", GLLMK_F16)),
	C(F_CONVERT, E_SHAPE, "y|x", SHAPE("y", 0, 3)),

	/* add, mul: f32; b broadcasts into a; in place allowed */
	C(F_ADD, E_DTYPE, NULL, DTYPE("a", GLLMK_Q4_0)),
	C(F_ADD, E_DTYPE, NULL, DTYPE("b", GLLMK_F16)),
	C(F_ADD, E_DTYPE, NULL, DTYPE("y", GLLMK_F16)),
	C(F_ADD, E_DTYPE, NULL, DTYPE("a", GLLMK_I32)),
	C(F_ADD, OK, NULL, SHAPE("b", 0, 1)),
	C(F_ADD, OK, NULL, SHAPE("b", 1, 1)),
	C(F_ADD, OK, NULL, NDIM("b", 1), SHAPE("b", 0, 32)),
	C(F_ADD, OK, NULL, NDIM("b", 3), SHAPE("b", 0, 2), SHAPE("b", 1, 3), SHAPE("b", 2, 32)),
	/* Views past the core's fast check (an outer stride of 2^28 or more):
	 * the full rules decide, valid or not. */
	C(F_ADD, OK, NULL, SHAPE("b", 0, 1), STRIDE("b", 0, 1 << 30)),
	C(F_SCALE, OK, NULL, SHAPE("y", 0, 1), SHAPE("x", 0, 1), STRIDE("y", 0, INT64_C(1) << 40)),
	C(F_SCALE, E_BOUNDS, "x", STRIDE("x", 0, 1 << 30)),
	C(F_SCALE, E_BOUNDS, "y", STRIDE("y", 0, INT64_C(1) << 40)),
	C(F_ADD, E_SHAPE, "b|a", SHAPE("b", 0, 2)),
	C(F_ADD, E_SHAPE, "b|a", SHAPE("b", 1, 16)),
	C(F_ADD, E_SHAPE, "b|a", NDIM("b", 4), SHAPE("b", 2, 3), SHAPE("b", 3, 32)),
	C(F_ADD, E_SHAPE, "y|a", SHAPE("y", 0, 1)),
	C(F_ADD, E_SHAPE, "y|a", SHAPE("a", 1, 1)),
	C(F_ADD, OK, NULL, ALIAS("y", "a", 0)),
	C(F_ADD, E_ALIAS, "y|a", ALIAS("y", "a", 4)),
	C(F_ADD, E_ALIAS, "y|b", ALIAS("y", "b", 0)),
	C(F_ADD, OK, NULL, ALIAS("y", "a", 768)),
	C(F_ADD, E_ALIAS, "y", STRIDE("y", 0, 128)),
	C(F_ADD, E_ALIAS, "y", STRIDE("y", 1, 0)),
	C(F_ADD, OK, NULL, STRIDE("b", 0, 0)),
	C(F_ADD, OK, NULL, STRIDE("a", 1, 0)),
	C(F_ADD, OK, NULL, STRIDE("y", 0, 512), BUFSIZE("y", 128)),
	C(F_ADD, E_BOUNDS, NULL, STRIDE("y", 0, 512), BUFSIZE("y", -1)),
	C(F_ADD, E_ALIGN, NULL, STRIDE("a", 1, 130)),
	C(F_MUL, E_DTYPE, NULL, DTYPE("a", GLLMK_Q4_0)),
	C(F_MUL, E_DTYPE, NULL, DTYPE("b", GLLMK_BF16)),
	C(F_MUL, E_SHAPE, "b|a", SHAPE("b", 0, 4)),
	C(F_MUL, OK, NULL, ALIAS("y", "a", 0)),
	C(F_MUL, E_ALIAS, "y|a", ALIAS("y", "a", 128)),

	/* scale and the unary ops: f32, same shape, in place allowed */
	C(F_SCALE, E_DTYPE, NULL, DTYPE("x", GLLMK_I32)),
	C(F_SCALE, E_DTYPE, NULL, DTYPE("y", GLLMK_F16)),
	C(F_SCALE, E_SHAPE, "y|x", SHAPE("y", 1, 31)),
	C(F_SCALE, E_SHAPE, "y|x", NDIM("y", 1), SHAPE("y", 0, 64)),
	C(F_SCALE, OK, NULL, ALIAS("y", "x", 0)),
	C(F_SCALE, E_ALIAS, "y|x", ALIAS("y", "x", 4)),
	C(F_SCALE, E_ALIAS, "y|x", ALIAS("y", "x", 128)),
	C(F_SCALE, E_ALIAS, "y|x", ALIAS("x", "y", 124)),
	C(F_SCALE, E_ALIAS, "y|x", ALIAS("y", "x", 0), STRIDE("y", 0, 256), BUFSIZE("x", 128)),
	C(F_SCALE, E_OVERFLOW, "y|x", NDIM("y", 1), SHAPE("y", 0, P2(62)), NDIM("x", 1), SHAPE("x", 0, P2(62))),
	/* 2^61 f32 = 2^63 bytes: fits uint64_t, not int64_t (strides are int64_t). */
	C(F_SCALE, E_OVERFLOW, "y|x", NDIM("y", 1), SHAPE("y", 0, P2(61)), NDIM("x", 1), SHAPE("x", 0, P2(61))),
	C(F_SCALE, E_OVERFLOW, "y|x", SHAPE("y", 0, P2(57)), SHAPE("x", 0, P2(57))),
	C(F_SCALE, E_OVERFLOW, "y|x", SHAPE("y", 0, P2(56)), SHAPE("x", 0, P2(56))), /* 2^63 bytes */
	/* INT64_MIN: the fast path's "shape - 1" once overflowed here (UBSan) */
	C(F_SCALE, E_SHAPE, "x", SHAPE("x", 0, INT64_MIN)),
	C(F_SCALE, E_SHAPE, "x", NDIM("x", 1), SHAPE("x", 0, INT64_MIN)),
	C(F_SILU, OK, NULL, ALIAS("y", "x", 0)),
	C(F_SILU, E_DTYPE, NULL, DTYPE("x", GLLMK_Q8_0)),
	C(F_GELU_TANH, OK, NULL, ALIAS("y", "x", 0)),
	C(F_GELU_TANH, E_DTYPE, NULL, DTYPE("x", GLLMK_BF16)),
	C(F_GELU_ERF, OK, NULL, ALIAS("y", "x", 0)),
	C(F_GELU_ERF, E_SHAPE, "y|x", SHAPE("x", 0, 1)),
	C(F_RELU, OK, NULL, ALIAS("y", "x", 0)),
	C(F_RELU, E_DTYPE, NULL, DTYPE("y", GLLMK_I32)),
	C(F_TANH, OK, NULL, ALIAS("y", "x", 0)),
	C(F_TANH, E_ALIAS, "y|x", ALIAS("y", "x", 64)),
	C(F_EXP, OK, NULL, ALIAS("y", "x", 0)),
	C(F_EXP, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),

	/* swiglu: y, gate, up f32 of one shape */
	C(F_SWIGLU, E_DTYPE, NULL, DTYPE("gate", GLLMK_I32)),
	C(F_SWIGLU, E_DTYPE, NULL, DTYPE("up", GLLMK_F16)),
	C(F_SWIGLU, E_SHAPE, "up|y|gate", SHAPE("up", 1, 16)),
	C(F_SWIGLU, E_SHAPE, "up|y|gate", SHAPE("up", 0, 1)),
	C(F_SWIGLU, E_SHAPE, "y|gate", SHAPE("gate", 0, 1)),
	C(F_SWIGLU, OK, NULL, ALIAS("y", "gate", 0)),
	C(F_SWIGLU, OK, NULL, ALIAS("y", "up", 0)),
	C(F_SWIGLU, E_ALIAS, "y|up", ALIAS("y", "up", 8)),

	/* rms_norm, layer_norm: eps >= 0 (finite); w, b NULL or f32 [n] */
	C(F_RMS_NORM, E_INVALID, NULL, PARAM(P_EPS, -1e-6)),
	C(F_RMS_NORM, E_INVALID, NULL, PARAM(P_EPS, NaN)),
	C(F_RMS_NORM, E_INVALID, NULL, PARAM(P_EPS, INF)),
	C(F_RMS_NORM, OK, NULL, PARAM(P_EPS, 0)),
	C(F_RMS_NORM, E_SHAPE, "w|x", SHAPE("w", 0, 31)),
	C(F_RMS_NORM, E_SHAPE, NULL, NDIM("w", 2), SHAPE("w", 0, 1), SHAPE("w", 1, 32)),
	C(F_RMS_NORM, E_DTYPE, NULL, DTYPE("w", GLLMK_F16)),
	C(F_RMS_NORM, E_DTYPE, NULL, DTYPE("x", GLLMK_BF16)),
	C(F_RMS_NORM, E_SHAPE, "y|x", SHAPE("y", 0, 1)),
	C(F_RMS_NORM, OK, NULL, ALIAS("y", "x", 0)),
	C(F_RMS_NORM, E_ALIAS, "y|x", ALIAS("y", "x", 4)),
	C(F_LAYER_NORM, E_INVALID, NULL, PARAM(P_EPS, -1)),
	C(F_LAYER_NORM, E_INVALID, NULL, PARAM(P_EPS, NaN)),
	C(F_LAYER_NORM, E_SHAPE, "b|x", SHAPE("b", 0, 31)),
	C(F_LAYER_NORM, E_SHAPE, "w|x", SHAPE("w", 0, 64)),
	C(F_LAYER_NORM, E_DTYPE, NULL, DTYPE("b", GLLMK_F16)),
	C(F_LAYER_NORM, OK, NULL, NUL("w"), NUL("b")),
	C(F_LAYER_NORM, OK, NULL, ALIAS("y", "x", 0)),

	/* softmax: f32; mask NULL or f32 [R, N]; scale finite */
	C(F_SOFTMAX, E_DTYPE, NULL, DTYPE("y", GLLMK_F16)),
	C(F_SOFTMAX, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_SOFTMAX, E_DTYPE, NULL, DTYPE("mask", GLLMK_F16)),
	C(F_SOFTMAX, E_SHAPE, "mask", SHAPE("mask", 0, 3)),
	C(F_SOFTMAX, E_SHAPE, "mask|x", SHAPE("mask", 1, 31)),
	C(F_SOFTMAX, E_SHAPE, NULL, NDIM("mask", 3), SHAPE("mask", 0, 2), SHAPE("mask", 1, 4), SHAPE("mask", 2, 32)),
	C(F_SOFTMAX, E_SHAPE, "y|x", SHAPE("y", 1, 3)),
	C(F_SOFTMAX, E_INVALID, "scale", PARAM(P_SM_SCALE, NaN)),
	C(F_SOFTMAX, E_INVALID, "scale", PARAM(P_SM_SCALE, INF)),
	C(F_SOFTMAX, E_INVALID, "scale", PARAM(P_SM_SCALE, -INF)),
	C(F_SOFTMAX, OK, NULL, PARAM(P_SM_CAUSAL, 1)),
	C(F_SOFTMAX, OK, NULL, ALIAS("y", "x", 0)),
	C(F_SOFTMAX, E_ALIAS, "y|x", ALIAS("y", "x", 128)),
	C(F_SOFTMAX, E_ALIAS, "y|mask", ALIAS("y", "mask", 0)),
	C(F_SOFTMAX, E_SHAPE, "mask", NDIM("y", 1), NDIM("x", 1), SHAPE("y", 0, 32), SHAPE("x", 0, 32)),
	C(F_SOFTMAX, OK, NULL, NDIM("y", 1), NDIM("x", 1), NUL("mask")),

	/* rope: y, x f32 [T, H, D]; pos i32 [T]; n_rot even <= D; bases > 0 */
	C(F_ROPE, E_INVALID, NULL, PARAM(P_N_ROT, 3)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_N_ROT, 10)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_N_ROT, -2)),
	C(F_ROPE, OK, NULL, PARAM(P_N_ROT, 4)),
	C(F_ROPE, OK, NULL, PARAM(P_N_ROT, 8)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_ROPE_MODE, 2)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_ROPE_MODE, -1)),
	C(F_ROPE, OK, NULL, PARAM(P_ROPE_MODE, GLLMK_ROPE_NEOX)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_THETA, 0)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_THETA, -10000)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_THETA, NaN)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_FREQ, 0)),
	C(F_ROPE, E_INVALID, NULL, PARAM(P_FREQ, NaN)),
	C(F_ROPE, E_DTYPE, NULL, DTYPE("pos", GLLMK_F32)),
	C(F_ROPE, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_ROPE, E_SHAPE, "pos|x", SHAPE("pos", 0, 3)),
	C(F_ROPE, E_SHAPE, NULL, NDIM("pos", 2), SHAPE("pos", 1, 1)),
	C(F_ROPE, E_SHAPE, "x|y", NDIM("x", 2), NDIM("y", 2)),
	C(F_ROPE, E_SHAPE, "y|x", SHAPE("y", 1, 1)),
	C(F_ROPE, OK, NULL, ALIAS("y", "x", 0)),
	C(F_ROPE, E_ALIAS, "y|x", ALIAS("y", "x", 32)),

	/* rope_ext: rope's rules, freq_factors f32 [n_rot/2], YaRN scalars finite,
	 * betas > 0 (0 = default), n_ctx_orig > 0 with ext_factor, struct_size */
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_N_ROT, 3)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_N_ROT, 10)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_N_ROT, 4), SHAPE("freq_factors", 0, 2)),
	C(F_ROPE_EXT, E_SHAPE, "freq_factors", PARAM(P_N_ROT, 4)),
	C(F_ROPE_EXT, E_SHAPE, "freq_factors", SHAPE("freq_factors", 0, 8)),
	C(F_ROPE_EXT, E_SHAPE, "freq_factors", NDIM("freq_factors", 2), SHAPE("freq_factors", 0, 1)),
	C(F_ROPE_EXT, E_DTYPE, "freq_factors", DTYPE("freq_factors", GLLMK_F16)),
	C(F_ROPE_EXT, OK, NULL, NUL("freq_factors")),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_ROPE_MODE, 2)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_ROPE_MODE, GLLMK_ROPE_NEOX)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_THETA, 0)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_THETA, NaN)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_FREQ, 0)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_FREQ, INF)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_EXT_FACTOR, 1), PARAM(P_N_CTX_ORIG, 4096), PARAM(P_FREQ, 0.25)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_EXT_FACTOR, NaN), PARAM(P_N_CTX_ORIG, 4096)),
	C(F_ROPE_EXT, E_INVALID, "n_ctx_orig", PARAM(P_EXT_FACTOR, 1)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_N_CTX_ORIG, -1)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_N_CTX_ORIG, 4096)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_ATTN_FACTOR, INF)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_ATTN_FACTOR, 0.5)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_BETA_FAST, -32)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_BETA_SLOW, NaN)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_BETA_FAST, 16), PARAM(P_BETA_SLOW, 2)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_ROPE_STRUCT_SIZE, 0)),
	C(F_ROPE_EXT, E_INVALID, NULL, PARAM(P_ROPE_STRUCT_SIZE, 16)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_ROPE_STRUCT_SIZE, 20)),
	C(F_ROPE_EXT, OK, NULL, PARAM(P_ROPE_STRUCT_SIZE, 4096)),
	C(F_ROPE_EXT, E_DTYPE, NULL, DTYPE("pos", GLLMK_F32)),
	C(F_ROPE_EXT, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_ROPE_EXT, E_SHAPE, "pos|x", SHAPE("pos", 0, 3)),
	C(F_ROPE_EXT, E_SHAPE, "y|x", SHAPE("y", 1, 1)),
	C(F_ROPE_EXT, OK, NULL, ALIAS("y", "x", 0)),
	C(F_ROPE_EXT, E_ALIAS, "y|x", ALIAS("y", "x", 32)),
	C(F_ROPE_EXT, E_ALIAS, "y|freq_factors", ALIAS("y", "freq_factors", 0)),
	C(F_ROPE_EXT, E_ALIAS, "y|pos", ALIAS("y", "pos", 0)),

	/* kv_store: cache [S, Hkv, D] or [nblk, B, Hkv, D] of f32, f16, bf16,
	 * q8_0, q4_0; x f32 [T, Hkv, D]; slots i32 [T] in [-1, slots held) */
	C(F_KV_STORE, OK, NULL, DTYPE("cache", GLLMK_F32)),
	C(F_KV_STORE, OK, NULL, DTYPE("cache", GLLMK_BF16)),
	C(F_KV_STORE, OK, NULL, DTYPE("cache", GLLMK_Q8_0)),
	C(F_KV_STORE, OK, NULL, DTYPE("cache", GLLMK_Q4_0)),
	C(F_KV_STORE, E_DTYPE, "cache", DTYPE("cache", GLLMK_Q4_K), SHAPE("cache", 2, 256), SHAPE("x", 2, 256)),
	C(F_KV_STORE, E_DTYPE, "cache", DTYPE("cache", GLLMK_I32)),
	C(F_KV_STORE, E_BLOCK, "cache", DTYPE("cache", GLLMK_Q4_0), SHAPE("cache", 2, 16), SHAPE("x", 2, 16)),
	C(F_KV_STORE, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_KV_STORE, E_DTYPE, NULL, DTYPE("slots", GLLMK_F32)),
	C(F_KV_STORE, E_SHAPE, "cache", NDIM("cache", 2)),
	C(F_KV_STORE, E_SHAPE, "cache|x", SHAPE("cache", 1, 4)),
	C(F_KV_STORE, E_SHAPE, "cache|x", SHAPE("x", 2, 64)),
	C(F_KV_STORE, E_SHAPE, "slots|x", SHAPE("slots", 0, 4)),
	C(F_KV_STORE, E_SHAPE, NULL, NDIM("x", 2)),
	C(F_KV_STORE, E_SHAPE, NULL, NDIM("slots", 2), SHAPE("slots", 1, 1)),
	C(F_KV_STORE, OK, NULL, I32("slots", 0, 9), I32("slots", 1, -1), I32("slots", 2, 4)),
	C(F_KV_STORE, E_BOUNDS, "slots", I32("slots", 1, 9), I32("slots", 2, 10)),
	C(F_KV_STORE, E_BOUNDS, "slots", I32("slots", 0, 4), I32("slots", 2, -2)),
	C(F_KV_STORE, E_ALIAS, "cache|x", ALIAS("cache", "x", 0)),
	C(F_KV_STORE, E_ALIAS, "cache|slots", ALIAS("cache", "slots", 0)),
	C(F_KV_STORE_PAGED, OK, NULL, DTYPE("cache", GLLMK_F32)),
	C(F_KV_STORE_PAGED, OK, NULL, DTYPE("cache", GLLMK_Q4_0)),
	C(F_KV_STORE_PAGED, OK, NULL, I32("slots", 0, 11), I32("slots", 1, -1), I32("slots", 2, 5)),
	C(F_KV_STORE_PAGED, E_BOUNDS, "slots", I32("slots", 0, 7), I32("slots", 1, 12)),
	C(F_KV_STORE_PAGED, E_SHAPE, "cache|x", SHAPE("cache", 2, 3)),
	C(F_KV_STORE_PAGED, E_SHAPE, "cache", NDIM("cache", 5)),
	C(F_KV_STORE_PAGED, E_BLOCK, "cache", SHAPE("cache", 3, 48), SHAPE("x", 2, 48)),
	C(F_KV_STORE_PAGED, E_ALIAS, "cache|x", ALIAS("cache", "x", 0)),

	/* get_rows: y f32 [n, K]; table [V, K] any dtype but i32; ids i32 [n] */
	C(F_GET_ROWS, E_DTYPE, NULL, DTYPE("ids", GLLMK_F32)),
	C(F_GET_ROWS, E_DTYPE, NULL, DTYPE("table", GLLMK_I32)),
	C(F_GET_ROWS, E_DTYPE, NULL, DTYPE("y", GLLMK_F16)),
	C(F_GET_ROWS, OK, NULL, DTYPE("table", GLLMK_F32)),
	C(F_GET_ROWS, OK, NULL, DTYPE("table", GLLMK_F16)),
	C(F_GET_ROWS, OK, NULL, DTYPE("table", GLLMK_BF16)),
	C(F_GET_ROWS, OK, NULL, DTYPE("table", GLLMK_Q4_K), SHAPE("table", 1, 256), SHAPE("y", 1, 256)),
	C(F_GET_ROWS, E_BLOCK, NULL, SHAPE("table", 1, 40), SHAPE("y", 1, 40)),
	C(F_GET_ROWS, E_BLOCK, NULL, DTYPE("table", GLLMK_Q6_K)),
	C(F_GET_ROWS, E_SHAPE, "y|table", SHAPE("y", 1, 64)),
	C(F_GET_ROWS, E_SHAPE, "y|ids", SHAPE("y", 0, 4)),
	C(F_GET_ROWS, E_SHAPE, NULL, NDIM("ids", 2), SHAPE("ids", 1, 1)),
	C(F_GET_ROWS, E_SHAPE, NULL, NDIM("table", 3), SHAPE("table", 2, 32)),
	C(F_GET_ROWS, E_OVERFLOW, NULL, SHAPE("table", 0, P2(61))),
	CW(F_GET_ROWS, E_BOUNDS, "ids", I32("ids", 1, 10)),
	CW(F_GET_ROWS, E_BOUNDS, "ids", I32("ids", 2, -1)),
	CW(F_GET_ROWS, E_BOUNDS, "ids", I32("ids", 0, INT32_MAX)),
	C(F_GET_ROWS, OK, NULL, I32("ids", 1, 9)),
	C(F_GET_ROWS, E_ALIAS, "y|ids", ALIAS("y", "ids", 0)),
	C(F_GET_ROWS, OK, NULL, STRIDE("table", 0, 0)),

	/* attention, contiguous KV */
	C(F_ATTENTION, E_DTYPE, NULL, DTYPE("q", GLLMK_F16)),
	C(F_ATTENTION, E_DTYPE, NULL, DTYPE("out", GLLMK_F16)),
	C(F_ATTENTION, E_DTYPE, NULL, DTYPE("k", GLLMK_I32), DTYPE("v", GLLMK_I32)),
	C(F_ATTENTION, E_DTYPE, NULL, DTYPE("k", GLLMK_BF16), DTYPE("v", GLLMK_BF16)),
	C(F_ATTENTION, E_DTYPE, NULL, DTYPE("k", GLLMK_Q8_0), SHAPE("k", 2, 32), SHAPE("q", 2, 32)),
	C(F_ATTENTION, E_DTYPE, "v|k", DTYPE("k", GLLMK_F16)),
	C(F_ATTENTION, E_DTYPE, NULL, DTYPE("mask", GLLMK_F16)),
	C(F_ATTENTION, OK, NULL, DTYPE("k", GLLMK_F16), DTYPE("v", GLLMK_F16)),
	C(F_ATTENTION, E_SHAPE, "q|k", SHAPE("k", 1, 3), SHAPE("v", 1, 3)),
	C(F_ATTENTION, OK, NULL, SHAPE("k", 1, 1), SHAPE("v", 1, 1)),
	C(F_ATTENTION, OK, NULL, SHAPE("k", 1, 4), SHAPE("v", 1, 4)),
	C(F_ATTENTION, E_SHAPE, "k|q", SHAPE("k", 2, 4)),
	C(F_ATTENTION, E_SHAPE, "v|out", SHAPE("v", 2, 4)),
	C(F_ATTENTION, OK, NULL, SHAPE("v", 2, 4), SHAPE("out", 2, 4)),
	C(F_ATTENTION, E_SHAPE, "v|k", SHAPE("v", 0, 5)),
	C(F_ATTENTION, E_SHAPE, "out|q", SHAPE("out", 0, 1)),
	C(F_ATTENTION, E_SHAPE, NULL, NDIM("q", 2)),
	C(F_ATTENTION, E_INVALID, NULL, PARAM(P_KV_LEN, 7)),
	C(F_ATTENTION, E_INVALID, NULL, PARAM(P_KV_LEN, -1)),
	C(F_ATTENTION, OK, NULL, PARAM(P_KV_LEN, 4)),
	C(F_ATTENTION, OK, NULL, PARAM(P_KV_LEN, 6), PARAM(P_ATT_CAUSAL, 0)),
	C(F_ATTENTION, E_SHAPE, "mask", SHAPE("mask", 1, 5)),
	C(F_ATTENTION, OK, NULL, SHAPE("mask", 1, 5), PARAM(P_KV_LEN, 5)),
	C(F_ATTENTION, E_SHAPE, "mask|q", SHAPE("mask", 0, 3)),
	C(F_ATTENTION, E_INVALID, "scale", PARAM(P_ATT_SCALE, NaN)),
	C(F_ATTENTION, E_ALIAS, "out|q", ALIAS("out", "q", 0)),
	C(F_ATTENTION, E_ALIAS, "out|k", ALIAS("out", "k", 128)),
	C(F_ATTENTION, E_ALIAS, "out|mask", ALIAS("out", "mask", 0)),
	C(F_ATTENTION, OK, NULL, ALIAS("out", "q", 256)),

	/* attention, paged KV: kv_len required, block ids in range */
	C(F_ATTENTION_PAGED, E_INVALID, NULL, PARAM(P_KV_LEN, 0)),
	C(F_ATTENTION_PAGED, E_INVALID, NULL, PARAM(P_KV_LEN, 9)),
	C(F_ATTENTION_PAGED, OK, NULL, PARAM(P_KV_LEN, 8), SHAPE("mask", 1, 8)),
	C(F_ATTENTION_PAGED, E_SHAPE, "mask", PARAM(P_KV_LEN, 8)),
	C(F_ATTENTION_PAGED, OK, NULL, PARAM(P_KV_LEN, 1), PARAM(P_ATT_CAUSAL, 0)),
	C(F_ATTENTION_PAGED, E_DTYPE, NULL, DTYPE("block_table", GLLMK_F32)),
	C(F_ATTENTION_PAGED, E_SHAPE, NULL, NDIM("block_table", 2), SHAPE("block_table", 1, 1)),
	C(F_ATTENTION_PAGED, E_SHAPE, NULL, NDIM("k", 3), NDIM("v", 3)),
	C(F_ATTENTION_PAGED, E_SHAPE, "v|k", SHAPE("v", 1, 2)),
	CW(F_ATTENTION_PAGED, E_BOUNDS, "block_table", I32("block_table", 0, 3)),
	CW(F_ATTENTION_PAGED, E_BOUNDS, "block_table", I32("block_table", 1, -1)),
	C(F_ATTENTION_PAGED, OK, NULL, I32("block_table", 0, 2), I32("block_table", 1, 1)),
	/* Pages past ceil(kv_len / B) are never read. */
	C(F_ATTENTION_PAGED, OK, NULL, I32("block_table", 1, 99), PARAM(P_KV_LEN, 4)),
	C(F_ATTENTION_PAGED, E_ALIAS, "out|block_table", ALIAS("out", "block_table", 0)),
	C(F_ATTENTION_PAGED, E_SHAPE, "k", NUL("block_table")),

	/* argmax: ids i32 [R]; x f32 [R, N] or [N] */
	C(F_ARGMAX, E_DTYPE, NULL, DTYPE("ids", GLLMK_F32)),
	C(F_ARGMAX, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_ARGMAX, E_DTYPE, NULL, DTYPE("x", GLLMK_I32)),
	C(F_ARGMAX, E_SHAPE, "ids|x", SHAPE("ids", 0, 4)),
	C(F_ARGMAX, E_SHAPE, NULL, NDIM("x", 3), SHAPE("x", 2, 1)),
	C(F_ARGMAX, OK, NULL, NDIM("x", 1), SHAPE("x", 0, 10), SHAPE("ids", 0, 1)),
	C(F_ARGMAX, E_SHAPE, "ids|x", NDIM("x", 1), SHAPE("x", 0, 10)),
	C(F_ARGMAX, E_ALIAS, "ids|x", ALIAS("ids", "x", 4)),

	/* sample: top_p in (0, 1] or >= 1, temperature finite, uniform in [0, 1) */
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_TOP_P, 0)),
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_TOP_P, -0.5)),
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_TOP_P, NaN)),
	C(F_SAMPLE, OK, NULL, PARAM(P_TOP_P, 1)),
	C(F_SAMPLE, OK, NULL, PARAM(P_TOP_P, 1.5)),
	C(F_SAMPLE, OK, NULL, PARAM(P_TOP_P, 1e-6)),
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_TEMP, NaN)),
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_TEMP, INF)),
	C(F_SAMPLE, OK, NULL, PARAM(P_TEMP, 0)),
	C(F_SAMPLE, OK, NULL, PARAM(P_TEMP, -1)),
	C(F_SAMPLE, OK, NULL, PARAM(P_TOP_K, -1)),
	C(F_SAMPLE, OK, NULL, PARAM(P_TOP_K, 1000)),
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_UNIFORM0, 1)),
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_UNIFORM0, -0.01)),
	C(F_SAMPLE, E_INVALID, NULL, PARAM(P_UNIFORM0, NaN)),
	C(F_SAMPLE, OK, NULL, PARAM(P_UNIFORM0, 0)),
	C(F_SAMPLE, OK, NULL, PARAM(P_UNIFORM0, 0.99999994)),
	C(F_SAMPLE, E_DTYPE, NULL, DTYPE("logits", GLLMK_I32)),
	C(F_SAMPLE, E_DTYPE, NULL, DTYPE("ids", GLLMK_F32)),
	C(F_SAMPLE, E_SHAPE, "ids|logits", SHAPE("ids", 0, 2)),

	/* buffers */
	C(F_BUFFER_ALLOC, E_NULL, NULL, CTX_NULL),
	C(F_BUFFER_ALLOC, E_NULL, NULL, NUL("out")),
	C(F_BUFFER_ALLOC, E_INVALID, NULL, PARAM(P_SIZE, 0)),
	C(F_BUFFER_ALLOC, OK, NULL, PARAM(P_SIZE, 1)),
	C(F_BUFFER_WRAP, E_NULL, NULL, CTX_NULL),
	C(F_BUFFER_WRAP, E_NULL, NULL, NUL("host")),
	C(F_BUFFER_WRAP, E_NULL, NULL, NUL("out")),
	C(F_BUFFER_WRAP, E_INVALID, NULL, PARAM(P_SIZE, 0)),
	C(F_BUFFER_WRAP, OK, NULL, NOTHING),
	C(F_BUFFER_WRITE, E_NULL, NULL, NUL("buf")),
	C(F_BUFFER_WRITE, E_NULL, NULL, NUL("src")),
	C(F_BUFFER_WRITE, E_BOUNDS, "buf", PARAM(P_OFF, 1)),
	C(F_BUFFER_WRITE, E_BOUNDS, "buf", PARAM(P_SIZE, 65)),
	C(F_BUFFER_WRITE, E_BOUNDS, "buf", PARAM(P_OFF, 64), PARAM(P_SIZE, 1)),
	C(F_BUFFER_WRITE, E_BOUNDS, "buf", PARAM(P_OFF, P2(63)), PARAM(P_SIZE, 16)),
	/* offset + size past 2^64: abi/gllmk.h names no status; E_OVERFLOW assumed. */
	C(F_BUFFER_WRITE, E_OVERFLOW, "buf", PARAM(P_OFF, -8), PARAM(P_SIZE, 16)),
	C(F_BUFFER_WRITE, E_OVERFLOW, "buf", PARAM(P_OFF, 8), PARAM(P_SIZE, -4)),
	C(F_BUFFER_WRITE, OK, NULL, PARAM(P_OFF, 32), PARAM(P_SIZE, 32)),
	C(F_BUFFER_WRITE, OK, NULL, PARAM(P_OFF, 64), PARAM(P_SIZE, 0)),
	C(F_BUFFER_READ, E_NULL, NULL, NUL("buf")),
	C(F_BUFFER_READ, E_NULL, NULL, NUL("dst")),
	C(F_BUFFER_READ, E_BOUNDS, "buf", PARAM(P_OFF, 4)),
	C(F_BUFFER_READ, E_BOUNDS, "buf", PARAM(P_SIZE, 65)),
	C(F_BUFFER_READ, E_OVERFLOW, "buf", PARAM(P_OFF, -1), PARAM(P_SIZE, 2)),
	C(F_BUFFER_READ, OK, NULL, PARAM(P_OFF, 63), PARAM(P_SIZE, 1)),
	C(F_BUFFER_COPY, E_NULL, NULL, NUL("dst")),
	C(F_BUFFER_COPY, E_NULL, NULL, NUL("src")),
	C(F_BUFFER_COPY, E_BOUNDS, "dst", PARAM(P_OFF, 1)),
	C(F_BUFFER_COPY, E_BOUNDS, "src", PARAM(P_OFF2, 1)),
	C(F_BUFFER_COPY, E_BOUNDS, "dst|src", PARAM(P_SIZE, 65)),
	C(F_BUFFER_COPY, E_OVERFLOW, "src", PARAM(P_OFF2, -16), PARAM(P_SIZE, 32)),
	C(F_BUFFER_COPY, E_OVERFLOW, "dst", PARAM(P_OFF, -16), PARAM(P_SIZE, 32)),
	C(F_BUFFER_COPY, E_CONTEXT, "dst|src", BUF_OTHER("src")),
	C(F_BUFFER_COPY, E_CONTEXT, "dst|src", BUF_OTHER("dst")),
	C(F_BUFFER_COPY, E_ALIAS, "dst|src", ALIAS("src", "dst", 0), PARAM(P_OFF2, 16), PARAM(P_SIZE, 32)),
	C(F_BUFFER_COPY, OK, NULL, ALIAS("src", "dst", 0), PARAM(P_OFF2, 32), PARAM(P_SIZE, 32)),
	C(F_BUFFER_COPY, OK, NULL, PARAM(P_OFF, 48), PARAM(P_OFF2, 0), PARAM(P_SIZE, 16)),
	C(F_SYNC, E_NULL, NULL, CTX_NULL),
	C(F_SYNC, OK, NULL, NOTHING),

	/* open, survey, dtype sizes */
	C(F_OPEN, E_NULL, NULL, NUL("ctx")),
	C(F_OPEN, E_INVALID, NULL, PARAM(P_STRUCT_SIZE, 0)),
	C(F_OPEN, E_INVALID, NULL, PARAM(P_STRUCT_SIZE, 4)),
	C(F_OPEN, E_INVALID, NULL, PARAM(P_FLAGS, 0x80)),
	C(F_OPEN, E_INVALID, NULL, PARAM(P_N_THREADS, -1)),
	C(F_OPEN, OK, NULL, PARAM(P_N_THREADS, 1)),
	C(F_SURVEY, E_NULL, NULL, NUL("out")),
	C(F_SURVEY, E_INVALID, NULL, PARAM(P_STRUCT_SIZE, 0)),
	C(F_SURVEY, OK, NULL, NOTHING),
	C(F_ROW_BYTES, E_NULL, NULL, NUL("bytes")),
	C(F_ROW_BYTES, E_DTYPE, NULL, PARAM(P_DTYPE, 4)),
	C(F_ROW_BYTES, E_DTYPE, NULL, PARAM(P_DTYPE, 99)),
	C(F_ROW_BYTES, E_DTYPE, NULL, PARAM(P_DTYPE, -1)),
	C(F_ROW_BYTES, E_BLOCK, "n", PARAM(P_DTYPE, GLLMK_Q4_0), PARAM(P_N, 48)),
	C(F_ROW_BYTES, E_BLOCK, "n", PARAM(P_DTYPE, GLLMK_Q6_K), PARAM(P_N, 32)),
	C(F_ROW_BYTES, E_OVERFLOW, "n", PARAM(P_DTYPE, GLLMK_F32), PARAM(P_N, P2(62))),
	C(F_ROW_BYTES, E_INVALID, NULL, PARAM(P_N, -1)),
	C(F_ROW_BYTES, OK, NULL, PARAM(P_DTYPE, GLLMK_Q4_K), PARAM(P_N, 512)),

	/* sigmoid, clamp, softcap: f32, same shape, in place allowed */
	C(F_SIGMOID, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_SIGMOID, E_DTYPE, NULL, DTYPE("y", GLLMK_I32)),
	C(F_SIGMOID, E_SHAPE, "y|x", SHAPE("y", 1, 31)),
	C(F_SIGMOID, OK, NULL, ALIAS("y", "x", 0)),
	C(F_SIGMOID, E_ALIAS, "y|x", ALIAS("y", "x", 4)),
	/* clamp: lo <= hi, neither NaN; infinities allowed */
	C(F_CLAMP, E_INVALID, "lo|hi", PARAM(P_LO, 2)),
	C(F_CLAMP, E_INVALID, NULL, PARAM(P_LO, NaN)),
	C(F_CLAMP, E_INVALID, NULL, PARAM(P_HI, NaN)),
	C(F_CLAMP, OK, NULL, PARAM(P_LO, 1)),
	C(F_CLAMP, OK, NULL, PARAM(P_LO, -INF)),
	C(F_CLAMP, OK, NULL, PARAM(P_HI, INF)),
	C(F_CLAMP, E_INVALID, "lo|hi", PARAM(P_LO, INF)),
	C(F_CLAMP, E_DTYPE, NULL, DTYPE("x", GLLMK_BF16)),
	C(F_CLAMP, E_SHAPE, "y|x", NDIM("y", 1), SHAPE("y", 0, 64)),
	C(F_CLAMP, OK, NULL, ALIAS("y", "x", 0)),
	/* softcap: c finite and > 0 */
	C(F_SOFTCAP, E_INVALID, NULL, PARAM(P_CAP, 0)),
	C(F_SOFTCAP, E_INVALID, NULL, PARAM(P_CAP, -30)),
	C(F_SOFTCAP, E_INVALID, NULL, PARAM(P_CAP, INF)),
	C(F_SOFTCAP, E_INVALID, NULL, PARAM(P_CAP, NaN)),
	C(F_SOFTCAP, OK, NULL, PARAM(P_CAP, 1e-3)),
	C(F_SOFTCAP, E_DTYPE, NULL, DTYPE("y", GLLMK_F16)),
	C(F_SOFTCAP, E_SHAPE, "y|x", SHAPE("x", 0, 3)),

	/* glu, split: gate, up and y one shape; in place on gate or up */
	C(F_GLU, E_NULL, "p", NUL("p")),
	C(F_GLU, E_INVALID, NULL, PARAM(P_GLU_OP, 5)),
	C(F_GLU, E_INVALID, NULL, PARAM(P_GLU_OP, -1)),
	C(F_GLU, OK, NULL, PARAM(P_GLU_OP, GLLMK_GLU_SWIGLU_OAI)),
	C(F_GLU, OK, NULL, PARAM(P_GLU_OP, GLLMK_GLU_RELU)),
	C(F_GLU, E_INVALID, NULL, PARAM(P_GLU_SWAPPED, 2)),
	C(F_GLU, E_INVALID, NULL, PARAM(P_GLU_ALPHA, NaN)),
	C(F_GLU, E_INVALID, NULL, PARAM(P_GLU_LIMIT, -1)),
	C(F_GLU, E_INVALID, NULL, PARAM(P_GLU_LIMIT, INF)),
	C(F_GLU, OK, NULL, PARAM(P_GLU_OP, GLLMK_GLU_SWIGLU_OAI), PARAM(P_GLU_ALPHA, 1), PARAM(P_GLU_LIMIT, 3)),
	C(F_GLU, E_INVALID, NULL, PARAM(P_STRUCT_SIZE, 0)),
	C(F_GLU, E_INVALID, NULL, PARAM(P_STRUCT_SIZE, 4)),
	C(F_GLU, OK, NULL, PARAM(P_STRUCT_SIZE, 8)),   /* op only: the rest read as 0 */
	C(F_GLU, OK, NULL, PARAM(P_STRUCT_SIZE, 256)), /* a newer, longer struct */
	C(F_GLU, E_DTYPE, NULL, DTYPE("up", GLLMK_F16)),
	C(F_GLU, E_DTYPE, NULL, DTYPE("gate", GLLMK_I32)),
	C(F_GLU, E_SHAPE, "y|up", SHAPE("up", 1, 16)),
	C(F_GLU, E_SHAPE, "y|gate", SHAPE("gate", 0, 3)),
	C(F_GLU, OK, NULL, ALIAS("y", "gate", 0)),
	C(F_GLU, OK, NULL, ALIAS("y", "up", 0)),
	C(F_GLU, E_ALIAS, "y|up", ALIAS("y", "up", 8)),
	/* glu, fused (up NULL): gate [.., 2N], y [.., N], y apart from gate */
	C(F_GLU_FUSED, OK, NULL, PARAM(P_GLU_SWAPPED, 1)),
	C(F_GLU_FUSED, OK, NULL, PARAM(P_GLU_OP, GLLMK_GLU_GELU_ERF)),
	C(F_GLU_FUSED, E_SHAPE, "y|gate", SHAPE("y", 1, 32)),
	C(F_GLU_FUSED, E_SHAPE, "y|gate", SHAPE("gate", 1, 31)),
	C(F_GLU_FUSED, E_SHAPE, "y|gate", SHAPE("y", 0, 1)),
	C(F_GLU_FUSED, E_SHAPE, "y|gate", NDIM("y", 1), SHAPE("y", 0, 16)),
	C(F_GLU_FUSED, E_ALIAS, "y|gate", ALIAS("y", "gate", 0)),
	C(F_GLU_FUSED, E_ALIAS, "y|gate", ALIAS("y", "gate", 128)),
	C(F_GLU_FUSED, OK, NULL, ALIAS("y", "gate", 256)),

	/* top_k: x f32 [R, N], ids i32 [R, k], values f32 [R, k] or NULL; k <= N */
	C(F_TOP_K, E_DTYPE, NULL, DTYPE("ids", GLLMK_F32)),
	C(F_TOP_K, E_DTYPE, NULL, DTYPE("values", GLLMK_I32)),
	C(F_TOP_K, E_DTYPE, NULL, DTYPE("x", GLLMK_F16)),
	C(F_TOP_K, E_SHAPE, "ids|x", SHAPE("ids", 1, 11), SHAPE("values", 1, 11)),
	C(F_TOP_K, OK, NULL, SHAPE("ids", 1, 10), SHAPE("values", 1, 10)),
	C(F_TOP_K, OK, NULL, SHAPE("ids", 1, 1), SHAPE("values", 1, 1)),
	C(F_TOP_K, E_SHAPE, "ids|x", SHAPE("ids", 0, 2), SHAPE("values", 0, 2)),
	C(F_TOP_K, E_SHAPE, "values|ids", SHAPE("values", 1, 3)),
	C(F_TOP_K, E_SHAPE, NULL, NDIM("x", 1), SHAPE("x", 0, 10)),
	C(F_TOP_K, E_SHAPE, NULL, NDIM("ids", 3), SHAPE("ids", 2, 1)),
	C(F_TOP_K, E_SHAPE, NULL, NDIM("values", 1), SHAPE("values", 0, 4)),
	C(F_TOP_K, E_ALIAS, "ids|x", ALIAS("ids", "x", 0)),
	C(F_TOP_K, E_ALIAS, "values|x", ALIAS("values", "x", 40)),
	C(F_TOP_K, E_ALIAS, "values|ids", ALIAS("values", "ids", 8)),
	C(F_TOP_K, OK, NULL, ALIAS("values", "ids", 48)),

	/* moe_route: logits f32 [T, E], ids i32 [T, k], weights f32 [T, k], bias f32 [E] */
	C(F_MOE_ROUTE, E_NULL, "p", NUL("p")),
	C(F_MOE_ROUTE, E_DTYPE, NULL, DTYPE("ids", GLLMK_F32)),
	C(F_MOE_ROUTE, E_DTYPE, NULL, DTYPE("weights", GLLMK_I32)),
	C(F_MOE_ROUTE, E_DTYPE, NULL, DTYPE("logits", GLLMK_BF16)),
	C(F_MOE_ROUTE, E_DTYPE, NULL, DTYPE("bias", GLLMK_F16)),
	C(F_MOE_ROUTE, E_SHAPE, "ids|logits", SHAPE("ids", 1, 9), SHAPE("weights", 1, 9)),
	C(F_MOE_ROUTE, OK, NULL, SHAPE("ids", 1, 8), SHAPE("weights", 1, 8)),
	C(F_MOE_ROUTE, E_SHAPE, "ids|logits", SHAPE("ids", 0, 2), SHAPE("weights", 0, 2)),
	C(F_MOE_ROUTE, E_SHAPE, "weights|ids", SHAPE("weights", 1, 3)),
	C(F_MOE_ROUTE, E_SHAPE, "bias|logits", SHAPE("bias", 0, 7)),
	C(F_MOE_ROUTE, E_SHAPE, NULL, NDIM("bias", 2), SHAPE("bias", 0, 1)),
	C(F_MOE_ROUTE, E_SHAPE, NULL, NDIM("logits", 1), SHAPE("logits", 0, 8)),
	C(F_MOE_ROUTE, E_ALIAS, "ids|logits", ALIAS("ids", "logits", 0)),
	C(F_MOE_ROUTE, E_ALIAS, "weights|ids", ALIAS("weights", "ids", 4)),
	C(F_MOE_ROUTE, E_ALIAS, "weights|bias", ALIAS("weights", "bias", 0)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_GATING, 3)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_GATING, -1)),
	C(F_MOE_ROUTE, OK, NULL, PARAM(P_GATING, GLLMK_GATING_SIGMOID)),
	C(F_MOE_ROUTE, OK, NULL, PARAM(P_GATING, GLLMK_GATING_SOFTMAX_AFTER)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_NORM, 2)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_MOE_SCALE, NaN)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_MOE_SCALE, INF)),
	C(F_MOE_ROUTE, OK, NULL, PARAM(P_MOE_SCALE, 2.5)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_N_GROUP, -1)),
	C(F_MOE_ROUTE, OK, NULL, PARAM(P_N_GROUP, 1)),
	/* grouped: E divisible by n_group, 2+ experts a group, 1 <= topk_group <= n_group,
	 * k <= the experts of topk_group groups */
	C(F_MOE_ROUTE, OK, NULL, PARAM(P_N_GROUP, 4), PARAM(P_TOPK_GROUP, 1)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_N_GROUP, 3), PARAM(P_TOPK_GROUP, 1)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_N_GROUP, 8), PARAM(P_TOPK_GROUP, 1)),
	C(F_MOE_ROUTE, E_INVALID, "n_group", PARAM(P_N_GROUP, 512), PARAM(P_TOPK_GROUP, 1), SHAPE("logits", 1, 1024),
	  SHAPE("bias", 0, 1024)),
	C(F_MOE_ROUTE, E_INVALID, "topk_group", PARAM(P_N_GROUP, 4)),
	C(F_MOE_ROUTE, E_INVALID, "topk_group", PARAM(P_N_GROUP, 4), PARAM(P_TOPK_GROUP, 5)),
	C(F_MOE_ROUTE, E_INVALID, "k|topk_group", PARAM(P_N_GROUP, 4), PARAM(P_TOPK_GROUP, 1),
	  SHAPE("ids", 1, 3), SHAPE("weights", 1, 3)),
	C(F_MOE_ROUTE, OK, NULL, PARAM(P_N_GROUP, 4), PARAM(P_TOPK_GROUP, 2), SHAPE("ids", 1, 4),
	  SHAPE("weights", 1, 4)),
	C(F_MOE_ROUTE, E_INVALID, NULL, PARAM(P_STRUCT_SIZE, 0)),
	C(F_MOE_ROUTE, OK, NULL, PARAM(P_STRUCT_SIZE, 8)), /* gating only: the rest read as 0 */
};

/* What every tensor argument of every operator gets. want_optional: the
 * status when the argument may be NULL (only M_NULL differs). */
struct tensor_rule {
	struct mut m;
	gllmk_status want;
	int min_ndim; /* the rule needs a tensor of at least this rank */
};

static const struct tensor_rule tensor_rules[] = {
	{ .m = NUL(NULL), .want = GLLMK_E_NULL, .min_ndim = 1 },
	{ .m = BUF_NULL(NULL), .want = GLLMK_E_NULL, .min_ndim = 1 },
	{ .m = BUF_OTHER(NULL), .want = GLLMK_E_CONTEXT, .min_ndim = 1 },
	{ .m = DTYPE(NULL, 4), .want = GLLMK_E_DTYPE, .min_ndim = 1 },
	{ .m = DTYPE(NULL, 5), .want = GLLMK_E_DTYPE, .min_ndim = 1 },
	{ .m = DTYPE(NULL, 9), .want = GLLMK_E_DTYPE, .min_ndim = 1 },
	{ .m = DTYPE(NULL, 99), .want = GLLMK_E_DTYPE, .min_ndim = 1 },
	{ .m = DTYPE(NULL, -1), .want = GLLMK_E_DTYPE, .min_ndim = 1 },
	{ .m = DTYPE(NULL, GLLMK_DTYPE_LIMIT), .want = GLLMK_E_DTYPE, .min_ndim = 1 },
	{ .m = NDIM(NULL, 0), .want = GLLMK_E_SHAPE, .min_ndim = 1 },
	{ .m = NDIM(NULL, 5), .want = GLLMK_E_SHAPE, .min_ndim = 1 },
	{ .m = NDIM(NULL, -1), .want = GLLMK_E_SHAPE, .min_ndim = 1 },
	{ .m = SHAPE(NULL, -1, 0), .want = GLLMK_E_SHAPE, .min_ndim = 1 },
	{ .m = SHAPE(NULL, 0, -3), .want = GLLMK_E_SHAPE, .min_ndim = 1 },
	{ .m = SHAPE(NULL, 0, 0), .want = GLLMK_E_SHAPE, .min_ndim = 1 },
	{ .m = BUFSIZE(NULL, -1), .want = GLLMK_E_BOUNDS, .min_ndim = 1 },  /* one byte past the end */
	{ .m = OFFSET(NULL, 64), .want = GLLMK_OK, .min_ndim = 1 },         /* ends exactly at the end */
	{ .m = ODD_OFFSET, .want = GLLMK_E_ALIGN, .min_ndim = 1 },
	{ .m = WRONG_INNER_STRIDE, .want = GLLMK_E_SHAPE, .min_ndim = 1 },  /* status not named by the documents: E_SHAPE assumed */
	{ .m = STRIDE(NULL, -1, 0), .want = GLLMK_OK, .min_ndim = 1 },      /* innermost 0 means contiguous */
	{ .m = NEGATIVE_STRIDE, .want = GLLMK_E_SHAPE, .min_ndim = 2 },    /* status not named by the documents: E_SHAPE assumed */
	{ .m = ODD_STRIDE, .want = GLLMK_E_ALIGN, .min_ndim = 2 },
};

/* ----------------------------------------------------------------- the run */

static struct {
	const char *plugin_dir;
	const char *plugin;
	gllmk_context *ctx, *other;
} run = { .plugin = "cpu-generic" };

static gllmk_options run_opts(void)
{
	return (gllmk_options){
		.struct_size = sizeof(gllmk_options),
		.flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_NO_LAYERS,
		.plugins = run.plugin,
		.plugin_dir = run.plugin_dir,
	};
}

/* ------------------------------------------------------- building a call */

struct call {
	const struct vcase *vc;
	const struct fn_desc *fd;
	gllmk_context *ctx;
	gllmk_tensor t[MAX_ARGS];
	int passed[MAX_ARGS];           /* 0: NULL is passed */
	int home[MAX_ARGS];             /* whose buffer arg i lives in */
	int other_ctx[MAX_ARGS];
	int64_t grow[MAX_ARGS];         /* extra bytes of arg i's buffer */
	uint64_t span[MAX_ARGS];        /* bytes from arg i's offset to its end */
	uint64_t size[MAX_ARGS];
	gllmk_buffer *buf[MAX_ARGS];    /* owned, by home */
	unsigned char *snap[MAX_ARGS];  /* contents before the call */
	unsigned char host[2][64];      /* buffer_* host memory: [1] src/dst */
	unsigned char host_snap[64];
	struct params p;
	gllmk_buffer *made_buf;         /* alloc/wrap results */
	gllmk_context *made_ctx;        /* open's */
	gllmk_report *made_report;      /* survey's */
	uint64_t row_bytes;
};

static int arg_index(const struct fn_desc *fd, const char *name)
{
	for (int i = 0; i < MAX_ARGS && fd->args[i].name; i++)
		if (strcmp(fd->args[i].name, name) == 0)
			return i;
	fail_msg("%s has no argument %s", fd->name, name);
	return -1;
}

static int is_tensor(const struct call *c, int i)
{
	return c->fd->args[i].name && c->fd->args[i].ndim >= 0;
}

static int64_t dtype_align(int32_t dt)
{
	return dt == GLLMK_F32 || dt == GLLMK_I32 || dt == GLLMK_Q8_K ? 4 : 2;
}

/* Contiguous strides for t's dtype and shape, as gllmk_tensor_make: an
 * unknown dtype counts as 4 bytes, a product that overflows saturates. */
static void set_strides(gllmk_tensor *t)
{
	int64_t be = gllmk_dtype_block_elems(t->dtype), bb = gllmk_dtype_block_bytes(t->dtype);
	int n = t->ndim < 0 ? 0 : t->ndim > GLLMK_MAX_DIMS ? GLLMK_MAX_DIMS : t->ndim;
	int64_t span;

	if (!be)
		be = 1, bb = 4;
	if (n == 0)
		return;
	t->stride[n - 1] = be == 1 ? bb : 0;
	if (t->shape[n - 1] < 0 || __builtin_mul_overflow(t->shape[n - 1] / be, bb, &span))
		span = INT64_MAX;
	for (int d = n - 2; d >= 0; d--) {
		t->stride[d] = span;
		if (t->shape[d] < 0 || __builtin_mul_overflow(span, t->shape[d], &span))
			span = INT64_MAX;
	}
}

/* Bytes from t's offset to its end, or 0 when t is not a sane view (then
 * its good twin's size is used, the case being about something else). */
static uint64_t view_span(const gllmk_tensor *t)
{
	int64_t be = gllmk_dtype_block_elems(t->dtype), bb = gllmk_dtype_block_bytes(t->dtype);
	uint64_t span, step;

	if (!be || t->ndim < 1 || t->ndim > GLLMK_MAX_DIMS)
		return 0;
	for (int d = 0; d < t->ndim; d++)
		if (t->shape[d] < 1 || t->shape[d] > P2(24) || t->stride[d] < 0)
			return 0;
	span = (uint64_t)((t->shape[t->ndim - 1] + be - 1) / be * bb);
	for (int d = 0; d < t->ndim - 1; d++) {
		step = (uint64_t)(t->shape[d] - 1) * (uint64_t)t->stride[d];
		if (step > P2(26))
			return 0;
		span += step;
	}
	return span;
}

static void good_tensor(const struct arg_spec *a, gllmk_tensor *t)
{
	*t = (gllmk_tensor){ .dtype = a->dtype, .ndim = a->ndim };
	for (int d = 0; d < a->ndim; d++)
		t->shape[d] = a->shape[d];
	set_strides(t);
}

static void set_param(struct params *p, const struct mut *m)
{
	double f = m->f;
	int64_t i = m->i;

	switch ((enum param)m->d) {
	case P_S: p->s = (float)f; break;
	case P_EPS: p->eps = (float)f; break;
	case P_TRANS_A: p->gemm.trans_a = (int32_t)i; break;
	case P_TRANS_B: p->gemm.trans_b = (int32_t)i; break;
	case P_SM_SCALE: p->softmax.scale = (float)f; break;
	case P_SM_CAUSAL: p->softmax.causal = (int32_t)i; break;
	case P_ROPE_MODE: p->rope.mode = p->rope_ext.mode = (int32_t)i; break;
	case P_N_ROT: p->rope.n_rot = p->rope_ext.n_rot = (int32_t)i; break;
	case P_THETA: p->rope.theta_base = p->rope_ext.theta_base = (float)f; break;
	case P_FREQ: p->rope.freq_scale = p->rope_ext.freq_scale = (float)f; break;
	case P_EXT_FACTOR: p->rope_ext.ext_factor = (float)f; break;
	case P_ATTN_FACTOR: p->rope_ext.attn_factor = (float)f; break;
	case P_BETA_FAST: p->rope_ext.beta_fast = (float)f; break;
	case P_BETA_SLOW: p->rope_ext.beta_slow = (float)f; break;
	case P_N_CTX_ORIG: p->rope_ext.n_ctx_orig = (int32_t)i; break;
	case P_ROPE_STRUCT_SIZE: p->rope_ext.struct_size = (uint32_t)i; break;
	case P_ATT_SCALE: p->attn.scale = (float)f; break;
	case P_ATT_CAUSAL: p->attn.causal = (int32_t)i; break;
	case P_KV_LEN: p->attn.kv_len = (int32_t)i; break;
	case P_TEMP: p->sample.temperature = (float)f; break;
	case P_TOP_K: p->sample.top_k = (int32_t)i; break;
	case P_TOP_P: p->sample.top_p = (float)f; break;
	case P_UNIFORM0: p->uniform[0] = (float)f; break;
	case P_OFF: p->off = (uint64_t)i; break;
	case P_OFF2: p->off2 = (uint64_t)i; break;
	case P_SIZE: p->size = (uint64_t)i; break;
	case P_N: p->n = i; break;
	case P_DTYPE: p->dtype = (int32_t)i; break;
	case P_STRUCT_SIZE: /* of whichever struct the function takes */
		p->opts.struct_size = p->glu.struct_size = p->moe.struct_size = (uint32_t)i;
		break;
	case P_FLAGS: p->opts.flags = (uint32_t)i; break;
	case P_N_THREADS: p->opts.n_threads = (int32_t)i; break;
	case P_LO: p->lo = (float)f; break;
	case P_HI: p->hi = (float)f; break;
	case P_CAP: p->cap = (float)f; break;
	case P_GLU_OP: p->glu.op = (int32_t)i; break;
	case P_GLU_SWAPPED: p->glu.swapped = (int32_t)i; break;
	case P_GLU_ALPHA: p->glu.alpha = (float)f; break;
	case P_GLU_LIMIT: p->glu.limit = (float)f; break;
	case P_GATING: p->moe.gating = (int32_t)i; break;
	case P_N_GROUP: p->moe.n_group = (int32_t)i; break;
	case P_TOPK_GROUP: p->moe.topk_group = (int32_t)i; break;
	case P_NORM: p->moe.norm = (int32_t)i; break;
	case P_MOE_SCALE: p->moe.scale = (float)f; break;
	case P_COUNT: break;
	}
}

static void default_params(struct call *c)
{
	c->p = (struct params){
		.s = 0.5f,
		.eps = 1e-5f,
		.gemm = { .alpha = 1.0f },
		.softmax = { .scale = 1.0f },
		.rope = { .mode = GLLMK_ROPE_NORMAL, .theta_base = 10000.0f, .freq_scale = 1.0f },
		.rope_ext = { .struct_size = sizeof(gllmk_rope_ext_params), .mode = GLLMK_ROPE_NORMAL,
			      .theta_base = 10000.0f, .freq_scale = 1.0f },
		.attn = { .causal = 1, .kv_len = c->vc->fn == F_ATTENTION_PAGED ? 6 : 0 },
		.sample = { .temperature = 0.8f, .top_k = 5, .top_p = 0.9f },
		.lo = -1.0f,
		.hi = 1.0f,
		.cap = 30.0f,
		.glu = { .struct_size = sizeof(gllmk_glu_params), .op = GLLMK_GLU_SILU },
		.moe = { .struct_size = sizeof(gllmk_moe_route_params), .gating = GLLMK_GATING_SOFTMAX, .norm = 1 },
		.uniform = { 0.1f, 0.5f, 0.9f, 0.3f },
		.size = 64,
		.n = 64,
		.dtype = GLLMK_F32,
		.opts = run_opts(),
	};
}

/* Descriptor mutations: dtype, rank and dims first (strides follow), then
 * strides and offsets. */
static void apply_descriptors(struct call *c)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int j = 0; j < MAX_MUTS && c->vc->m[j].k; j++) {
			const struct mut *m = &c->vc->m[j];
			gllmk_tensor *t;
			int i;

			if (m->k == M_PARAM) {
				if (pass == 0)
					set_param(&c->p, m);
				continue;
			}
			if (!m->arg || !strcmp(m->arg, "ctx") || !is_tensor(c, i = arg_index(c->fd, m->arg)))
				continue;
			t = &c->t[i];
			if (pass == 0) {
				switch (m->k) {
				case M_DTYPE: t->dtype = (int32_t)m->i; break;
				case M_NDIM: t->ndim = (int32_t)m->i; break;
				case M_SHAPE: t->shape[m->d < 0 ? t->ndim + m->d : m->d] = m->i; break;
				default: continue;
				}
				set_strides(t);
				continue;
			}
			switch (m->k) {
			case M_STRIDE: t->stride[m->d < 0 ? t->ndim + m->d : m->d] = m->i; break;
			case M_STRIDE_WRONG: t->stride[t->ndim - 1] = t->stride[t->ndim - 1] ? 2 * t->stride[t->ndim - 1] : 4; break;
			case M_STRIDE_NEG: t->stride[0] = -t->stride[0]; break;
			case M_STRIDE_ODD: t->stride[0] += dtype_align(t->dtype) / 2; break;
			case M_OFFSET: t->offset = (uint64_t)m->i; break;
			case M_OFFSET_ODD: t->offset = (uint64_t)dtype_align(t->dtype) / 2; break;
			case M_BUFSIZE: c->grow[i] += m->i; break;
			default: break;
			}
		}
	}
}

/* Fills a fresh buffer: outputs poisoned with 0xA5 bytes (an ordinary
 * float, so an op that runs on a poisoned input still changes the bytes
 * it writes, unlike NaN), i32 inputs zero (valid ids, positions and block
 * ids), float inputs 0.25, anything else zero bytes (valid quant blocks). */
static void fill_bytes(unsigned char *bytes, uint64_t n, int output, int32_t dtype)
{
	static const float quarter = 0.25f;
	static const uint16_t quarter_f16 = 0x3400;

	if (output) {
		memset(bytes, 0xA5, n);
	} else if (dtype == GLLMK_F32) {
		for (uint64_t b = 0; b + 4 <= n; b += 4)
			memcpy(bytes + b, &quarter, 4);
	} else if (dtype == GLLMK_F16) {
		for (uint64_t b = 0; b + 2 <= n; b += 2)
			memcpy(bytes + b, &quarter_f16, 2);
	} else {
		memset(bytes, 0, n);
	}
}

static gllmk_buffer *make_buffer(gllmk_context *ctx, uint64_t size, int output, int32_t dtype)
{
	unsigned char *bytes = malloc(size);
	gllmk_buffer *b = NULL;

	assert_non_null(bytes);
	fill_bytes(bytes, size, output, dtype);
	if (gllmk_buffer_alloc(ctx, size, &b) != GLLMK_OK || gllmk_buffer_write(b, 0, bytes, size) != GLLMK_OK)
		fail_msg("cannot make a %" PRIu64 "-byte buffer: %s", size, gllmk_last_error());
	free(bytes);
	return b;
}

static void write_i32(struct call *c, int i, int64_t idx, int32_t v)
{
	if (gllmk_buffer_write(c->t[i].buf, c->t[i].offset + (uint64_t)idx * 4, &v, 4) != GLLMK_OK)
		fail_msg("cannot write %s[%" PRId64 "]: %s", c->fd->args[i].name, idx, gllmk_last_error());
}

/* Buffers for the operator's tensors, sized to end exactly where the views
 * end (plus what the case adds), aliasing and foreign contexts applied. */
static void build_op_buffers(struct call *c, const gllmk_tensor *good)
{
	for (int i = 0; i < MAX_ARGS; i++)
		c->home[i] = i;
	for (int j = 0; j < MAX_MUTS && c->vc->m[j].k; j++) {
		const struct mut *m = &c->vc->m[j];

		if (m->k == M_ALIAS)
			c->home[arg_index(c->fd, m->arg)] = arg_index(c->fd, m->arg2);
		if (m->k == M_BUF_OTHER)
			c->other_ctx[arg_index(c->fd, m->arg)] = 1;
	}
	for (int i = 0; i < MAX_ARGS; i++) {
		if (!is_tensor(c, i) || !c->passed[i])
			continue;
		c->span[i] = view_span(&c->t[i]);
		if (!c->span[i])
			c->span[i] = view_span(&good[i]) ? view_span(&good[i]) : 64;
		c->size[i] = c->t[i].offset + c->span[i];
	}
	for (int j = 0; j < MAX_MUTS && c->vc->m[j].k; j++) {
		const struct mut *m = &c->vc->m[j];
		int a, b;

		if (m->k != M_ALIAS)
			continue;
		a = arg_index(c->fd, m->arg);
		b = arg_index(c->fd, m->arg2);
		c->t[a].offset = c->t[b].offset + (uint64_t)m->i;
		if (c->t[a].offset + c->span[a] > c->size[b])
			c->size[b] = c->t[a].offset + c->span[a];
	}
	for (int i = 0; i < MAX_ARGS; i++) {
		int64_t size;

		if (c->home[i] != i || !is_tensor(c, i) || !c->passed[i])
			continue;
		size = (int64_t)c->size[i];
		for (int k = 0; k < MAX_ARGS; k++)
			if (c->home[k] == i)
				size += c->grow[k];
		c->size[i] = size > 0 ? (uint64_t)size : 1;
		c->buf[i] = make_buffer(c->other_ctx[i] ? run.other : run.ctx, c->size[i], i == 0,
					c->fd->args[i].dtype);
	}
	for (int i = 0; i < MAX_ARGS; i++)
		if (is_tensor(c, i) && c->passed[i])
			c->t[i].buf = c->buf[c->home[i]];
}

/* Host memory and buffers of the buffer_* functions: 64 bytes each. */
static void build_buffer_fn(struct call *c)
{
	fill_bytes(c->host[0], 64, 0, GLLMK_F32);
	fill_bytes(c->host[1], 64, c->vc->fn == F_BUFFER_READ, GLLMK_F32);
	switch (c->vc->fn) {
	case F_BUFFER_WRITE:
		c->buf[0] = make_buffer(run.ctx, 64, 1, GLLMK_F32);
		memcpy(c->host[1], c->host[0], 64);
		break;
	case F_BUFFER_READ:
		c->buf[0] = make_buffer(run.ctx, 64, 0, GLLMK_F32);
		break;
	case F_BUFFER_COPY:
		c->home[0] = 0;
		c->home[1] = 1;
		for (int j = 0; j < MAX_MUTS && c->vc->m[j].k; j++) {
			const struct mut *m = &c->vc->m[j];

			if (m->k == M_BUF_OTHER)
				c->other_ctx[arg_index(c->fd, m->arg)] = 1;
			if (m->k == M_ALIAS)
				c->home[1] = 0;
		}
		c->buf[0] = make_buffer(c->other_ctx[0] ? run.other : run.ctx, 64, 1, GLLMK_F32);
		if (c->home[1] == 1)
			c->buf[1] = make_buffer(c->other_ctx[1] ? run.other : run.ctx, 64, 0, GLLMK_F32);
		break;
	default:
		break;
	}
	for (int i = 0; i < 2; i++)
		c->size[i] = c->buf[i] ? 64 : 0;
}

static void build_call(struct call *c, const struct vcase *vc)
{
	gllmk_tensor good[MAX_ARGS];

	memset(c, 0, sizeof(*c));
	c->vc = vc;
	c->fd = &fn_descs[vc->fn];
	c->ctx = run.ctx;
	default_params(c);
	for (int i = 0; i < MAX_ARGS && c->fd->args[i].name; i++) {
		c->passed[i] = c->fd->args[i].ndim != 0;
		if (is_tensor(c, i))
			good_tensor(&c->fd->args[i], &c->t[i]);
		good[i] = c->t[i];
	}
	apply_descriptors(c);
	if (c->fd->is_op)
		build_op_buffers(c, good);
	else
		build_buffer_fn(c);
	for (int j = 0; j < MAX_MUTS && vc->m[j].k; j++) {
		const struct mut *m = &vc->m[j];

		switch (m->k) {
		case M_NULL: c->passed[arg_index(c->fd, m->arg)] = 0; break;
		case M_CTX_NULL: c->ctx = NULL; break;
		case M_CTX_OTHER: c->ctx = run.other; break;
		case M_BUF_NULL: c->t[arg_index(c->fd, m->arg)].buf = NULL; break;
		case M_I32: write_i32(c, arg_index(c->fd, m->arg), m->d, (int32_t)m->i); break;
		default: break;
		}
	}
}

/* ------------------------------------------------------------ the calls */

#define TP(c, i) ((c)->passed[i] ? &(c)->t[i] : NULL)
#define PP(c, i, field) ((c)->passed[i] ? &(c)->p.field : NULL)

static gllmk_status invoke_op(struct call *c)
{
	gllmk_context *ctx = c->ctx;

	switch (c->vc->fn) {
	case F_MATMUL: return gllmk_matmul(ctx, TP(c, 0), TP(c, 1), TP(c, 2), TP(c, 3));
	case F_GEMM: return gllmk_gemm(ctx, TP(c, 0), TP(c, 1), TP(c, 2), PP(c, 3, gemm));
	case F_DEQUANTIZE: return gllmk_dequantize(ctx, TP(c, 0), TP(c, 1));
	case F_QUANTIZE: return gllmk_quantize(ctx, TP(c, 0), TP(c, 1));
	case F_CONVERT: return gllmk_convert(ctx, TP(c, 0), TP(c, 1));
	case F_ADD: return gllmk_add(ctx, TP(c, 0), TP(c, 1), TP(c, 2));
	case F_MUL: return gllmk_mul(ctx, TP(c, 0), TP(c, 1), TP(c, 2));
	case F_SCALE: return gllmk_scale(ctx, TP(c, 0), TP(c, 1), c->p.s);
	case F_SILU: return gllmk_silu(ctx, TP(c, 0), TP(c, 1));
	case F_GELU_TANH: return gllmk_gelu_tanh(ctx, TP(c, 0), TP(c, 1));
	case F_GELU_ERF: return gllmk_gelu_erf(ctx, TP(c, 0), TP(c, 1));
	case F_RELU: return gllmk_relu(ctx, TP(c, 0), TP(c, 1));
	case F_TANH: return gllmk_tanh(ctx, TP(c, 0), TP(c, 1));
	case F_EXP: return gllmk_exp(ctx, TP(c, 0), TP(c, 1));
	case F_SWIGLU: return gllmk_swiglu(ctx, TP(c, 0), TP(c, 1), TP(c, 2));
	case F_RMS_NORM: return gllmk_rms_norm(ctx, TP(c, 0), TP(c, 1), TP(c, 2), c->p.eps);
	case F_LAYER_NORM: return gllmk_layer_norm(ctx, TP(c, 0), TP(c, 1), TP(c, 2), TP(c, 3), c->p.eps);
	case F_SOFTMAX: return gllmk_softmax(ctx, TP(c, 0), TP(c, 1), TP(c, 2), PP(c, 3, softmax));
	case F_ROPE: return gllmk_rope(ctx, TP(c, 0), TP(c, 1), TP(c, 2), PP(c, 3, rope));
	case F_GET_ROWS: return gllmk_get_rows(ctx, TP(c, 0), TP(c, 1), TP(c, 2));
	case F_ATTENTION:
	case F_ATTENTION_PAGED:
		return gllmk_attention(ctx, TP(c, 0), TP(c, 1), TP(c, 2), TP(c, 3), TP(c, 4), TP(c, 5), PP(c, 6, attn));
	case F_ARGMAX: return gllmk_argmax(ctx, TP(c, 0), TP(c, 1));
	case F_SAMPLE: return gllmk_sample(ctx, TP(c, 0), TP(c, 1), c->passed[2] ? c->p.uniform : NULL, PP(c, 3, sample));
	case F_SIGMOID: return gllmk_sigmoid(ctx, TP(c, 0), TP(c, 1));
	case F_CLAMP: return gllmk_clamp(ctx, TP(c, 0), TP(c, 1), c->p.lo, c->p.hi);
	case F_SOFTCAP: return gllmk_softcap(ctx, TP(c, 0), TP(c, 1), c->p.cap);
	case F_GLU:
	case F_GLU_FUSED:
		return gllmk_glu(ctx, TP(c, 0), TP(c, 1), TP(c, 2), PP(c, 3, glu));
	case F_TOP_K: return gllmk_top_k(ctx, TP(c, 0), TP(c, 1), TP(c, 2));
	case F_MOE_ROUTE: return gllmk_moe_route(ctx, TP(c, 0), TP(c, 1), TP(c, 2), TP(c, 3), PP(c, 4, moe));
	case F_ROPE_EXT: return gllmk_rope_ext(ctx, TP(c, 0), TP(c, 1), TP(c, 2), TP(c, 3), PP(c, 4, rope_ext));
	case F_KV_STORE:
	case F_KV_STORE_PAGED:
		return gllmk_kv_store(ctx, TP(c, 0), TP(c, 1), TP(c, 2));
	default: break;
	}
	fail_msg("not an operator: %d", (int)c->vc->fn);
	return GLLMK_E_INVALID;
}

static gllmk_status invoke_other(struct call *c)
{
	gllmk_buffer *b0 = c->passed[0] ? c->buf[0] : NULL;
	gllmk_buffer *b1 = c->passed[1] ? c->buf[c->home[1]] : NULL;
	struct params *p = &c->p;

	switch (c->vc->fn) {
	case F_BUFFER_ALLOC: return gllmk_buffer_alloc(c->ctx, p->size, c->passed[0] ? &c->made_buf : NULL);
	case F_BUFFER_WRAP:
		return gllmk_buffer_wrap(c->ctx, c->passed[0] ? c->host[0] : NULL, p->size,
					 c->passed[1] ? &c->made_buf : NULL);
	case F_BUFFER_WRITE: return gllmk_buffer_write(b0, p->off, c->passed[1] ? c->host[1] : NULL, p->size);
	case F_BUFFER_READ: return gllmk_buffer_read(b0, p->off, c->passed[1] ? c->host[1] : NULL, p->size);
	case F_BUFFER_COPY: return gllmk_buffer_copy(b0, p->off, b1, p->off2, p->size);
	case F_SYNC: return gllmk_sync(c->ctx);
	case F_OPEN: return gllmk_open(&p->opts, c->passed[0] ? &c->made_ctx : NULL);
	case F_SURVEY: return gllmk_survey(&p->opts, c->passed[0] ? &c->made_report : NULL);
	case F_ROW_BYTES: return gllmk_dtype_row_bytes(p->dtype, p->n, c->passed[0] ? &c->row_bytes : NULL);
	default: break;
	}
	fail_msg("not a buffer or loader function: %d", (int)c->vc->fn);
	return GLLMK_E_INVALID;
}

static void snapshot(struct call *c, unsigned char **into)
{
	for (int i = 0; i < MAX_ARGS; i++) {
		into[i] = NULL;
		if (!c->buf[i])
			continue;
		into[i] = malloc(c->size[i]);
		assert_non_null(into[i]);
		if (gllmk_buffer_read(c->buf[i], 0, into[i], c->size[i]) != GLLMK_OK)
			fail_msg("cannot read back a buffer: %s", gllmk_last_error());
	}
}

static void release_call(struct call *c)
{
	for (int i = 0; i < MAX_ARGS; i++) {
		gllmk_buffer_free(c->buf[i]);
		free(c->snap[i]);
	}
	gllmk_buffer_free(c->made_buf);
	gllmk_close(c->made_ctx);
	gllmk_report_free(c->made_report);
}

/* -------------------------------------------------------------- checking */

/* word occurs in text with no identifier character on either side. */
static int has_word(const char *text, const char *word, size_t n)
{
	for (const char *s = strstr(text, word); s; s = strstr(s + 1, word)) {
		char before = s == text ? ' ' : s[-1], after = s[n];
		int ident_before = before == '_' || (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
				   (before >= '0' && before <= '9');
		int ident_after = after == '_' || (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
				  (after >= '0' && after <= '9');

		if (!ident_before && !ident_after && !strncmp(s, word, n))
			return 1;
	}
	return 0;
}

/* Any alternative of "a|b|c" is a word of text; "*": any argument of fd
 * or ctx. */
static int names_arg(const char *text, const char *alts, const struct fn_desc *fd)
{
	char word[64];

	if (!strcmp(alts, "*")) {
		for (int i = 0; i < MAX_ARGS && fd->args[i].name; i++)
			if (has_word(text, fd->args[i].name, strlen(fd->args[i].name)))
				return 1;
		return has_word(text, "ctx", 3);
	}
	for (const char *a = alts; *a;) {
		size_t n = strcspn(a, "|");

		snprintf(word, sizeof(word), "%.*s", (int)n, a);
		if (has_word(text, word, n))
			return 1;
		a += n + (a[n] == '|');
	}
	return 0;
}

static const char *expected_arg(const struct vcase *vc)
{
	if (vc->arg)
		return vc->arg;
	if (vc->m[0].k == M_PARAM)
		return param_names[vc->m[0].d];
	return vc->m[0].arg ? vc->m[0].arg : "*";
}

/* One mutation in words: "w.shape[1]=48", "y in x's buffer at +4". */
static int describe_mut(const struct mut *m, char *out, size_t len)
{
	const char *a = m->arg ? m->arg : "";

	switch (m->k) {
	case M_NULL: return snprintf(out, len, "%s=NULL", a);
	case M_CTX_NULL: return snprintf(out, len, "ctx=NULL");
	case M_CTX_OTHER: return snprintf(out, len, "ctx=the other context");
	case M_BUF_NULL: return snprintf(out, len, "%s.buf=NULL", a);
	case M_BUF_OTHER: return snprintf(out, len, "%s's buffer from the other context", a);
	case M_DTYPE: return snprintf(out, len, "%s.dtype=%" PRId64, a, m->i);
	case M_NDIM: return snprintf(out, len, "%s.ndim=%" PRId64, a, m->i);
	case M_SHAPE: return snprintf(out, len, "%s.shape[%d]=%" PRId64, a, m->d, m->i);
	case M_STRIDE: return snprintf(out, len, "%s.stride[%d]=%" PRId64, a, m->d, m->i);
	case M_STRIDE_WRONG: return snprintf(out, len, "%s innermost stride wrong", a);
	case M_STRIDE_NEG: return snprintf(out, len, "%s.stride[0] negative", a);
	case M_STRIDE_ODD: return snprintf(out, len, "%s.stride[0] misaligned", a);
	case M_OFFSET: return snprintf(out, len, "%s.offset=%" PRId64 " (view ends at the buffer's end)", a, m->i);
	case M_OFFSET_ODD: return snprintf(out, len, "%s.offset misaligned", a);
	case M_BUFSIZE: return snprintf(out, len, "%s's buffer %+" PRId64 " byte(s)", a, m->i);
	case M_ALIAS: return snprintf(out, len, "%s in %s's buffer at +%" PRId64, a, m->arg2, m->i);
	case M_I32: return snprintf(out, len, "%s[%d]=%" PRId64, a, m->d, m->i);
	case M_PARAM: return snprintf(out, len, "%s=%g", param_names[m->d], m->f);
	case M_END: break;
	}
	return snprintf(out, len, "nothing");
}

static void describe(const struct vcase *vc, char *out, size_t len)
{
	size_t used = (size_t)snprintf(out, len, "%s(", fn_descs[vc->fn].name);

	for (int j = 0; j < MAX_MUTS && (j == 0 || vc->m[j].k) && used < len; j++) {
		if (j && used < len)
			used += (size_t)snprintf(out + used, len - used, ", ");
		if (used < len)
			used += (size_t)describe_mut(&vc->m[j], out + used, len - used);
	}
	if (used < len)
		snprintf(out + used, len - used, ") -> %s", gllmk_status_string(vc->want));
}

/* Runs one case; returns 0 when it holds, else prints why and returns 1. */
static int run_case(const struct vcase *vc)
{
	char what[256], why[512] = "";
	unsigned char *after[MAX_ARGS];
	struct call c;
	gllmk_status st;

	describe(vc, what, sizeof(what));
	build_call(&c, vc);
	snapshot(&c, c.snap);
	memcpy(c.host_snap, c.host[1], sizeof(c.host_snap));
	st = c.fd->is_op ? invoke_op(&c) : invoke_other(&c);

	if (st != vc->want) {
		snprintf(why, sizeof(why), "got %s (%d): %s", gllmk_status_string(st), (int)st, gllmk_last_error());
	} else if (st != GLLMK_OK) {
		const char *msg = gllmk_last_error();

		if (!strstr(msg, c.fd->name) || !names_arg(msg, expected_arg(vc), c.fd))
			snprintf(why, sizeof(why), "the message does not name %s and %s: \"%s\"", c.fd->name,
				 expected_arg(vc), msg);
		else if (!vc->may_write) {
			snapshot(&c, after);
			for (int i = 0; i < MAX_ARGS; i++) {
				if (c.snap[i] && memcmp(c.snap[i], after[i], c.size[i]))
					snprintf(why, sizeof(why), "it failed but wrote into %s's buffer",
						 c.fd->args[i].name ? c.fd->args[i].name : "a");
				free(after[i]);
			}
			if (memcmp(c.host_snap, c.host[1], sizeof(c.host_snap)))
				snprintf(why, sizeof(why), "it failed but wrote into the host memory");
		}
	}
	release_call(&c);
	if (!why[0])
		return 0;
	print_message("FAIL %s: %s\n", what, why);
	return 1;
}

/* Counts a case run and its failure. */
struct tally {
	int run, failed;
};

static void tally_case(struct tally *t, const struct vcase *vc)
{
	t->run++;
	t->failed += run_case(vc);
}

/* The rules of tensor_rules, made into cases for argument i of fn. */
static void run_rules(struct tally *t, enum fn fn, int i)
{
	const struct arg_spec *a = &fn_descs[fn].args[i];

	for (size_t r = 0; r < sizeof(tensor_rules) / sizeof(tensor_rules[0]); r++) {
		const struct tensor_rule *rule = &tensor_rules[r];
		struct vcase vc = { .fn = fn, .want = rule->want, .m = { rule->m } };

		if (a->ndim == 0 || a->ndim < rule->min_ndim)
			continue;
		if (rule->m.k == M_NULL && a->optional < 0)
			continue;
		if (rule->m.k == M_NULL && a->optional)
			vc.want = GLLMK_OK;
		vc.m[0].arg = a->name;
		tally_case(t, &vc);
	}
}

/* What tells two descriptions of one function apart in the test names. */
static const char *fn_variant(enum fn fn)
{
	return fn == F_ATTENTION_PAGED || fn == F_KV_STORE_PAGED ? " (paged)" : fn == F_GLU_FUSED ? " (fused)" : "";
}

static void test_fn(void **state)
{
	enum fn fn = (enum fn)(intptr_t)*state;
	const struct fn_desc *fd = &fn_descs[fn];
	struct tally t = { 0 };

	if (fd->is_op) {
		const struct vcase ctx_cases[] = {
			{ .fn = fn, .want = GLLMK_E_NULL, .arg = "ctx", .m = { CTX_NULL } },
			{ .fn = fn, .want = GLLMK_E_CONTEXT, .arg = "*", .m = { CTX_OTHER } },
			{ .fn = fn, .want = GLLMK_OK, .m = { NOTHING } },
		};

		for (size_t k = 0; k < sizeof(ctx_cases) / sizeof(ctx_cases[0]); k++)
			tally_case(&t, &ctx_cases[k]);
		for (int i = 0; i < MAX_ARGS && fd->args[i].name; i++) {
			struct vcase vc = { .fn = fn, .want = GLLMK_E_NULL, .m = { NUL(fd->args[i].name) } };

			if (fd->args[i].ndim < 0)
				tally_case(&t, &vc);
			else
				run_rules(&t, fn, i);
		}
	}
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		if (cases[k].fn == fn)
			tally_case(&t, &cases[k]);
	print_message("%s%s: %d of %d cases failed\n", fd->name, fn_variant(fn), t.failed, t.run);
	assert_int_equal(t.failed, 0);
}

/* The functions that return no status: they must take bad input quietly. */
static void test_no_status(void **state)
{
	gllmk_tensor t;
	int64_t shape[4] = { 2, 3, 4, 5 };

	(void)state;
	gllmk_close(NULL);
	gllmk_buffer_free(NULL);
	gllmk_report_free(NULL);
	assert_int_equal(gllmk_buffer_size(NULL), 0);
	assert_null(gllmk_context_report(NULL));
	assert_null(gllmk_context_plugin(NULL));
	assert_null(gllmk_dtype_name((gllmk_dtype)4));
	assert_null(gllmk_dtype_name((gllmk_dtype)99));
	assert_null(gllmk_dtype_name((gllmk_dtype)-1));
	assert_int_equal(gllmk_dtype_block_elems((gllmk_dtype)9), 0);
	assert_int_equal(gllmk_dtype_block_bytes((gllmk_dtype)-1), 0);
	assert_non_null(gllmk_status_string((gllmk_status)999));
	assert_non_null(gllmk_status_string((gllmk_status)-1));
	assert_non_null(gllmk_verdict_string((gllmk_verdict)999));
	t = gllmk_tensor_make(NULL, 0, (gllmk_dtype)99, 5, shape);
	assert_int_equal(t.ndim, 5);
	t = gllmk_tensor_make(NULL, 0, GLLMK_F32, 0, NULL);
	assert_int_equal(t.ndim, 0);
	t = gllmk_tensor_make(NULL, 0, GLLMK_F32, -1, shape);
	assert_int_equal(t.ndim, -1);
	t = gllmk_tensor_make(NULL, 0, GLLMK_F32, 2, (const int64_t[]){ P2(62), P2(62) });
	assert_int_equal(t.ndim, 2);
}

/* ------------------------------------------------------------------ main */

static int group_setup(void **state)
{
	gllmk_options opts = run_opts();

	(void)state;
	if (gllmk_open(&opts, &run.ctx) != GLLMK_OK || gllmk_open(&opts, &run.other) != GLLMK_OK) {
		fprintf(stderr, "cannot open %s in %s: %s\n", run.plugin, run.plugin_dir, gllmk_last_error());
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	gllmk_close(run.ctx);
	gllmk_close(run.other);
	return 0;
}

int main(int argc, char **argv)
{
	struct CMUnitTest tests[F_COUNT + 1];
	size_t n = 0;

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
	for (int fn = 0; fn < F_COUNT; fn++) {
		static char names[F_COUNT][48];

		snprintf(names[fn], sizeof(names[fn]), "%s%s", fn_descs[fn].name, fn_variant(fn));
		tests[n++] = (struct CMUnitTest){
			.name = names[fn],
			.test_func = test_fn,
			.initial_state = (void *)(intptr_t)fn,
		};
	}
	tests[n++] = (struct CMUnitTest){ .name = "functions without a status", .test_func = test_no_status };
	return _cmocka_run_group_tests("validation", tests, n, group_setup, group_teardown);
}
