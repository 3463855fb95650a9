/* The dtype table (SPEC/OPERATORS.md, "dtypes"; layouts in SPEC/QUANT.md)
 * and contiguous tensor views.
 */
#include "core.h"

/* One entry per line of abi/gllmk_dtypes.def. */
const struct core_dtype core_dtypes[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, al, minor, weight, kv) \
	[e] = CORE_DTYPE_ENTRY(#name, elems, bytes, al, minor, weight, kv),
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

uint64_t core_dtype_mask(uint32_t minor)
{
	uint64_t m = 0;

	for (int t = 0; t < GLLMK_DTYPE_LIMIT; t++)
		if (core_dtypes[t].name && core_dtypes[t].since_minor <= minor)
			m |= UINT64_C(1) << t;
	return m;
}

GLLMK_API const char *gllmk_dtype_name(gllmk_dtype t)
{
	const struct core_dtype *d = core_dtype(t);

	return d ? d->name : NULL;
}

GLLMK_API int64_t gllmk_dtype_block_elems(gllmk_dtype t)
{
	const struct core_dtype *d = core_dtype(t);

	return d ? d->block_elems : 0;
}

GLLMK_API int64_t gllmk_dtype_block_bytes(gllmk_dtype t)
{
	const struct core_dtype *d = core_dtype(t);

	return d ? d->block_bytes : 0;
}

GLLMK_API gllmk_status gllmk_dtype_row_bytes(gllmk_dtype t, int64_t n, uint64_t *bytes)
{
	const struct core_dtype *d = core_dtype(t);
	uint64_t b;

	if (!bytes)
		return core_error(GLLMK_E_NULL, "gllmk_dtype_row_bytes: bytes is NULL");
	if (!d)
		return core_error(GLLMK_E_DTYPE, "gllmk_dtype_row_bytes: dtype %d is not a gllmk dtype", (int)t);
	if (n < 0)
		return core_error(GLLMK_E_INVALID, "gllmk_dtype_row_bytes: n = %lld is negative", (long long)n);
	if (n % d->block_elems)
		return core_error(GLLMK_E_BLOCK,
				  "gllmk_dtype_row_bytes: n = %lld is not a multiple of the %s block (%lld)",
				  (long long)n, d->name, (long long)d->block_elems);
	if (__builtin_mul_overflow((uint64_t)(n / d->block_elems), (uint64_t)d->block_bytes, &b) ||
	    b > (uint64_t)INT64_MAX)
		return core_error(GLLMK_E_OVERFLOW, "gllmk_dtype_row_bytes: n = %lld %s elements take 2^63 bytes or more",
				  (long long)n, d->name);
	*bytes = b;
	return GLLMK_OK;
}

/* Strides of a contiguous view; a product that overflows saturates, so the
 * view fails its bounds check with GLLMK_E_OVERFLOW when it is used. */
GLLMK_API gllmk_tensor gllmk_tensor_make(gllmk_buffer *buf, uint64_t offset, gllmk_dtype dtype, int32_t ndim,
					 const int64_t *shape)
{
	const struct core_dtype *d = core_dtype(dtype);
	gllmk_tensor t = { .buf = buf, .offset = offset, .dtype = dtype, .ndim = ndim };
	int n = ndim < 0 ? 0 : ndim > GLLMK_MAX_DIMS ? GLLMK_MAX_DIMS : ndim;
	int64_t span;

	if (!shape || n == 0)
		return t;
	for (int i = 0; i < n; i++)
		t.shape[i] = shape[i];
	if (!d)
		return t;
	t.stride[n - 1] = d->block_elems == 1 ? d->block_bytes : 0;
	if (shape[n - 1] < 0 || __builtin_mul_overflow(shape[n - 1] / d->block_elems, d->block_bytes, &span))
		span = INT64_MAX;
	for (int i = n - 2; i >= 0; i--) {
		t.stride[i] = span;
		if (shape[i] < 0 || __builtin_mul_overflow(span, shape[i], &span))
			span = INT64_MAX;
	}
	return t;
}
