/* The activations of ABI 1.1: sigmoid, clamp, softcap (elementwise, the
 * rule of every y = f(x)) and glu (y = act(gate) · up, split or fused).
 * Semantics: SPEC/OPERATORS.md, "Activations (ABI 1.1)". */
#include "ops_common.h"

/* ------------------------------------------------------------ y = f(x) */

GLLMK_API gllmk_status gllmk_sigmoid(gllmk_context *ctx, gllmk_t y, gllmk_t x)
{
	VALIDATE_AND_DISPATCH(sigmoid, check_unary(ctx, FN(sigmoid), y, x, &f32_to_f32), y, x);
}

static gllmk_status check_clamp(gllmk_context *ctx, gllmk_t y, gllmk_t x, float lo, float hi)
{
	const char *fn = FN(clamp);

	CHECK(check_unary(ctx, fn, y, x, &f32_to_f32));
	CHECK(check_invalid(fn, !isnan(lo), "must not be NaN", lo, "lo"));
	CHECK(check_invalid(fn, !isnan(hi), "must not be NaN", hi, "hi"));
	if (unlikely(lo > hi))
		return core_error(GLLMK_E_INVALID, "%s: lo = %g > hi = %g (lo must be <= hi)", fn, (double)lo,
				  (double)hi);
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_clamp(gllmk_context *ctx, gllmk_t y, gllmk_t x, float lo, float hi)
{
	VALIDATE_AND_DISPATCH(clamp, check_clamp(ctx, y, x, lo, hi), y, x, lo, hi);
}

static gllmk_status check_softcap(gllmk_context *ctx, gllmk_t y, gllmk_t x, float c)
{
	const char *fn = FN(softcap);

	CHECK(check_unary(ctx, fn, y, x, &f32_to_f32));
	return check_invalid(fn, isfinite(c) && c > 0, "must be finite and > 0", c, "c");
}

GLLMK_API gllmk_status gllmk_softcap(gllmk_context *ctx, gllmk_t y, gllmk_t x, float c)
{
	VALIDATE_AND_DISPATCH(softcap, check_softcap(ctx, y, x, c), y, x, c);
}

/* ----------------------------------------------------------------- glu */

#define GLU_ALPHA_DEFAULT 1.702f /* gpt-oss */
#define GLU_LIMIT_DEFAULT 7.0f

/* p copied into q with the defaults filled in, then its fields checked. */
static gllmk_status check_glu_params(const char *fn, const gllmk_glu_params *p, gllmk_glu_params *q)
{
	CHECK(core_copy_params(fn, q, sizeof(*q), p, offsetof(gllmk_glu_params, op) + sizeof(q->op),
			       "gllmk_glu_params"));
	CHECK(check_invalid(fn, q->op >= GLLMK_GLU_SILU && q->op <= GLLMK_GLU_SWIGLU_OAI,
			    "must be a gllmk_glu_op: 0 silu .. 4 swiglu_oai", q->op, "p->op"));
	CHECK(check_invalid(fn, q->swapped == 0 || q->swapped == 1, "must be 0 or 1", q->swapped, "p->swapped"));
	CHECK(check_invalid(fn, isfinite(q->alpha), "must be finite; 0 means 1.702", q->alpha, "p->alpha"));
	CHECK(check_invalid(fn, isfinite(q->limit) && q->limit >= 0, "must be finite and >= 0; 0 means 7", q->limit,
			    "p->limit"));
	if (q->alpha == 0)
		q->alpha = GLU_ALPHA_DEFAULT;
	if (q->limit == 0)
		q->limit = GLU_LIMIT_DEFAULT;
	return GLLMK_OK;
}

/* Fused: gate [.., 2N] holds both halves of each row, y is [.., N]; y may
 * not touch gate (its rows are half as long, so no view of y is gate's). */
static gllmk_status check_glu_fused(const char *fn, const struct core_view *vy, const struct core_view *vg)
{
	int nd = vg->t->ndim;

	if (unlikely(vy->t->ndim != nd))
		return core_error(GLLMK_E_SHAPE, "%s: y.ndim = %d but gate.ndim = %d (fused: y is gate's shape "
				  "with the last dim halved)", fn, (int)vy->t->ndim, nd);
	for (int d = 0; d < nd - 1; d++)
		CHECK(core_check_dim(fn, vy, d, vg, d, "y and gate have the same rows"));
	if (unlikely(vg->t->shape[nd - 1] != 2 * vy->t->shape[nd - 1]))
		return core_error(GLLMK_E_SHAPE,
				  "%s: gate.shape[%d] = %" PRId64 " but y.shape[%d] = %" PRId64
				  " (fused, up NULL: gate's rows are [gate half, up half], twice y's)", fn, nd - 1,
				  vg->t->shape[nd - 1], nd - 1, vy->t->shape[nd - 1]);
	return core_check_alias(fn, vy, vg, CORE_DISJOINT);
}

static gllmk_status check_glu(gllmk_context *ctx, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p,
			      gllmk_glu_params *q)
{
	const char *fn = FN(glu);
	struct core_view vy, vg, vu;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "gate", gate, CORE_IN, CORE_DT_F32, "f32", &vg));
	CHECK(core_view_opt(ctx, fn, "up", up, CORE_IN, CORE_DT_F32, "f32", &vu));
	CHECK(check_glu_params(fn, p, q));
	if (!vu.t)
		return check_glu_fused(fn, &vy, &vg);
	CHECK(core_check_same_shape(fn, &vy, &vg));
	CHECK(core_check_same_shape(fn, &vy, &vu));
	CHECK(core_check_alias(fn, &vy, &vg, CORE_IN_PLACE));
	return core_check_alias(fn, &vy, &vu, CORE_IN_PLACE);
}

GLLMK_API gllmk_status gllmk_glu(gllmk_context *ctx, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p)
{
	gllmk_glu_params q;

	VALIDATE_AND_DISPATCH(glu, check_glu(ctx, y, gate, up, p, &q), y, gate, up, &q);
}
