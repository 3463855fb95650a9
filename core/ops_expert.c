/* The expert and batched matrix products of ABI 1.1 (SPEC/OPERATORS.md,
 * "matmul_id, matmul_batched"): their rules, then one indirect call, as
 * core/ops.c does for the ops of 1.0. The ids' values are index data only
 * the plugin sees: it checks them (GLLMK_E_BOUNDS naming token and slot).
 *
 * Aliasing: like matmul, y must not touch any input at all.
 */
#include "ops_common.h" /* CHECK, FN, VALIDATE_AND_DISPATCH */

#define WEIGHT_DTYPES "f32, f16, bf16 or a quant dtype"

/* --------------------------------------------------------- matmul_id */

struct matmul_id_views {
	struct core_view y, x, w, ids, bias, sw;
};

/* x: [T, K] (the token's row serves each of its slots) or [T, k, K]. */
static gllmk_status check_id_x(const char *fn, const struct matmul_id_views *v)
{
	const int nd = v->x.t->ndim;

	if (unlikely(nd != 2 && nd != 3))
		return core_error(GLLMK_E_SHAPE, "%s: x.ndim = %d but x must be [T, K] or [T, k, K]", fn, nd);
	CHECK(core_check_dim(fn, &v->x, 0, &v->ids, 0, "T: one x row (or k rows) per token of ids"));
	if (nd == 3)
		CHECK(core_check_dim(fn, &v->x, 1, &v->ids, 1, "k: one x row per slot of ids"));
	return core_check_dim(fn, &v->x, nd - 1, &v->w, 2, "K must match");
}

/* y: [T, k, N] without slot_weights, [T, N] (the slots summed) with them. */
static gllmk_status check_id_y(const char *fn, const struct matmul_id_views *v)
{
	if (!v->sw.t) {
		CHECK(core_check_ndim(fn, &v->y, 3, "[T, k, N] (no slot_weights)"));
		CHECK(core_check_dim(fn, &v->y, 1, &v->ids, 1, "k: one y row per slot of ids"));
	} else {
		CHECK(core_check_ndim(fn, &v->y, 2, "[T, N] (slot_weights given: the slots are summed)"));
		CHECK(core_check_ndim(fn, &v->sw, 2, "[T, k]"));
		CHECK(core_check_dim(fn, &v->sw, 0, &v->ids, 0, "T: one weight per slot of ids"));
		CHECK(core_check_dim(fn, &v->sw, 1, &v->ids, 1, "k: one weight per slot of ids"));
	}
	CHECK(core_check_dim(fn, &v->y, 0, &v->ids, 0, "T must match"));
	return core_check_dim(fn, &v->y, v->y.t->ndim - 1, &v->w, 1, "N must match");
}

static gllmk_status check_matmul_id(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias,
				    gllmk_t slot_weights)
{
	const char *fn = FN(matmul_id);
	struct matmul_id_views v;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &v.y));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &v.x));
	CHECK(core_view(ctx, fn, "w", w, CORE_WEIGHT, CORE_DT_ALL_BUT_I32, WEIGHT_DTYPES, &v.w));
	CHECK(core_view(ctx, fn, "ids", ids, CORE_IN, CORE_DT_I32, "i32", &v.ids));
	CHECK(core_view_opt(ctx, fn, "bias", bias, CORE_IN, CORE_DT_F32, "f32", &v.bias));
	CHECK(core_view_opt(ctx, fn, "slot_weights", slot_weights, CORE_IN, CORE_DT_F32, "f32", &v.sw));
	CHECK(core_check_ndim(fn, &v.w, 3, "[E, N, K]"));
	CHECK(core_check_ndim(fn, &v.ids, 2, "[T, k]"));
	CHECK(check_id_x(fn, &v));
	CHECK(check_id_y(fn, &v));
	if (v.bias.t) {
		CHECK(core_check_ndim(fn, &v.bias, 2, "[E, N]"));
		CHECK(core_check_dim(fn, &v.bias, 0, &v.w, 0, "E: one bias row per expert"));
		CHECK(core_check_dim(fn, &v.bias, 1, &v.w, 1, "N must match"));
	}
	CHECK(core_check_alias(fn, &v.y, &v.x, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &v.y, &v.w, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &v.y, &v.ids, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &v.y, &v.bias, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &v.y, &v.sw, CORE_DISJOINT));
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_matmul_id(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids,
				       gllmk_t bias, gllmk_t slot_weights)
{
	VALIDATE_AND_DISPATCH(matmul_id, check_matmul_id(ctx, y, x, w, ids, bias, slot_weights), y, x, w, ids, bias,
			      slot_weights);
}

/* ---------------------------------------------------- matmul_batched */

static gllmk_status check_matmul_batched(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w)
{
	const char *fn = FN(matmul_batched);
	struct core_view vy, vx, vw;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_view(ctx, fn, "w", w, CORE_WEIGHT, CORE_DT_ALL_BUT_I32, WEIGHT_DTYPES, &vw));
	CHECK(core_check_ndim(fn, &vy, 3, "[B, M, N]"));
	CHECK(core_check_ndim(fn, &vx, 3, "[B, M, K]"));
	CHECK(core_check_ndim(fn, &vw, 3, "[B or 1, N, K]"));
	CHECK(core_check_dim(fn, &vy, 0, &vx, 0, "B must match"));
	if (vw.t->shape[0] != 1)
		CHECK(core_check_dim(fn, &vw, 0, &vx, 0, "B must match (or be 1: one w for every batch)"));
	CHECK(core_check_dim(fn, &vy, 1, &vx, 1, "M must match"));
	CHECK(core_check_dim(fn, &vw, 2, &vx, 2, "K must match"));
	CHECK(core_check_dim(fn, &vy, 2, &vw, 1, "N must match"));
	CHECK(core_check_alias(fn, &vy, &vx, CORE_DISJOINT));
	CHECK(core_check_alias(fn, &vy, &vw, CORE_DISJOINT));
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_matmul_batched(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t w)
{
	VALIDATE_AND_DISPATCH(matmul_batched, check_matmul_batched(ctx, y, x, w), y, x, w);
}
