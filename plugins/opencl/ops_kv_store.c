/* kv_store (kernels/opencl/kv_store.cl): the kernel checks the slots
 * itself, skipping a bad slot's row and raising it in the status words,
 * which the next gllmk_sync or gllmk_buffer_read reports (ocl_check_status):
 * reading them back first blocked the queue at every call. */
#include "ocl_dtypes.h"

gllmk_status ocl_kv_store(void *st, gllmk_t cache, gllmk_t x, gllmk_t slots)
{
	struct ocl_ctx *s = st;
	int paged = cache->ndim == 4;
	int64_t tokens = x->shape[0], heads = x->shape[1], cap = cache->shape[0] * (paged ? cache->shape[1] : 1);
	int64_t units = x->shape[2] / ocl_decode_step(cache->dtype), total = tokens * heads * units;
	struct ocl_args args = ocl_args(s, ocl_kv_kernels[cache->dtype].kv_store);

	s->status_armed = 1;
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
	ocl_arg_mem(&args, s->status);
	return ocl_launch(&args, "gllmk_kv_store", (uint64_t)total);
}
