/* One public function per operator: its rules (SPEC/OPERATORS.md), then one
 * indirect call through the context's dispatch. Each check_<op> sits next
 * to its wrapper so an op's contract reads in one place.
 *
 * Aliasing: an output may be exactly one of its inputs (in place) or
 * disjoint from it, except matmul, gemm and attention, whose outputs must
 * not touch their inputs at all.
 */
#include "ops_common.h"

gllmk_status core_unsupported(const gllmk_context *ctx, const char *fn, const char *slot)
{
	return core_error(GLLMK_E_UNSUPPORTED, "%s: plugin '%s' does not implement %s", fn, ctx->plugin->name, slot);
}

/* ------------------------------------------------------------ matrix */

static gllmk_status check_matmul(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	const char *fn = FN(matmul);
	struct core_view vy, vx, vw, vb;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_view(ctx, fn, "w", w, CORE_WEIGHT, CORE_DT_ALL_BUT_I32, "f32, f16, bf16 or a quant dtype", &vw));
	CHECK(core_view_opt(ctx, fn, "bias", bias, CORE_IN, CORE_DT_F32, "f32", &vb));
	CHECK(core_check_ndim(fn, &vy, 2, "[M, N]"));
	CHECK(core_check_ndim(fn, &vx, 2, "[M, K]"));
	CHECK(core_check_ndim(fn, &vw, 2, "[N, K]"));
	CHECK(core_check_dim(fn, &vw, 1, &vx, 1, "K must match"));
	CHECK(core_check_dim(fn, &vy, 0, &vx, 0, "M must match"));
	CHECK(core_check_dim(fn, &vy, 1, &vw, 0, "N must match"));
	if (vb.t) {
		CHECK(core_check_ndim(fn, &vb, 1, "[N]"));
		CHECK(core_check_dim(fn, &vb, 0, &vw, 0, "N must match"));
	}
	CHECK(core_check_alias(fn, &vy, &vx, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &vy, &vw, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &vy, &vb, CORE_DISJOINT));
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_matmul(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	VALIDATE_AND_DISPATCH(matmul, check_matmul(ctx, y, x, w, bias), y, x, w, bias);
}

static gllmk_status check_gemm(gllmk_context *ctx, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p)
{
	const char *fn = FN(gemm);
	struct core_view vc, va, vb;
	int am, ak, bk, bn;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "c", c, CORE_OUT, CORE_DT_F32, "f32", &vc));
	CHECK(core_view(ctx, fn, "a", a, CORE_IN, CORE_DT_F32, "f32", &va));
	CHECK(core_view(ctx, fn, "b", b, CORE_IN, CORE_DT_F32, "f32", &vb));
	CHECK(core_check_ptr(fn, "p", p));
	CHECK(check_invalid(fn, p->trans_a == 0 || p->trans_a == 1, "must be 0 or 1", p->trans_a, "p->trans_a"));
	CHECK(check_invalid(fn, p->trans_b == 0 || p->trans_b == 1, "must be 0 or 1", p->trans_b, "p->trans_b"));
	CHECK(core_check_ndim(fn, &vc, 2, "[M, N]"));
	CHECK(core_check_ndim(fn, &va, 2, p->trans_a ? "[K, M] (trans_a)" : "[M, K]"));
	CHECK(core_check_ndim(fn, &vb, 2, p->trans_b ? "[N, K] (trans_b)" : "[K, N]"));
	am = p->trans_a ? 1 : 0;
	ak = 1 - am;
	bn = p->trans_b ? 0 : 1;
	bk = 1 - bn;
	CHECK(core_check_dim(fn, &vb, bk, &va, ak, "K must match"));
	CHECK(core_check_dim(fn, &vc, 0, &va, am, "M must match"));
	CHECK(core_check_dim(fn, &vc, 1, &vb, bn, "N must match"));
	CHECK(core_check_alias(fn, &vc, &va, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &vc, &vb, CORE_DISJOINT));
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_gemm(gllmk_context *ctx, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p)
{
	VALIDATE_AND_DISPATCH(gemm, check_gemm(ctx, c, a, b, p), c, a, b, p);
}

/* ------------------------------------------------------------ y = f(x) */

/* struct unary_rule and check_unary: ops_common.h */
#define UNARY_OP(op, rule)                                                              \
	GLLMK_API gllmk_status gllmk_##op(gllmk_context *ctx, gllmk_t y, gllmk_t x)     \
	{                                                                               \
		VALIDATE_AND_DISPATCH(op, check_unary(ctx, FN(op), y, x, rule), y, x);  \
	}

static const struct unary_rule dequantize_rule = {
	CORE_DT_F32, CORE_DT_ALL_BUT_I32, "f32", "f32, f16, bf16 or a quant dtype", CORE_WEIGHT
};
static const struct unary_rule quantize_rule = {
	CORE_DT(GLLMK_Q8_0) | CORE_DT(GLLMK_Q8_K), CORE_DT_F32, "q8_0 or q8_K", "f32", CORE_IN
};
static const struct unary_rule convert_rule = {
	CORE_DT_FLOAT, CORE_DT_FLOAT, "f32, f16 or bf16", "f32, f16 or bf16", CORE_IN
};

UNARY_OP(dequantize, &dequantize_rule)
UNARY_OP(quantize, &quantize_rule)
UNARY_OP(convert, &convert_rule)
UNARY_OP(silu, &f32_to_f32)
UNARY_OP(gelu_tanh, &f32_to_f32)
UNARY_OP(gelu_erf, &f32_to_f32)
UNARY_OP(relu, &f32_to_f32)
UNARY_OP(tanh, &f32_to_f32)
UNARY_OP(exp, &f32_to_f32)

GLLMK_API gllmk_status gllmk_scale(gllmk_context *ctx, gllmk_t y, gllmk_t x, float s)
{
	VALIDATE_AND_DISPATCH(scale, check_unary(ctx, FN(scale), y, x, &f32_to_f32), y, x, s);
}

/* ------------------------------------------------------ y = f(a, b) */

/* b aligns with a at the innermost dim; each of b's dims is 1 or a's. */
static gllmk_status check_broadcast(const char *fn, const struct core_view *a, const struct core_view *b)
{
	int off = a->t->ndim - b->t->ndim;

	if (unlikely(off < 0))
		return core_error(GLLMK_E_SHAPE, "%s: b.ndim = %d > a.ndim = %d (b broadcasts into a)", fn,
				  (int)b->t->ndim, (int)a->t->ndim);
	for (int d = 0; d < b->t->ndim; d++)
		if (unlikely(b->t->shape[d] != 1 && b->t->shape[d] != a->t->shape[d + off]))
			return core_error(GLLMK_E_SHAPE,
					  "%s: b.shape[%d] = %" PRId64 " but a.shape[%d] = %" PRId64
					  " (each dim of b is 1 or a's)", fn, d, b->t->shape[d], d + off,
					  a->t->shape[d + off]);
	return GLLMK_OK;
}

/* add, mul: b broadcasts; swiglu: all three the same shape. */
static gllmk_status check_binary(gllmk_context *ctx, const char *fn, gllmk_t y, gllmk_t a, gllmk_t b,
				 const char *a_name, const char *b_name, int broadcast)
{
	struct core_view vy, va, vb;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, a_name, a, CORE_IN, CORE_DT_F32, "f32", &va));
	CHECK(core_view(ctx, fn, b_name, b, CORE_IN, CORE_DT_F32, "f32", &vb));
	CHECK(core_check_same_shape(fn, &vy, &va));
	CHECK(broadcast ? check_broadcast(fn, &va, &vb) : core_check_same_shape(fn, &vy, &vb));
	CHECK(core_check_alias(fn, &vy, &va, CORE_IN_PLACE));
	CHECK(core_check_alias(fn, &vy, &vb, CORE_IN_PLACE));
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_add(gllmk_context *ctx, gllmk_t y, gllmk_t a, gllmk_t b)
{
	VALIDATE_AND_DISPATCH(add, check_binary(ctx, FN(add), y, a, b, "a", "b", 1), y, a, b);
}

GLLMK_API gllmk_status gllmk_mul(gllmk_context *ctx, gllmk_t y, gllmk_t a, gllmk_t b)
{
	VALIDATE_AND_DISPATCH(mul, check_binary(ctx, FN(mul), y, a, b, "a", "b", 1), y, a, b);
}

GLLMK_API gllmk_status gllmk_swiglu(gllmk_context *ctx, gllmk_t y, gllmk_t gate, gllmk_t up)
{
	VALIDATE_AND_DISPATCH(swiglu, check_binary(ctx, FN(swiglu), y, gate, up, "gate", "up", 0), y, gate, up);
}

/* ------------------------------------------------------- normalization */

/* w, b of a norm: absent, or f32 [n] with n the row length of x. */
static gllmk_status check_norm_param(const char *fn, const struct core_view *p, const struct core_view *vx,
				     const struct core_view *vy)
{
	if (!p->t)
		return GLLMK_OK;
	CHECK(core_check_ndim(fn, p, 1, "[n] (n = x's row length)"));
	CHECK(core_check_dim(fn, p, 0, vx, vx->t->ndim - 1, "one weight per element of a row"));
	return core_check_alias(fn, vy, p, CORE_IN_PLACE);
}

static gllmk_status check_norm(gllmk_context *ctx, const char *fn, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b,
			       float eps)
{
	struct core_view vy, vx, vw, vb;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_view_opt(ctx, fn, "w", w, CORE_IN, CORE_DT_F32, "f32", &vw));
	CHECK(core_view_opt(ctx, fn, "b", b, CORE_IN, CORE_DT_F32, "f32", &vb));
	CHECK(core_check_same_shape(fn, &vy, &vx));
	CHECK(core_check_alias(fn, &vy, &vx, CORE_IN_PLACE));
	CHECK(check_norm_param(fn, &vw, &vx, &vy));
	CHECK(check_norm_param(fn, &vb, &vx, &vy));
	return check_invalid(fn, isfinite(eps) && eps >= 0, "must be finite and >= 0", eps, "eps");
}

GLLMK_API gllmk_status gllmk_rms_norm(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w, float eps)
{
	VALIDATE_AND_DISPATCH(rms_norm, check_norm(ctx, FN(rms_norm), y, x, w, NULL, eps), y, x, w, eps);
}

GLLMK_API gllmk_status gllmk_layer_norm(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps)
{
	VALIDATE_AND_DISPATCH(layer_norm, check_norm(ctx, FN(layer_norm), y, x, w, b, eps), y, x, w, b, eps);
}

/* ------------------------------------------------------------- softmax */

static gllmk_status check_softmax(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t mask,
				  const gllmk_softmax_params *p)
{
	const char *fn = FN(softmax);
	struct core_view vy, vx, vm;
	int nd;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_view_opt(ctx, fn, "mask", mask, CORE_IN, CORE_DT_F32, "f32", &vm));
	CHECK(core_check_ptr(fn, "p", p));
	CHECK(core_check_same_shape(fn, &vy, &vx));
	CHECK(core_check_alias(fn, &vy, &vx, CORE_IN_PLACE));
	CHECK(core_check_finite(fn, "p->scale", p->scale));
	if (!vm.t)
		return GLLMK_OK;
	nd = vx.t->ndim;
	CHECK(core_check_ndim(fn, &vm, 2, "[R, N]"));
	CHECK(core_check_dim_is(fn, &vm, 0, nd >= 2 ? vx.t->shape[nd - 2] : 1, "R = x.shape[ndim-2], 1 for 1-D x"));
	CHECK(core_check_dim(fn, &vm, 1, &vx, nd - 1, "N must match"));
	return core_check_alias(fn, &vy, &vm, CORE_IN_PLACE);
}

GLLMK_API gllmk_status gllmk_softmax(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t mask,
				     const gllmk_softmax_params *p)
{
	VALIDATE_AND_DISPATCH(softmax, check_softmax(ctx, y, x, mask, p), y, x, mask, p);
}

/* ---------------------------------------------------------------- rope */

static gllmk_status check_rope_params(const char *fn, const gllmk_rope_params *p, int64_t d)
{
	int64_t n_rot = p->n_rot ? p->n_rot : d;

	CHECK(check_invalid(fn, p->mode == GLLMK_ROPE_NORMAL || p->mode == GLLMK_ROPE_NEOX,
			    "must be GLLMK_ROPE_NORMAL (0) or GLLMK_ROPE_NEOX (1)", p->mode, "p->mode"));
	if (unlikely(p->n_rot < 0 || n_rot % 2 || n_rot > d))
		return core_error(GLLMK_E_INVALID,
				  "%s: p->n_rot = %d (rotated dims: even and <= D = %" PRId64 "; 0 means D)", fn,
				  (int)p->n_rot, d);
	CHECK(check_invalid(fn, isfinite(p->theta_base) && p->theta_base > 0, "must be finite and > 0",
			    p->theta_base, "p->theta_base"));
	return check_invalid(fn, isfinite(p->freq_scale) && p->freq_scale > 0, "must be finite and > 0",
			     p->freq_scale, "p->freq_scale");
}

static gllmk_status check_rope(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p)
{
	const char *fn = FN(rope);
	struct core_view vy, vx, vp;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_view(ctx, fn, "pos", pos, CORE_IN, CORE_DT_I32, "i32", &vp));
	CHECK(core_check_ptr(fn, "p", p));
	CHECK(core_check_ndim(fn, &vx, 3, "[T, H, D]"));
	CHECK(core_check_same_shape(fn, &vy, &vx));
	CHECK(core_check_ndim(fn, &vp, 1, "[T]"));
	CHECK(core_check_dim(fn, &vp, 0, &vx, 0, "one position per token"));
	CHECK(core_check_alias(fn, &vy, &vx, CORE_IN_PLACE));
	CHECK(core_check_alias(fn, &vy, &vp, CORE_IN_PLACE));
	return check_rope_params(fn, p, vx.t->shape[2]);
}

GLLMK_API gllmk_status gllmk_rope(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p)
{
	VALIDATE_AND_DISPATCH(rope, check_rope(ctx, y, x, pos, p), y, x, pos, p);
}

/* ------------------------------------------------------------ get_rows */

static gllmk_status check_get_rows(gllmk_context *ctx, gllmk_t y, gllmk_t table, gllmk_t ids)
{
	const char *fn = FN(get_rows);
	struct core_view vy, vt, vi;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "table", table, CORE_WEIGHT, CORE_DT_ALL_BUT_I32, "f32, f16, bf16 or a quant dtype", &vt));
	CHECK(core_view(ctx, fn, "ids", ids, CORE_IN, CORE_DT_I32, "i32", &vi));
	CHECK(core_check_ndim(fn, &vy, 2, "[n, K]"));
	CHECK(core_check_ndim(fn, &vt, 2, "[V, K]"));
	CHECK(core_check_ndim(fn, &vi, 1, "[n]"));
	CHECK(core_check_dim(fn, &vy, 0, &vi, 0, "one output row per id"));
	CHECK(core_check_dim(fn, &vy, 1, &vt, 1, "K must match"));
	CHECK(core_check_alias(fn, &vy, &vt, CORE_IN_PLACE));
	CHECK(core_check_alias(fn, &vy, &vi, CORE_IN_PLACE));
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_get_rows(gllmk_context *ctx, gllmk_t y, gllmk_t table, gllmk_t ids)
{
	VALIDATE_AND_DISPATCH(get_rows, check_get_rows(ctx, y, table, ids), y, table, ids);
}

/* ----------------------------------------------------------- attention */

struct attn_views {
	struct core_view out, q, k, v, mask, bt;
};

/* k and v: [Tkv, Hkv, D] contiguous, or [nblk, B, Hkv, D] paged. Returns
 * through *kv_cap the most kv tokens the layout holds. */
static gllmk_status check_attn_kv(const char *fn, const struct attn_views *a, int64_t *kv_cap)
{
	int paged = a->bt.t != NULL;

	CHECK(core_check_kv(fn, &a->q, &a->out, &a->k, &a->v, paged));
	if (!paged) {
		*kv_cap = a->k.t->shape[0];
		return GLLMK_OK;
	}
	CHECK(core_check_ndim(fn, &a->bt, 1, "[npages]"));
	if (unlikely(__builtin_mul_overflow(a->bt.t->shape[0], a->k.t->shape[1], kv_cap)))
		*kv_cap = INT64_MAX;
	return GLLMK_OK;
}

static gllmk_status check_attn_len(const char *fn, const struct attn_views *a, int32_t kv_len, int64_t kv_cap)
{
	int paged = a->bt.t != NULL;
	int64_t len = kv_len ? kv_len : kv_cap;

	if (unlikely(kv_len < 0 || kv_len > kv_cap || (paged && kv_len == 0)))
		return core_error(GLLMK_E_INVALID,
				  "%s: p->kv_len = %d (must be %s <= %" PRId64 ", the tokens %s holds)", fn, (int)kv_len,
				  paged ? "> 0 and" : "0 (all) or", kv_cap,
				  paged ? "block_table (npages * B)" : "k (Tkv)");
	if (!a->mask.t)
		return GLLMK_OK;
	CHECK(core_check_ndim(fn, &a->mask, 2, "[Tq, >= kv_len]"));
	CHECK(core_check_dim(fn, &a->mask, 0, &a->q, 0, "one mask row per query"));
	if (unlikely(a->mask.t->shape[1] < len))
		return core_error(GLLMK_E_SHAPE, "%s: mask.shape[1] = %" PRId64 " < kv_len = %" PRId64
				  " (one mask column per kv token)", fn, a->mask.t->shape[1], len);
	return GLLMK_OK;
}

static gllmk_status check_attention(gllmk_context *ctx, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
				    gllmk_t mask, gllmk_t block_table, const gllmk_attention_params *p)
{
	const char *fn = FN(attention);
	struct attn_views a;
	int64_t kv_cap = 0;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "out", out, CORE_OUT, CORE_DT_F32, "f32", &a.out));
	CHECK(core_view(ctx, fn, "q", q, CORE_IN, CORE_DT_F32, "f32", &a.q));
	CHECK(core_view(ctx, fn, "k", k, CORE_IN, CORE_DT_F32_F16, "f32 or f16", &a.k));
	CHECK(core_view(ctx, fn, "v", v, CORE_IN, CORE_DT_F32_F16, "f32 or f16", &a.v));
	CHECK(core_view_opt(ctx, fn, "mask", mask, CORE_IN, CORE_DT_F32, "f32", &a.mask));
	CHECK(core_view_opt(ctx, fn, "block_table", block_table, CORE_IN, CORE_DT_I32, "i32", &a.bt));
	CHECK(core_check_ptr(fn, "p", p));
	CHECK(core_check_ndim(fn, &a.q, 3, "[Tq, Hq, D]"));
	CHECK(core_check_ndim(fn, &a.out, 3, "[Tq, Hq, Dv]"));
	CHECK(core_check_dim(fn, &a.out, 0, &a.q, 0, "Tq must match"));
	CHECK(core_check_dim(fn, &a.out, 1, &a.q, 1, "Hq must match"));
	CHECK(check_attn_kv(fn, &a, &kv_cap));
	CHECK(check_attn_len(fn, &a, p->kv_len, kv_cap));
	CHECK(core_check_finite(fn, "p->scale", p->scale));
	CHECK(core_check_alias(fn, &a.out, &a.q, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &a.out, &a.k, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &a.out, &a.v, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &a.out, &a.mask, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &a.out, &a.bt, CORE_DISJOINT));
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_attention(gllmk_context *ctx, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
				       gllmk_t mask, gllmk_t block_table, const gllmk_attention_params *p)
{
	VALIDATE_AND_DISPATCH(attention, check_attention(ctx, out, q, k, v, mask, block_table, p), out, q, k, v, mask,
			      block_table, p);
}

/* ------------------------------------------------------------ sampling */

/* ids i32 [R]; x f32 [R, N] or [N] (R = 1). */
static gllmk_status check_pick(gllmk_context *ctx, const char *fn, gllmk_t ids, gllmk_t x, const char *x_name)
{
	struct core_view vi, vx;
	int64_t rows;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "ids", ids, CORE_OUT, CORE_DT_I32, "i32", &vi));
	CHECK(core_view(ctx, fn, x_name, x, CORE_IN, CORE_DT_F32, "f32", &vx));
	if (unlikely(vx.t->ndim > 2))
		return core_error(GLLMK_E_SHAPE, "%s: %s.ndim = %d but %s must be [R, N] or [N]", fn, x_name,
				  (int)vx.t->ndim, x_name);
	CHECK(core_check_ndim(fn, &vi, 1, "[R]"));
	rows = vx.t->ndim == 2 ? vx.t->shape[0] : 1;
	CHECK(core_check_dim_is(fn, &vi, 0, rows, "one id per row"));
	return core_check_alias(fn, &vi, &vx, CORE_IN_PLACE);
}

GLLMK_API gllmk_status gllmk_argmax(gllmk_context *ctx, gllmk_t ids, gllmk_t x)
{
	VALIDATE_AND_DISPATCH(argmax, check_pick(ctx, FN(argmax), ids, x, "x"), ids, x);
}

static gllmk_status check_sample(gllmk_context *ctx, gllmk_t ids, gllmk_t logits, const float *uniform,
				 const gllmk_sample_params *p)
{
	const char *fn = FN(sample);
	int64_t rows;

	CHECK(check_pick(ctx, fn, ids, logits, "logits"));
	CHECK(core_check_ptr(fn, "uniform", uniform));
	CHECK(core_check_ptr(fn, "p", p));
	CHECK(core_check_finite(fn, "p->temperature", p->temperature));
	CHECK(check_invalid(fn, p->top_p > 0, "must be > 0; >= 1 means no limit", p->top_p, "p->top_p"));
	rows = ids->shape[0];
	for (int64_t r = 0; r < rows; r++)
		if (unlikely(!(uniform[r] >= 0 && uniform[r] < 1)))
			return core_error(GLLMK_E_INVALID, "%s: uniform[%" PRId64 "] = %g (must be in [0, 1))", fn, r,
					  (double)uniform[r]);
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_sample(gllmk_context *ctx, gllmk_t ids, gllmk_t logits, const float *uniform,
				    const gllmk_sample_params *p)
{
	VALIDATE_AND_DISPATCH(sample, check_sample(ctx, ids, logits, uniform, p), ids, logits, uniform, p);
}
