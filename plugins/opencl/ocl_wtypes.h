/* Every weight dtype (matmul, dequantize, get_rows) and the name its
 * kernels carry in plugins/opencl/meson.build (dequant_<name>, ...). */
#ifndef GLLMK_OCL_WTYPES_H
#define GLLMK_OCL_WTYPES_H

#include "ocl_plugin.h"

#define OCL_WTYPES(X)          \
	X(GLLMK_F32, f32)      \
	X(GLLMK_F16, f16)      \
	X(GLLMK_BF16, bf16)    \
	X(GLLMK_Q4_0, q4_0)    \
	X(GLLMK_Q4_1, q4_1)    \
	X(GLLMK_Q5_0, q5_0)    \
	X(GLLMK_Q5_1, q5_1)    \
	X(GLLMK_Q8_0, q8_0)    \
	X(GLLMK_Q2_K, q2_k)    \
	X(GLLMK_Q3_K, q3_k)    \
	X(GLLMK_Q4_K, q4_k)    \
	X(GLLMK_Q5_K, q5_k)    \
	X(GLLMK_Q6_K, q6_k)    \
	X(GLLMK_Q8_K, q8_k)    \
	X(GLLMK_IQ4_NL, iq4_nl) \
	X(GLLMK_IQ4_XS, iq4_xs)

/* Elements each work-item of the decoding kernels covers. */
static inline int64_t ocl_decode_step(int32_t dtype)
{
	return dtype == GLLMK_F32 || dtype == GLLMK_F16 || dtype == GLLMK_BF16 ? 1 : 32;
}

#endif
