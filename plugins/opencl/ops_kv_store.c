/* kv_store (kernels/opencl/kv_store.cl): every slot is read back and checked
 * on the host first (a blocking read of T i32, as get_rows' ids), so a bad
 * slot is GLLMK_E_BOUNDS from the call itself and nothing is enqueued. */
#include <stdlib.h>

#include "ocl_dtypes.h"

/* Slots in [-1, cap). */
static gllmk_status check_slots(struct ocl_ctx *s, gllmk_t slots, int64_t n, int64_t cap)
{
	int32_t small[256], *buf = n <= 256 ? small : malloc((size_t)n * sizeof(int32_t));
	gllmk_status st;

	if (!buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_kv_store: no host memory to check %lld slots",
					  (long long)n);
	st = ocl_read_i32(s, "gllmk_kv_store", slots, n, buf);
	for (int64_t i = 0; st == GLLMK_OK && i < n; i++)
		if (buf[i] < -1 || buf[i] >= cap)
			st = s->host->set_error(GLLMK_E_BOUNDS,
						"gllmk_kv_store: slots[%lld] = %d, cache has %lld slots (-1 skips a row)",
						(long long)i, buf[i], (long long)cap);
	if (buf != small)
		free(buf);
	return st;
}

gllmk_status ocl_kv_store(void *st, gllmk_t cache, gllmk_t x, gllmk_t slots)
{
	struct ocl_ctx *s = st;
	int paged = cache->ndim == 4;
	int64_t tokens = x->shape[0], heads = x->shape[1], cap = cache->shape[0] * (paged ? cache->shape[1] : 1);
	int64_t units = x->shape[2] / ocl_decode_step(cache->dtype), total = tokens * heads * units;
	struct ocl_args args = ocl_args(s, ocl_kv_kernels[cache->dtype].kv_store);
	gllmk_status rc = check_slots(s, slots, tokens, cap);

	if (rc != GLLMK_OK)
		return rc;
	ocl_arg_mem(&args, ocl_mem(cache));
	ocl_arg_long(&args, (int64_t)cache->offset);
	ocl_arg_long(&args, paged ? cache->stride[0] : 0);
	ocl_arg_long(&args, cache->stride[paged ? 1 : 0]);
	ocl_arg_long(&args, cache->stride[paged ? 2 : 1]);
	ocl_arg_long(&args, paged ? cache->shape[1] : cap);
	ocl_arg_long(&args, cap);
	ocl_arg_mem(&args, ocl_mem(x));
	ocl_arg_long(&args, (int64_t)x->offset);
	ocl_arg_long(&args, x->stride[0]);
	ocl_arg_long(&args, x->stride[1]);
	ocl_arg_mem(&args, ocl_mem(slots));
	ocl_arg_long(&args, (int64_t)slots->offset);
	ocl_arg_long(&args, heads);
	ocl_arg_long(&args, units);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, "gllmk_kv_store", (uint64_t)total);
}
