/* The x86 attention kernels (attn_x86.c), one set per ISA, and one line
 * for each plugin's kernel table, listed after its row kernels:
 *   AVX2_ATTN_KERNELS,  or  AVX512_ATTN_KERNELS,
 */
#ifndef GLLMK_X86_ATTN_H
#define GLLMK_X86_ATTN_H

#include <stdint.h>

#define X86_ATTN_DECLARE(isa)                                                          \
	void isa##_axpy_f32(float *y, float a, const float *x, int64_t n);             \
	void isa##_axpy_f16(float *y, float a, const uint16_t *x, int64_t n);          \
	float isa##_dot_f32_f16(int64_t n, const float *a, const uint16_t *b);

X86_ATTN_DECLARE(avx2)
X86_ATTN_DECLARE(avx512)

#define X86_ATTN_KERNELS(isa)                   \
	.axpy_f32 = isa##_axpy_f32,             \
	.axpy_f16 = isa##_axpy_f16,             \
	.dot_f32_f16 = isa##_dot_f32_f16

#define AVX2_ATTN_KERNELS X86_ATTN_KERNELS(avx2)
#define AVX512_ATTN_KERNELS X86_ATTN_KERNELS(avx512)

#endif
