/* Selection ops of ABI 1.1: top_k and moe_route (MoE expert routing).
 * Semantics: SPEC/OPERATORS.md, "Selection (ABI 1.1)". */
#include "ops_common.h"

/* Outputs ids [R, k] (i32) and their companion [R, k] (f32), both written by
 * one call: they may not touch each other or any input. */
static gllmk_status check_pair_out(const char *fn, const struct core_view *ids, const struct core_view *vals,
				   const struct core_view *in0, const struct core_view *in1)
{
	CHECK(core_check_alias(fn, ids, in0, CORE_DISJOINT));
	CHECK(core_check_alias(fn, ids, in1, CORE_DISJOINT));
	if (!vals->t)
		return GLLMK_OK;
	CHECK(core_check_ndim(fn, vals, 2, "[R, k]"));
	CHECK(core_check_same_shape(fn, vals, ids));
	CHECK(core_check_alias(fn, vals, ids, CORE_DISJOINT));
	CHECK(core_check_alias(fn, vals, in0, CORE_DISJOINT));
	return core_check_alias(fn, vals, in1, CORE_DISJOINT);
}

/* --------------------------------------------------------------- top_k */

static gllmk_status check_top_k(gllmk_context *ctx, gllmk_t values, gllmk_t ids, gllmk_t x)
{
	const char *fn = FN(top_k);
	struct core_view vv, vi, vx, none = { .t = NULL };

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view_opt(ctx, fn, "values", values, CORE_OUT, CORE_DT_F32, "f32", &vv));
	CHECK(core_view(ctx, fn, "ids", ids, CORE_OUT, CORE_DT_I32, "i32", &vi));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_check_ndim(fn, &vx, 2, "[R, N]"));
	CHECK(core_check_ndim(fn, &vi, 2, "[R, k]"));
	CHECK(core_check_dim(fn, &vi, 0, &vx, 0, "one row of ids per row of x"));
	if (unlikely(vi.t->shape[1] > vx.t->shape[1]))
		return core_error(GLLMK_E_SHAPE, "%s: ids.shape[1] = %" PRId64 " > x.shape[1] = %" PRId64
				  " (k must be <= N)", fn, vi.t->shape[1], vx.t->shape[1]);
	return check_pair_out(fn, &vi, &vv, &vx, &none);
}

GLLMK_API gllmk_status gllmk_top_k(gllmk_context *ctx, gllmk_t values, gllmk_t ids, gllmk_t x)
{
	VALIDATE_AND_DISPATCH(top_k, check_top_k(ctx, values, ids, x), values, ids, x);
}

/* ----------------------------------------------------------- moe_route */

/* Grouped routing keeps the group scores in a workgroup's shared memory on
 * the GPU plugins; 256 groups is 32x DeepSeek V3's 8. */
#define MOE_MAX_GROUPS 256

static gllmk_status check_moe_groups(const char *fn, const gllmk_moe_route_params *q, int64_t e, int64_t k)
{
	int64_t per_group;

	if (q->n_group <= 1)
		return GLLMK_OK;
	if (unlikely(q->n_group > MOE_MAX_GROUPS || e % q->n_group || e / q->n_group < 2))
		return core_error(GLLMK_E_INVALID,
				  "%s: p->n_group = %d (grouped routing: <= %d groups of at least 2 experts each, "
				  "dividing E = %" PRId64 ")", fn, (int)q->n_group, MOE_MAX_GROUPS, e);
	if (unlikely(q->topk_group < 1 || q->topk_group > q->n_group))
		return core_error(GLLMK_E_INVALID, "%s: p->topk_group = %d (must be in 1 .. p->n_group = %d)", fn,
				  (int)q->topk_group, (int)q->n_group);
	per_group = e / q->n_group;
	if (unlikely(k > q->topk_group * per_group))
		return core_error(GLLMK_E_INVALID,
				  "%s: k = %" PRId64 " > p->topk_group = %d groups x %" PRId64
				  " experts (the eligible experts)", fn, k, (int)q->topk_group, per_group);
	return GLLMK_OK;
}

/* p copied into q (scale 0 read as 1, n_group 0 as 1), then checked. */
static gllmk_status check_moe_params(const char *fn, const gllmk_moe_route_params *p, gllmk_moe_route_params *q,
				     int64_t e, int64_t k)
{
	CHECK(core_copy_params(fn, q, sizeof(*q), p, offsetof(gllmk_moe_route_params, gating) + sizeof(q->gating),
			       "gllmk_moe_route_params"));
	CHECK(check_invalid(fn, q->gating >= GLLMK_GATING_SOFTMAX && q->gating <= GLLMK_GATING_SOFTMAX_AFTER,
			    "must be a gllmk_moe_gating: 0 softmax, 1 sigmoid, 2 softmax_after", q->gating,
			    "p->gating"));
	CHECK(check_invalid(fn, q->n_group >= 0, "must be >= 0; 0 and 1 mean no groups", q->n_group, "p->n_group"));
	CHECK(check_invalid(fn, q->norm == 0 || q->norm == 1, "must be 0 or 1", q->norm, "p->norm"));
	CHECK(check_invalid(fn, isfinite(q->scale), "must be finite; 0 means 1", q->scale, "p->scale"));
	CHECK(check_moe_groups(fn, q, e, k));
	if (q->n_group == 0)
		q->n_group = 1;
	if (q->scale == 0)
		q->scale = 1;
	return GLLMK_OK;
}

static gllmk_status check_moe_route(gllmk_context *ctx, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,
				    const gllmk_moe_route_params *p, gllmk_moe_route_params *q)
{
	const char *fn = FN(moe_route);
	struct core_view vi, vw, vl, vb;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "ids", ids, CORE_OUT, CORE_DT_I32, "i32", &vi));
	CHECK(core_view(ctx, fn, "weights", weights, CORE_OUT, CORE_DT_F32, "f32", &vw));
	CHECK(core_view(ctx, fn, "logits", logits, CORE_IN, CORE_DT_F32, "f32", &vl));
	CHECK(core_view_opt(ctx, fn, "bias", bias, CORE_IN, CORE_DT_F32, "f32", &vb));
	CHECK(core_check_ndim(fn, &vl, 2, "[T, E]"));
	CHECK(core_check_ndim(fn, &vi, 2, "[T, k]"));
	CHECK(core_check_dim(fn, &vi, 0, &vl, 0, "one row of ids per token"));
	if (unlikely(vi.t->shape[1] > vl.t->shape[1]))
		return core_error(GLLMK_E_SHAPE, "%s: ids.shape[1] = %" PRId64 " > logits.shape[1] = %" PRId64
				  " (k must be <= E)", fn, vi.t->shape[1], vl.t->shape[1]);
	if (vb.t) {
		CHECK(core_check_ndim(fn, &vb, 1, "[E]"));
		CHECK(core_check_dim(fn, &vb, 0, &vl, 1, "one bias per expert"));
	}
	CHECK(check_pair_out(fn, &vi, &vw, &vl, &vb));
	return check_moe_params(fn, p, q, vl.t->shape[1], vi.t->shape[1]);
}

GLLMK_API gllmk_status gllmk_moe_route(gllmk_context *ctx, gllmk_t ids, gllmk_t weights, gllmk_t logits,
				       gllmk_t bias, const gllmk_moe_route_params *p)
{
	gllmk_moe_route_params q;

	VALIDATE_AND_DISPATCH(moe_route, check_moe_route(ctx, ids, weights, logits, bias, p, &q), ids, weights,
			      logits, bias, &q);
}
