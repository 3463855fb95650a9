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
	CORE_OUT = 1,    /* must not overlap itself */
	CORE_WEIGHT = 2, /* an input that may be prepared weights (gllmk_weights_prepare) */
};

/* Each check below is an inline test of the common case; its _slow twin
 * (validate.c) runs only on failure, finds the rule broken and writes the
 * message. */

/* The context argument of every op. */
gllmk_status core_check_ctx_slow(const char *fn, const gllmk_context *ctx);
static inline gllmk_status core_check_ctx(const char *fn, const gllmk_context *ctx)
{
	if (likely(ctx && ctx->magic == CORE_CONTEXT_MAGIC))
		return GLLMK_OK;
	return core_check_ctx_slow(fn, ctx);
}
/* A required pointer argument that is not a tensor (params, uniform). */
gllmk_status core_check_ptr(const char *fn, const char *name, const void *p);

/* Bit of dtype t in the dtype masks of core_view. */
#define CORE_DT(t) (UINT64_C(1) << (t))
#define CORE_DT_F32 CORE_DT(GLLMK_F32)
#define CORE_DT_I32 CORE_DT(GLLMK_I32)
#define CORE_DT_FLOAT (CORE_DT(GLLMK_F32) | CORE_DT(GLLMK_F16) | CORE_DT(GLLMK_BF16))
#define CORE_DT_ALL_BUT_I32 (~CORE_DT_I32)
#define CORE_DT_F32_F16 (CORE_DT(GLLMK_F32) | CORE_DT(GLLMK_F16))

/* SPEC/OPERATORS.md "Tensors and views", in this order: NULL (tensor,
 * buffer), live buffer, context, dtype (known, then one of `dtypes`, which
 * `want` says in words), rank and dims, innermost stride, negative strides,
 * block multiple, alignment, overflow, bounds, and for outputs
 * self-overlap. core_view_slow walks these rules one by one and names the
 * first that fails; core_view (below) runs it only when the fast check
 * cannot vouch for the view. */
gllmk_status core_view_slow(const gllmk_context *ctx, const char *fn, const char *name, const gllmk_tensor *t,
			    enum core_role role, uint64_t dtypes, const char *want, struct core_view *v);

/* Every op validates every view on every call, so the common case must be
 * a short run of compares, not the rules walked in order with a message
 * ready for each (BENCHMARKS.md, "overhead"). core_view_fast is
 * conservative: it returns 1 only for a view the full rules accept
 * (filling v as core_view_slow would), and 0 for anything bad *or* unusual
 * (a dim or outer stride of 2^28 or more, an offset of 2^60 or more: sizes
 * where the overflow arithmetic needs care, none of them anywhere near a
 * product of two such values overflowing); core_view_slow then decides
 * and explains. Every bad view of the validation suite takes the slow path
 * and gets its exact message. */
#define CORE_FAST_DIM_LIMIT ((uint64_t)1 << 28)
#define CORE_FAST_OFFSET_LIMIT ((uint64_t)1 << 60)

/* core_dtypes[GLLMK_F32] as a constant the compiler can see through */
static const struct core_dtype core_dtype_f32_fast = CORE_DTYPE_ENTRY(CORE_DTYPE_F32_LAYOUT);

static inline int core_view_fast(const gllmk_context *ctx, const gllmk_tensor *t, enum core_role role,
				 uint64_t dtypes, struct core_view *v)
{
	const gllmk_buffer *buf;
	const struct core_dtype *dt;
	uint64_t big, misalign, ext, span;
	uint32_t dtype, inner;
	int64_t n;

	/* prepared weights take the slow path, which knows their one view */
	if (unlikely(!t || !(buf = t->buf) || buf->magic != CORE_BUFFER_MAGIC || buf->ctx != ctx || buf->layout))
		return 0;
	dtype = (uint32_t)t->dtype;
	inner = (uint32_t)t->ndim - 1;
	if (unlikely(dtype >= GLLMK_DTYPE_LIMIT || !((dtypes & ctx->dtypes_ok) >> dtype & 1) || inner >= GLLMK_MAX_DIMS))
		return 0;
	dt = &core_dtypes[dtype];
	/* f32-only arguments (most of them): the rules below fold to constants */
	if (dtypes == CORE_DT_F32)
		dt = &core_dtype_f32_fast;
	n = t->shape[inner];
	/* every dim in 1..2^28 and every outer stride in 0..2^28, in one test;
	 * the subtractions are unsigned so a shape of INT64_MIN wraps instead of
	 * overflowing (undefined behaviour) before the test rejects it */
	big = (uint64_t)n - 1;
	misalign = t->offset;
	ext = 0;
	for (uint32_t d = 0; d < inner; d++) {
		big |= ((uint64_t)t->shape[d] - 1) | (uint64_t)t->stride[d];
		misalign |= (uint64_t)t->stride[d];
		ext += ((uint64_t)t->shape[d] - 1) * (uint64_t)t->stride[d];
	}
	if (unlikely(big >= CORE_FAST_DIM_LIMIT || t->offset >= CORE_FAST_OFFSET_LIMIT || !dt->name))
		return 0;
	/* block multiple, alignment, innermost stride 0 or the element size */
	if (unlikely(((uint64_t)n & (uint64_t)(dt->block_elems - 1)) | (misalign & (dt->align - 1)) |
		     ((uint64_t)t->stride[inner] & ~(uint64_t)dt->elem_stride)))
		return 0;
	v->row_bytes = (uint64_t)(n >> dt->block_shift) * (uint64_t)dt->block_bytes;
	v->lo = t->offset;
	v->hi = t->offset + ext + v->row_bytes;
	if (unlikely(v->hi > buf->size))
		return 0;
	if (role == CORE_OUT) {
		span = v->row_bytes;
		for (int d = (int)inner - 1; d >= 0; d--) {
			if (t->shape[d] == 1)
				continue;
			if (unlikely((uint64_t)t->stride[d] < span))
				return 0;
			span += ((uint64_t)t->shape[d] - 1) * (uint64_t)t->stride[d];
		}
	}
	v->t = t;
	v->dt = dt;
	return 1;
}

static inline gllmk_status core_view(const gllmk_context *ctx, const char *fn, const char *name,
				     const gllmk_tensor *t, enum core_role role, uint64_t dtypes, const char *want,
				     struct core_view *v)
{
	v->name = name;
	if (likely(core_view_fast(ctx, t, role, dtypes, v)))
		return GLLMK_OK;
	return core_view_slow(ctx, fn, name, t, role, dtypes, want, v);
}

/* The same, but a NULL t is an absent optional argument (v->t = NULL). */
static inline gllmk_status core_view_opt(const gllmk_context *ctx, const char *fn, const char *name,
					 const gllmk_tensor *t, enum core_role role, uint64_t dtypes,
					 const char *want, struct core_view *v)
{
	if (!t) {
		v->name = name;
		v->t = NULL;
		return GLLMK_OK;
	}
	return core_view(ctx, fn, name, t, role, dtypes, want, v);
}

/* GLLMK_E_SHAPE unless v has ndim dims; layout names them ("[M, K]"). */
gllmk_status core_check_ndim_slow(const char *fn, const struct core_view *v, int32_t ndim, const char *layout);
static inline gllmk_status core_check_ndim(const char *fn, const struct core_view *v, int32_t ndim,
					   const char *layout)
{
	if (likely(v->t->ndim == ndim))
		return GLLMK_OK;
	return core_check_ndim_slow(fn, v, ndim, layout);
}
/* GLLMK_E_SHAPE unless a.shape[da] == b.shape[db]; rule says why. */
gllmk_status core_check_dim_slow(const char *fn, const struct core_view *a, int da, const struct core_view *b,
				 int db, const char *rule);
static inline gllmk_status core_check_dim(const char *fn, const struct core_view *a, int da,
					  const struct core_view *b, int db, const char *rule)
{
	if (likely(a->t->shape[da] == b->t->shape[db]))
		return GLLMK_OK;
	return core_check_dim_slow(fn, a, da, b, db, rule);
}
/* GLLMK_E_SHAPE unless a.shape[da] == want. */
gllmk_status core_check_dim_is(const char *fn, const struct core_view *a, int da, int64_t want, const char *rule);
/* GLLMK_E_SHAPE unless a and b have the same rank and dims. */
gllmk_status core_check_same_shape_slow(const char *fn, const struct core_view *a, const struct core_view *b);
static inline gllmk_status core_check_same_shape(const char *fn, const struct core_view *a,
						 const struct core_view *b)
{
	int differ = a->t->ndim != b->t->ndim;

	for (int d = 0; !differ && d < a->t->ndim; d++)
		differ = a->t->shape[d] != b->t->shape[d];
	if (likely(!differ))
		return GLLMK_OK;
	return core_check_same_shape_slow(fn, a, b);
}

enum core_alias {
	CORE_DISJOINT = 0, /* out may not touch in at all */
	CORE_IN_PLACE = 1, /* out may be exactly in's view, or disjoint from it */
};
/* GLLMK_E_ALIAS when out's bytes overlap in's in the same buffer, unless
 * rule allows and the views are identical. An absent in passes. */
gllmk_status core_check_alias_slow(const char *fn, const struct core_view *out, const struct core_view *in,
				   enum core_alias rule);
static inline gllmk_status core_check_alias(const char *fn, const struct core_view *out,
					    const struct core_view *in, enum core_alias rule)
{
	if (likely(!in->t || !out->t || out->t->buf != in->t->buf || out->hi <= in->lo || in->hi <= out->lo))
		return GLLMK_OK;
	return core_check_alias_slow(fn, out, in, rule);
}

/* GLLMK_E_INVALID unless x is finite. */
gllmk_status core_check_finite(const char *fn, const char *name, float x);

#endif
