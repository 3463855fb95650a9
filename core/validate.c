/* View checks shared by every operator (SPEC/OPERATORS.md, "Tensors and
 * views"; SPEC/ABI.md, "Validation").
 */
#include <inttypes.h>
#include <math.h>

#include "validate.h"

gllmk_status core_check_ctx_slow(const char *fn, const gllmk_context *ctx)
{
	if (unlikely(!ctx))
		return core_error(GLLMK_E_NULL, "%s: ctx is NULL", fn);
	if (unlikely(ctx->magic != CORE_CONTEXT_MAGIC))
		return core_error(GLLMK_E_INVALID, "%s: ctx is not an open context (closed, or not from gllmk_open)",
				  fn);
	return GLLMK_OK;
}

gllmk_status core_check_ptr(const char *fn, const char *name, const void *p)
{
	if (unlikely(!p))
		return core_error(GLLMK_E_NULL, "%s: %s is NULL", fn, name);
	return GLLMK_OK;
}

/* Buffer, context, dtype, rank and dims: everything about the view's
 * identity before its geometry is looked at. */
static gllmk_status view_identity(const gllmk_context *ctx, const char *fn, const char *name,
				  const gllmk_tensor *t, uint64_t dtypes, const char *want, struct core_view *v)
{
	const gllmk_buffer *buf = t->buf;

	if (unlikely(!buf))
		return core_error(GLLMK_E_NULL, "%s: %s.buf is NULL", fn, name);
	if (unlikely(buf->magic != CORE_BUFFER_MAGIC))
		return core_error(GLLMK_E_INVALID, "%s: %s.buf is not a live buffer (freed, or not from gllmk_buffer_*)",
				  fn, name);
	if (unlikely(buf->ctx != ctx))
		return core_error(GLLMK_E_CONTEXT, "%s: %s.buf belongs to another context", fn, name);
	v->dt = core_dtype(t->dtype);
	if (unlikely(!v->dt))
		return core_error(GLLMK_E_DTYPE, "%s: %s.dtype = %d is not a gllmk dtype", fn, name, (int)t->dtype);
	if (unlikely(!(dtypes & CORE_DT(t->dtype))))
		return core_error(GLLMK_E_DTYPE, "%s: %s.dtype = %s but %s must be %s", fn, name, v->dt->name, name,
				  want);
	if (unlikely(!(ctx->dtypes_ok & CORE_DT(t->dtype))))
		return core_error(GLLMK_E_UNSUPPORTED, "%s: %s.dtype = %s is a dtype of ABI 1.%u; plugin '%s' implements 1.%u",
				  fn, name, v->dt->name, v->dt->since_minor, ctx->plugin->name, ctx->plugin->abi_minor);
	if (unlikely(t->ndim < 1 || t->ndim > GLLMK_MAX_DIMS))
		return core_error(GLLMK_E_SHAPE, "%s: %s.ndim = %d (must be 1..%d)", fn, name, (int)t->ndim,
				  GLLMK_MAX_DIMS);
	for (int d = 0; d < t->ndim; d++)
		if (unlikely(t->shape[d] < 1))
			return core_error(GLLMK_E_SHAPE, "%s: %s.shape[%d] = %" PRId64 " (every dim must be >= 1)", fn,
					  name, d, t->shape[d]);
	return GLLMK_OK;
}

/* Strides, block, alignment: the layout rules of one row and its repeats. */
static gllmk_status view_layout(const char *fn, const char *name, const gllmk_tensor *t, struct core_view *v)
{
	const struct core_dtype *dt = v->dt;
	int inner = t->ndim - 1;
	int64_t n = t->shape[inner];
	int64_t elem = dt->block_elems == 1 ? dt->block_bytes : 0;

	if (unlikely(t->stride[inner] != 0 && t->stride[inner] != elem))
		return core_error(GLLMK_E_SHAPE,
				  "%s: %s.stride[%d] = %" PRId64 " (the innermost dim is contiguous: 0 or %" PRId64
				  " for %s)", fn, name, inner, t->stride[inner], elem, dt->name);
	for (int d = 0; d < inner; d++)
		if (unlikely(t->stride[d] < 0))
			return core_error(GLLMK_E_SHAPE, "%s: %s.stride[%d] = %" PRId64 " is negative", fn, name, d,
					  t->stride[d]);
	if (unlikely(n & (dt->block_elems - 1)))
		return core_error(GLLMK_E_BLOCK, "%s: %s.shape[%d] = %" PRId64 " is not a multiple of the %s block (%"
				  PRId64 ")", fn, name, inner, n, dt->name, dt->block_elems);
	if (unlikely(__builtin_mul_overflow((uint64_t)n >> dt->block_shift, (uint64_t)dt->block_bytes,
					    &v->row_bytes) || v->row_bytes > (uint64_t)INT64_MAX))
		return core_error(GLLMK_E_OVERFLOW, "%s: %s has rows of %" PRId64 " %s elements, over 2^63 bytes", fn,
				  name, n, dt->name);
	if (unlikely(t->offset & (dt->align - 1)))
		return core_error(GLLMK_E_ALIGN, "%s: %s.offset = %" PRIu64 " is not a multiple of %u (%s alignment)",
				  fn, name, t->offset, dt->align, dt->name);
	for (int d = 0; d < inner; d++)
		if (unlikely(t->stride[d] & (dt->align - 1)))
			return core_error(GLLMK_E_ALIGN,
					  "%s: %s.stride[%d] = %" PRId64 " is not a multiple of %u (%s alignment)", fn,
					  name, d, t->stride[d], dt->align, dt->name);
	return GLLMK_OK;
}

/* offset + Σ (shape[d]-1)·stride[d] + row_bytes, checked for overflow and
 * against the buffer's size. Byte positions must fit the int64_t of
 * offsets and strides, so "overflow" starts at 2^63. */
static gllmk_status view_extent(const char *fn, const char *name, const gllmk_tensor *t, struct core_view *v)
{
	uint64_t ext = v->row_bytes, step;

	for (int d = 0; d < t->ndim - 1; d++)
		if (unlikely(__builtin_mul_overflow(((uint64_t)t->shape[d] - 1), (uint64_t)t->stride[d], &step) ||
			     __builtin_add_overflow(ext, step, &ext)))
			goto overflow;
	if (unlikely(__builtin_add_overflow(t->offset, ext, &v->hi) || v->hi > (uint64_t)INT64_MAX))
		goto overflow;
	v->lo = t->offset;
	if (unlikely(v->hi > t->buf->size))
		return core_error(GLLMK_E_BOUNDS,
				  "%s: %s ends at byte %" PRIu64 " but its buffer has %" PRIu64 " bytes", fn, name,
				  v->hi, t->buf->size);
	return GLLMK_OK;
overflow:
	return core_error(GLLMK_E_OVERFLOW, "%s: %s spans more than 2^63 bytes (offset %" PRIu64 ")", fn, name,
			  t->offset);
}

/* An output's elements must be distinct bytes: each outer stride steps past
 * everything the inner dims cover (dims of size 1 never step). */
static gllmk_status view_distinct(const char *fn, const char *name, const gllmk_tensor *t,
				  const struct core_view *v)
{
	uint64_t span = v->row_bytes;

	for (int d = t->ndim - 2; d >= 0; d--) {
		if (t->shape[d] == 1)
			continue;
		if (unlikely((uint64_t)t->stride[d] < span))
			return core_error(GLLMK_E_ALIAS,
					  "%s: %s.stride[%d] = %" PRId64 " < %" PRIu64
					  " bytes of dims %d..%d: the output overlaps itself", fn, name, d,
					  t->stride[d], span, d + 1, t->ndim - 1);
		span += ((uint64_t)t->shape[d] - 1) * (uint64_t)t->stride[d];
	}
	return GLLMK_OK;
}

/* "[4096, 2048]" */
static void shape_str(const gllmk_tensor *t, char *s, size_t len)
{
	size_t n = (size_t)snprintf(s, len, "[");

	for (int d = 0; d < t->ndim && n < len; d++)
		n += (size_t)snprintf(s + n, len - n, "%s%" PRId64, d ? ", " : "", t->shape[d]);
	if (n < len)
		snprintf(s + n, len - n, "]");
}

/* Prepared weights (SPEC/ABI.md, "Prepared weights"): the weight argument
 * of the ops that take them, in the one view gllmk_weights_prepare
 * describes; their bytes are the plugin's, so nothing else may read them. */
static gllmk_status view_prepared(const char *fn, const char *name, const gllmk_tensor *t, enum core_role role,
				  struct core_view *v)
{
	const gllmk_tensor *p = &core_buffer_of(t->buf)->prepared;
	int same = t->offset == 0 && t->dtype == p->dtype && t->ndim == p->ndim;
	char want[96];

	if (unlikely(role != CORE_WEIGHT))
		return core_error(GLLMK_E_INVALID,
				  "%s: %s.buf holds prepared weights (gllmk_weights_prepare), which only the w of "
				  "gllmk_matmul, gllmk_matmul_id and gllmk_matmul_batched, the table of gllmk_get_rows "
				  "and the x of gllmk_dequantize read", fn, name);
	for (int d = 0; same && d < t->ndim; d++)
		same = t->shape[d] == p->shape[d] && (d == t->ndim - 1 || t->stride[d] == p->stride[d]);
	if (unlikely(!same || (t->stride[t->ndim - 1] != 0 && t->stride[t->ndim - 1] != v->dt->elem_stride))) {
		shape_str(p, want, sizeof(want));
		return core_error(GLLMK_E_INVALID,
				  "%s: %s views prepared weights other than as they were prepared (must be "
				  "gllmk_tensor_make(buf, 0, %s, %d, %s))", fn, name, core_dtypes[p->dtype].name,
				  (int)p->ndim, want);
	}
	v->row_bytes = (uint64_t)(p->shape[p->ndim - 1] >> v->dt->block_shift) * (uint64_t)v->dt->block_bytes;
	v->lo = 0;
	v->hi = t->buf->size;
	return GLLMK_OK;
}

gllmk_status core_view_slow(const gllmk_context *ctx, const char *fn, const char *name, const gllmk_tensor *t,
			    enum core_role role, uint64_t dtypes, const char *want, struct core_view *v)
{
	gllmk_status st;

	v->name = name;
	v->t = t;
	if (unlikely(!t))
		return core_error(GLLMK_E_NULL, "%s: %s is NULL", fn, name);
	st = view_identity(ctx, fn, name, t, dtypes, want, v);
	if (!st && t->buf->layout)
		return view_prepared(fn, name, t, role, v);
	if (!st)
		st = view_layout(fn, name, t, v);
	if (!st)
		st = view_extent(fn, name, t, v);
	if (!st && role == CORE_OUT)
		st = view_distinct(fn, name, t, v);
	return st;
}

gllmk_status core_check_ndim_slow(const char *fn, const struct core_view *v, int32_t ndim, const char *layout)
{
	if (unlikely(v->t->ndim != ndim))
		return core_error(GLLMK_E_SHAPE, "%s: %s.ndim = %d but %s must be %d-D %s", fn, v->name,
				  (int)v->t->ndim, v->name, (int)ndim, layout);
	return GLLMK_OK;
}

gllmk_status core_check_dim_slow(const char *fn, const struct core_view *a, int da, const struct core_view *b, int db,
			    const char *rule)
{
	if (unlikely(a->t->shape[da] != b->t->shape[db]))
		return core_error(GLLMK_E_SHAPE, "%s: %s.shape[%d] = %" PRId64 " but %s.shape[%d] = %" PRId64 " (%s)",
				  fn, a->name, da, a->t->shape[da], b->name, db, b->t->shape[db], rule);
	return GLLMK_OK;
}

gllmk_status core_check_dim_is(const char *fn, const struct core_view *a, int da, int64_t want, const char *rule)
{
	if (unlikely(a->t->shape[da] != want))
		return core_error(GLLMK_E_SHAPE, "%s: %s.shape[%d] = %" PRId64 " but must be %" PRId64 " (%s)", fn,
				  a->name, da, a->t->shape[da], want, rule);
	return GLLMK_OK;
}

gllmk_status core_check_same_shape_slow(const char *fn, const struct core_view *a, const struct core_view *b)
{
	if (unlikely(a->t->ndim != b->t->ndim))
		return core_error(GLLMK_E_SHAPE, "%s: %s.ndim = %d but %s.ndim = %d (same shape required)", fn,
				  a->name, (int)a->t->ndim, b->name, (int)b->t->ndim);
	for (int d = 0; d < a->t->ndim; d++) {
		gllmk_status st = core_check_dim(fn, a, d, b, d, "same shape required");

		if (st)
			return st;
	}
	return GLLMK_OK;
}

/* Same bytes, same meaning: an in-place call. The innermost stride is
 * compared by meaning (0 and the element size both say contiguous). */
static int views_identical(const gllmk_tensor *a, const gllmk_tensor *b)
{
	if (a->buf != b->buf || a->offset != b->offset || a->dtype != b->dtype || a->ndim != b->ndim)
		return 0;
	for (int d = 0; d < a->ndim; d++)
		if (a->shape[d] != b->shape[d] || (d < a->ndim - 1 && a->stride[d] != b->stride[d]))
			return 0;
	return 1;
}

gllmk_status core_check_alias_slow(const char *fn, const struct core_view *out, const struct core_view *in,
			      enum core_alias rule)
{
	if (!in->t || !out->t || out->t->buf != in->t->buf)
		return GLLMK_OK;
	if (out->hi <= in->lo || in->hi <= out->lo)
		return GLLMK_OK;
	if (rule == CORE_IN_PLACE && views_identical(out->t, in->t))
		return GLLMK_OK;
	return core_error(GLLMK_E_ALIAS,
			  "%s: %s (bytes %" PRIu64 "..%" PRIu64 ") overlaps %s (bytes %" PRIu64 "..%" PRIu64
			  ") in the same buffer (%s)", fn, out->name, out->lo, out->hi, in->name, in->lo, in->hi,
			  rule == CORE_IN_PLACE ? "in place needs the exact same view" : "this op never runs in place");
}

gllmk_status core_check_finite(const char *fn, const char *name, float x)
{
	if (unlikely(!isfinite(x)))
		return core_error(GLLMK_E_INVALID, "%s: %s = %g (must be finite)", fn, name, (double)x);
	return GLLMK_OK;
}
