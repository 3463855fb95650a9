/* The plugin's dtype lists, X(dtype, name) with the name its kernels carry,
 * both from abi/gllmk_dtypes.def: meson builds each dtype's kernels from the
 * .def's WEIGHT and KV columns and writes the same lists into
 * ocl_kernel_list.h (C's preprocessor cannot lower-case the .def's names
 * into kernel names):
 *   OCL_WEIGHT_DTYPES  dequant_, get_rows_, matmul_, matvec_, matvec_id_<name>
 *   OCL_KV_DTYPES      attention_, kv_store_<name> */
#ifndef GLLMK_OCL_DTYPES_H
#define GLLMK_OCL_DTYPES_H

#include "ocl_plugin.h"

/* The build's lists hold every WEIGHT and every KV dtype of the .def. */
enum {
	OCL_DEF_WEIGHTS = 0
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) + (weight)
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
	,
	OCL_DEF_KVS = 0
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) + (kv)
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};
#define OCL_COUNT_ONE(dt, name) +1
_Static_assert(0 OCL_WEIGHT_DTYPES(OCL_COUNT_ONE) == OCL_DEF_WEIGHTS, "OCL_WEIGHT_DTYPES and the .def disagree");
_Static_assert(0 OCL_KV_DTYPES(OCL_COUNT_ONE) == OCL_DEF_KVS, "OCL_KV_DTYPES and the .def disagree");
#undef OCL_COUNT_ONE

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
