/* ABI 1.1 position and KV-cache operators: rope_ext and kv_store
 * (SPEC/OPERATORS.md "rope_ext", "kv_store"). Same pattern as ops.c: the
 * rules of each op, then one indirect call.
 *
 * rope_ext's params are normalised here, once, for every plugin: the bytes
 * the caller's struct_size covers are copied into a full struct (fields past
 * it read as 0), then the documented zero defaults are applied (attn_factor
 * 1, beta_fast 32, beta_slow 1), so a plugin reads plain values.
 */
#include <stddef.h>

#include "ops_common.h" /* CHECK, FN, check_param, core_copy_params */

/* ------------------------------------------------------------ rope_ext */

/* The smallest struct a caller may pass: through freq_scale, the fields of
 * gllmk_rope_params. */
#define ROPE_EXT_MIN_SIZE (offsetof(gllmk_rope_ext_params, freq_scale) + sizeof(float))

static gllmk_status rope_ext_normalise(const char *fn, const gllmk_rope_ext_params *p, gllmk_rope_ext_params *q)
{
	CHECK(core_copy_params(fn, q, sizeof(*q), p, ROPE_EXT_MIN_SIZE, "gllmk_rope_ext_params"));
	if (q->attn_factor == 0.0f)
		q->attn_factor = 1.0f;
	if (q->beta_fast == 0.0f)
		q->beta_fast = 32.0f;
	if (q->beta_slow == 0.0f)
		q->beta_slow = 1.0f;
	return GLLMK_OK;
}

static gllmk_status check_rope_ext_params(const char *fn, const gllmk_rope_ext_params *p, int64_t d)
{
	int64_t n_rot = p->n_rot ? p->n_rot : d;

	CHECK(check_param(fn, p->mode == GLLMK_ROPE_NORMAL || p->mode == GLLMK_ROPE_NEOX, "p->mode", p->mode,
		   "must be GLLMK_ROPE_NORMAL (0) or GLLMK_ROPE_NEOX (1)"));
	if (unlikely(p->n_rot < 0 || n_rot % 2 || n_rot > d))
		return core_error(GLLMK_E_INVALID,
				  "%s: p->n_rot = %d (rotated dims: even and <= D = %" PRId64 "; 0 means D)", fn,
				  (int)p->n_rot, d);
	CHECK(check_param(fn, isfinite(p->theta_base) && p->theta_base > 0, "p->theta_base", p->theta_base,
		   "must be finite and > 0"));
	CHECK(check_param(fn, isfinite(p->freq_scale) && p->freq_scale > 0, "p->freq_scale", p->freq_scale,
		   "must be finite and > 0"));
	CHECK(check_param(fn, isfinite(p->ext_factor), "p->ext_factor", p->ext_factor, "must be finite; 0 turns YaRN off"));
	CHECK(check_param(fn, isfinite(p->attn_factor), "p->attn_factor", p->attn_factor, "must be finite; 0 means 1"));
	CHECK(check_param(fn, isfinite(p->beta_fast) && p->beta_fast > 0, "p->beta_fast", p->beta_fast,
		   "must be finite and > 0; 0 means 32"));
	CHECK(check_param(fn, isfinite(p->beta_slow) && p->beta_slow > 0, "p->beta_slow", p->beta_slow,
		   "must be finite and > 0; 0 means 1"));
	CHECK(check_param(fn, p->n_ctx_orig >= 0, "p->n_ctx_orig", p->n_ctx_orig, "must be >= 0"));
	/* YaRN's correction dims take log(n_ctx_orig): without it they are
	 * meaningless (ggml would ramp only pair 0). */
	return check_param(fn, p->ext_factor == 0.0f || p->n_ctx_orig > 0, "p->n_ctx_orig", p->n_ctx_orig,
		    "must be > 0 when p->ext_factor != 0 (YaRN needs the training context)");
}

static gllmk_status check_rope_ext(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t freq_factors,
				   const gllmk_rope_ext_params *p, gllmk_rope_ext_params *q)
{
	const char *fn = FN(rope_ext);
	struct core_view vy, vx, vp, vf;
	int64_t d;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, CORE_DT_F32, "f32", &vy));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_view(ctx, fn, "pos", pos, CORE_IN, CORE_DT_I32, "i32", &vp));
	CHECK(core_view_opt(ctx, fn, "freq_factors", freq_factors, CORE_IN, CORE_DT_F32, "f32", &vf));
	CHECK(rope_ext_normalise(fn, p, q));
	CHECK(core_check_ndim(fn, &vx, 3, "[T, H, D]"));
	CHECK(core_check_same_shape(fn, &vy, &vx));
	CHECK(core_check_ndim(fn, &vp, 1, "[T]"));
	CHECK(core_check_dim(fn, &vp, 0, &vx, 0, "one position per token"));
	d = vx.t->shape[2];
	CHECK(check_rope_ext_params(fn, q, d));
	if (vf.t) {
		CHECK(core_check_ndim(fn, &vf, 1, "[n_rot/2]"));
		CHECK(core_check_dim_is(fn, &vf, 0, (q->n_rot ? q->n_rot : d) / 2, "one factor per rotated pair (n_rot/2)"));
	}
	CHECK(core_check_alias(fn, &vy, &vx, CORE_IN_PLACE));
	CHECK(core_check_alias(fn, &vy, &vp, CORE_DISJOINT));
	return core_check_alias(fn, &vy, &vf, CORE_DISJOINT);
}

GLLMK_API gllmk_status gllmk_rope_ext(gllmk_context *ctx, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t freq_factors,
				      const gllmk_rope_ext_params *p)
{
	gllmk_rope_ext_params q;
	gllmk_status st = check_rope_ext(ctx, y, x, pos, freq_factors, p, &q);

	if (unlikely(st != GLLMK_OK))
		return st;
	return CORE_DISPATCH(ctx, FN(rope_ext), rope_ext, y, x, pos, freq_factors, &q);
}

/* ------------------------------------------------------------ kv_store */

#define KV_CACHE_DTYPES \
	(CORE_DT(GLLMK_F32) | CORE_DT(GLLMK_F16) | CORE_DT(GLLMK_BF16) | CORE_DT(GLLMK_Q8_0) | CORE_DT(GLLMK_Q4_0))

/* cache [S, Hkv, D] or [nblk, B, Hkv, D]; x [T, Hkv, D]; slots [T]. Slot
 * values are the plugin's to check (GLLMK_E_BOUNDS, before any write). The
 * cache is written, so it may not touch x or slots at all. */
static gllmk_status check_kv_store(gllmk_context *ctx, gllmk_t cache, gllmk_t x, gllmk_t slots)
{
	const char *fn = FN(kv_store);
	struct core_view vc, vx, vs;
	int nd;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "cache", cache, CORE_OUT, KV_CACHE_DTYPES, "f32, f16, bf16, q8_0 or q4_0", &vc));
	CHECK(core_view(ctx, fn, "x", x, CORE_IN, CORE_DT_F32, "f32", &vx));
	CHECK(core_view(ctx, fn, "slots", slots, CORE_IN, CORE_DT_I32, "i32", &vs));
	CHECK(core_check_ndim(fn, &vx, 3, "[T, Hkv, D]"));
	CHECK(core_check_ndim(fn, &vs, 1, "[T]"));
	CHECK(core_check_dim(fn, &vs, 0, &vx, 0, "one slot per token"));
	nd = vc.t->ndim;
	if (unlikely(nd != 3 && nd != 4))
		return core_error(GLLMK_E_SHAPE, "%s: cache.ndim = %d (must be 3, [S, Hkv, D], or 4, [nblk, B, Hkv, D] paged)",
				  fn, (int)nd);
	CHECK(core_check_dim(fn, &vc, nd - 2, &vx, 1, "Hkv must match"));
	CHECK(core_check_dim(fn, &vc, nd - 1, &vx, 2, "D must match"));
	CHECK(core_check_alias(fn, &vc, &vx, CORE_DISJOINT));
	return core_check_alias(fn, &vc, &vs, CORE_DISJOINT);
}

GLLMK_API gllmk_status gllmk_kv_store(gllmk_context *ctx, gllmk_t cache, gllmk_t x, gllmk_t slots)
{
	gllmk_status st = check_kv_store(ctx, cache, x, slots);

	if (unlikely(st != GLLMK_OK))
		return st;
	return CORE_DISPATCH(ctx, FN(kv_store), kv_store, cache, x, slots);
}
