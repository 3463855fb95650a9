/* The checks every operator shares: one view at a time, then how views
 * relate (shapes, aliasing). Each failure writes a message naming the
 * function, the argument and the rule, with the numbers.
 *
 * Cheap by design: no allocation, no locks, a few compares per dim.
 */
#ifndef GLLMK_CORE_VALIDATE_H
#define GLLMK_CORE_VALIDATE_H

#include "core.h"

/* A validated view and what validation learned about it. t == NULL marks
 * an optional argument the caller left out. */
struct core_view {
	const char *name;           /* the argument's name in messages */
	const gllmk_tensor *t;
	const struct core_dtype *dt;
	uint64_t lo, hi;            /* the bytes [lo, hi) of t->buf it touches */
	uint64_t row_bytes;
};

enum core_role {
	CORE_IN = 0,
	CORE_OUT = 1, /* must not overlap itself */
};

/* The context argument of every op. */
gllmk_status core_check_ctx(const char *fn, const gllmk_context *ctx);
/* A required pointer argument that is not a tensor (params, uniform). */
gllmk_status core_check_ptr(const char *fn, const char *name, const void *p);

/* Bit of dtype t in the dtype masks of core_view. */
#define CORE_DT(t) (1u << (t))
#define CORE_DT_F32 CORE_DT(GLLMK_F32)
#define CORE_DT_I32 CORE_DT(GLLMK_I32)
#define CORE_DT_FLOAT (CORE_DT(GLLMK_F32) | CORE_DT(GLLMK_F16) | CORE_DT(GLLMK_BF16))
#define CORE_DT_ALL_BUT_I32 (~CORE_DT_I32)
#define CORE_DT_F32_F16 (CORE_DT(GLLMK_F32) | CORE_DT(GLLMK_F16))

/* SPEC/OPERATORS.md "Tensors and views", in this order: NULL (tensor,
 * buffer), live buffer, context, dtype (known, then one of `dtypes`, which
 * `want` says in words), rank and dims, innermost stride, negative strides,
 * block multiple, alignment, overflow, bounds, and for outputs
 * self-overlap. */
gllmk_status core_view(const gllmk_context *ctx, const char *fn, const char *name, const gllmk_tensor *t,
		       enum core_role role, uint32_t dtypes, const char *want, struct core_view *v);
/* The same, but a NULL t is an absent optional argument (v->t = NULL). */
gllmk_status core_view_opt(const gllmk_context *ctx, const char *fn, const char *name, const gllmk_tensor *t,
			   enum core_role role, uint32_t dtypes, const char *want, struct core_view *v);

/* GLLMK_E_SHAPE unless v has ndim dims; layout names them ("[M, K]"). */
gllmk_status core_check_ndim(const char *fn, const struct core_view *v, int32_t ndim, const char *layout);
/* GLLMK_E_SHAPE unless a.shape[da] == b.shape[db]; rule says why. */
gllmk_status core_check_dim(const char *fn, const struct core_view *a, int da, const struct core_view *b, int db,
			    const char *rule);
/* GLLMK_E_SHAPE unless a.shape[da] == want. */
gllmk_status core_check_dim_is(const char *fn, const struct core_view *a, int da, int64_t want, const char *rule);
/* GLLMK_E_SHAPE unless a and b have the same rank and dims. */
gllmk_status core_check_same_shape(const char *fn, const struct core_view *a, const struct core_view *b);

enum core_alias {
	CORE_DISJOINT = 0, /* out may not touch in at all */
	CORE_IN_PLACE = 1, /* out may be exactly in's view, or disjoint from it */
};
/* GLLMK_E_ALIAS when out's bytes overlap in's in the same buffer, unless
 * rule allows and the views are identical. An absent in passes. */
gllmk_status core_check_alias(const char *fn, const struct core_view *out, const struct core_view *in,
			      enum core_alias rule);

/* GLLMK_E_INVALID unless x is finite. */
gllmk_status core_check_finite(const char *fn, const char *name, float x);

#endif
