/* The attention inner loops on x86, written once against simd.h and
 * compiled like rows_x86.c: -mavx2 -mfma -mf16c into avx2_* and AVX-512
 * F/BW/VL/DQ into avx512_* (meson.build). f16 K and V rows are converted
 * in registers (vcvtph2ps) instead of being decoded to a buffer first.
 * Contracts: cpu_kernels.h (axpy_f32, dot_f32_f16, axpy_f16). Every loop
 * runs whole vectors, then one masked partial vector: no access past n.
 */
#include "attn_x86.h"
#include "simd.h"

#if VEC_WIDTH == 16
#define X86_FN(name) avx512_##name
#else
#define X86_FN(name) avx2_##name
#endif

void X86_FN(axpy_f32)(float *y, float a, const float *x, int64_t n)
{
	const vf va = vf_set1(a);
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		vf_store(y + i, vf_fma(va, vf_load(x + i), vf_load(y + i)));
		vf_store(y + i + VEC_WIDTH, vf_fma(va, vf_load(x + i + VEC_WIDTH), vf_load(y + i + VEC_WIDTH)));
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		vf_store(y + i, vf_fma(va, vf_load(x + i), vf_load(y + i)));
	if (i < n)
		vf_store_n(y + i, vf_fma(va, vf_load_n(x + i, n - i), vf_load_n(y + i, n - i)), n - i);
}

void X86_FN(axpy_f16)(float *y, float a, const uint16_t *x, int64_t n)
{
	const vf va = vf_set1(a);
	int64_t i = 0;

	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		vf_store(y + i, vf_fma(va, vf_load_f16(x + i), vf_load(y + i)));
	if (i < n)
		vf_store_n(y + i, vf_fma(va, vf_load_f16_n(x + i, n - i), vf_load_n(y + i, n - i)), n - i);
}

float X86_FN(dot_f32_f16)(int64_t n, const float *a, const uint16_t *b)
{
	vf s0 = vf_zero(), s1 = vf_zero();
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		s0 = vf_fma(vf_load(a + i), vf_load_f16(b + i), s0);
		s1 = vf_fma(vf_load(a + i + VEC_WIDTH), vf_load_f16(b + i + VEC_WIDTH), s1);
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		s0 = vf_fma(vf_load(a + i), vf_load_f16(b + i), s0);
	if (i < n)
		s1 = vf_fma(vf_load_n(a + i, n - i), vf_load_f16_n(b + i, n - i), s1);
	return vf_hsum(vf_add(s0, s1));
}
