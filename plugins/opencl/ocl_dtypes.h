/* Dtype facts the OpenCL host code needs beyond the per-dtype kernel
 * tables (ops_common.c), from abi/gllmk_dtypes.def. */
#ifndef GLLMK_OCL_DTYPES_H
#define GLLMK_OCL_DTYPES_H

#include "ocl_plugin.h"

/* Elements each work-item of the decoding (and kv_store's encoding) kernels
 * covers: one element of a float dtype, 32 of a block dtype (a block of 32,
 * or one of the 32-element pieces a 256-element block is decoded in: deq32
 * in kernels/opencl/decode.h). */
static inline int64_t ocl_decode_step(int32_t dtype)
{
	static const int16_t block_elems[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) [e] = elems,
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
	};

	return block_elems[dtype] == 1 ? 1 : 32;
}

#endif
