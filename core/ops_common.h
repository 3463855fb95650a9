/* What every file of public operator wrappers shares (core/ops.c and the
 * ops_<family>.c files of ABI 1.1): the CHECK and dispatch macros, the
 * scalar-argument check and the rule of one-input, one-output ops. */
#ifndef GLLMK_CORE_OPS_COMMON_H
#define GLLMK_CORE_OPS_COMMON_H

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "validate.h"

#define CHECK(expr)                                  \
	do {                                         \
		gllmk_status check_st_ = (expr);     \
		if (unlikely(check_st_ != GLLMK_OK)) \
			return check_st_;            \
	} while (0)

#define FN(op) "gllmk_" #op

/* Validation, then the call: the body of every wrapper. */
#define VALIDATE_AND_DISPATCH(op, check, ...)                       \
	do {                                                        \
		gllmk_status st_ = (check);                         \
		if (unlikely(st_ != GLLMK_OK))                      \
			return st_;                                 \
		return CORE_DISPATCH(ctx, FN(op), op, __VA_ARGS__); \
	} while (0)

/* GLLMK_E_INVALID naming a scalar argument and its rule unless ok. */
static inline gllmk_status check_invalid(const char *fn, int ok, const char *fmt_rule, double value,
					 const char *name)
{
	if (likely(ok))
		return GLLMK_OK;
	return core_error(GLLMK_E_INVALID, "%s: %s = %g (%s)", fn, name, value, fmt_rule);
}

/* The same, arguments in the order a reader says them: name, value, rule. */
static inline gllmk_status check_param(const char *fn, int ok, const char *name, double value, const char *rule)
{
	return check_invalid(fn, ok, rule, value, name);
}

/* The params structs of ABI 1.1 begin with struct_size; fields past it read
 * as 0. The wrapper copies the caller's struct into a full-size one (zeros
 * past struct_size, defaults filled in), so plugins read every field of the
 * struct they were built with. min_size: the bytes up to the end of the
 * first field that means something (struct_size 0 is a forgotten field). */
static inline gllmk_status core_copy_params(const char *fn, void *dst, size_t dst_size, const void *src,
					    size_t min_size, const char *type_name)
{
	uint32_t have;

	if (unlikely(!src))
		return core_error(GLLMK_E_NULL, "%s: p is NULL", fn);
	have = *(const uint32_t *)src;
	if (unlikely(have < min_size))
		return core_error(GLLMK_E_INVALID, "%s: p->struct_size = %u (set it to sizeof(%s) = %zu)", fn,
				  (unsigned)have, type_name, dst_size);
	memset(dst, 0, dst_size);
	memcpy(dst, src, have < dst_size ? have : dst_size);
	*(uint32_t *)dst = (uint32_t)dst_size;
	return GLLMK_OK;
}

/* ------------------------------------------------------------ y = f(x) */

/* The rule of every one-input, one-output op: dtypes, same shape, in place
 * allowed. */
struct unary_rule {
	uint64_t y_mask, x_mask;
	const char *y_want, *x_want;
	enum core_role x_role; /* CORE_WEIGHT: x may be prepared weights (dequantize) */
};

static const struct unary_rule f32_to_f32 = { CORE_DT_F32, CORE_DT_F32, "f32", "f32", CORE_IN };

/* Inlined into each wrapper (the tiny ops a decode loop calls most): the
 * call, its saved registers and the two views' round trip through the
 * stack were ~15 % of a gllmk_scale (callgrind: 237 -> 202 instructions). */
static inline __attribute__((always_inline)) gllmk_status check_unary(gllmk_context *ctx, const char *fn,
								      gllmk_t y, gllmk_t x,
								      const struct unary_rule *r)
{
	struct core_view vy, vx;

	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "y", y, CORE_OUT, r->y_mask, r->y_want, &vy));
	CHECK(core_view(ctx, fn, "x", x, r->x_role, r->x_mask, r->x_want, &vx));
	CHECK(core_check_same_shape(fn, &vy, &vx));
	CHECK(core_check_alias(fn, &vy, &vx, CORE_IN_PLACE));
	return GLLMK_OK;
}

/* Attention's k and v against q and out (ops_attention_ext.c): one dtype,
 * [Tkv, Hkv, D] or paged [nblk, B, Hkv, D], D and Dv matching, Hq a
 * multiple of Hkv. */
gllmk_status core_check_kv(const char *fn, const struct core_view *q, const struct core_view *out,
			   const struct core_view *k, const struct core_view *v, int paged);

#endif
