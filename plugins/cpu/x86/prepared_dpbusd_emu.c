/* The VNNI variants of the group kernels (prepared_x86.h with
 * GROUP_DPBUSD), built with plain AVX2 and vpdpbusd emulated exactly, so
 * that a CPU without AVX-VNNI or AVX512-VNNI (and no emulator here has
 * them) still runs their integer paths: the i32 sums, the vpmulld by the
 * scales, the sign trick on vpdpbusd. Only test_prepared_dpbusd.c calls
 * these; the plugins' own VNNI tables use the real instruction.
 */
#include <immintrin.h>

/* acc + Σ u·s of each 4 bytes (u unsigned, s signed) in its i32 lane. */
static inline __m256i emu_dpbusd(__m256i acc, __m256i u, __m256i s)
{
	const __m256i low8 = _mm256_set1_epi16(0x00ff);
	const __m256i u_even = _mm256_and_si256(u, low8), u_odd = _mm256_srli_epi16(u, 8);
	const __m256i s_even = _mm256_srai_epi16(_mm256_slli_epi16(s, 8), 8), s_odd = _mm256_srai_epi16(s, 8);

	return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(u_even, s_even), _mm256_madd_epi16(u_odd, s_odd)));
}

#define GROUP_DPBUSD(acc, u, s) emu_dpbusd(acc, u, s)
#include "x86/prepared_x86.h"

cpu_dot_group_fn emu_dot_q4_0x8, emu_dot_q4_Kx8, emu_dot_q5_Kx8, emu_dot_iq4_xsx8, emu_dot_q2_Kx8, emu_dot_q3_Kx8;

CPU_DEFINE_DOT_GROUP(emu_dot_q4_0x8, q4_0x8_dot_body)
CPU_DEFINE_DOT_GROUP(emu_dot_q4_Kx8, q4_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(emu_dot_q5_Kx8, q5_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(emu_dot_iq4_xsx8, iq4_xsx8_dot_body)
CPU_DEFINE_DOT_GROUP(emu_dot_q2_Kx8, q2_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(emu_dot_q3_Kx8, q3_Kx8_dot_body)
