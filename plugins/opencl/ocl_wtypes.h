/* Every weight dtype (matmul, dequantize, get_rows) and the name its
 * kernels carry (dequant_<name>, ...): OCL_WTYPES(X) gives X(dtype, name).
 * Both come from abi/gllmk_dtypes.def: meson lists the WEIGHT dtypes'
 * kernels from it and writes the same list into ocl_kernel_list.h (C's
 * preprocessor cannot lower-case the .def's names into kernel names). */
#ifndef GLLMK_OCL_WTYPES_H
#define GLLMK_OCL_WTYPES_H

#include "ocl_plugin.h"

#define OCL_WTYPES(X) OCL_WEIGHT_DTYPES(X)

/* The build's list holds every WEIGHT dtype of the .def, no more, no less. */
enum {
	OCL_DEF_WEIGHTS = 0
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) + (weight)
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};
#define OCL_WTYPE_ONE(dt, name) +1
_Static_assert(0 OCL_WTYPES(OCL_WTYPE_ONE) == OCL_DEF_WEIGHTS, "OCL_WEIGHT_DTYPES and abi/gllmk_dtypes.def disagree");
#undef OCL_WTYPE_ONE

/* Elements each work-item of the decoding kernels covers: one element of
 * a float dtype, 32 of a block dtype (a block of 32, or one of the 32-element
 * groups every 256-element format is made of: deq32 in decode.h). */
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
