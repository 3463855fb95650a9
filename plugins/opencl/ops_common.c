/* What the operators share: tensors folded to the kernels' row addressing
 * and the kernels of each weight and K/V cache dtype. */
#include "ocl_plugin.h"
#include "../gpu_common/gpu_common.h"

#define OCL_WEIGHT_ENTRY(e)                                                            \
	[e] = { OCL_KERNEL_DEQUANT_##e, OCL_KERNEL_GET_ROWS_##e, OCL_KERNEL_MATMUL_##e, \
		OCL_KERNEL_MATVEC_##e, OCL_KERNEL_MATVEC_ID_##e },
const struct ocl_weight_kernels ocl_weight_kernels[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) GPU_IF_##weight(OCL_WEIGHT_ENTRY(e))
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

#define OCL_KV_ENTRY(e) [e] = { OCL_KERNEL_ATTENTION_##e, OCL_KERNEL_KV_STORE_##e },
const struct ocl_kv_kernels ocl_kv_kernels[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) GPU_IF_##kv(OCL_KV_ENTRY(e))
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

struct ocl_view ocl_view(const gllmk_tensor *t)
{
	struct ocl_view v = { .mem = ocl_mem(t), .off = t->offset, .d = { 1, 1, 1, 1 } };
	int pad = 4 - t->ndim;

	for (int d = 0; d < t->ndim; d++)
		v.d[pad + d] = t->shape[d];
	for (int d = 0; d < t->ndim - 1; d++)
		v.s[pad + d] = t->shape[d] == 1 ? 0 : t->stride[d];
	return v;
}

int64_t ocl_rows(const struct ocl_view *v)
{
	return v->d[0] * v->d[1] * v->d[2];
}
