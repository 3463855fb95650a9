/* Unpacking of the weight blocks into bytes, shared by the decoders
 * (quant_avx512.c) and the integer dots (matmul_*_avx512.c): each gives
 * a zmm of 64 unsigned quants in element order, still biased (q4: 0..15,
 * q6: 0..63), so a dot can use them as vpdpbusd's unsigned operand. */
#ifndef GLLMK_AVX512_BLOCKS_H
#define GLLMK_AVX512_BLOCKS_H

#include <immintrin.h>

#include "fp16.h"
#include "quant_blocks.h"

static inline float f16_scalar(uint16_t h)
{
	return _cvtsh_ss(h);
}

/* Two q4_0 blocks a, b: [a 0..15 | a 16..31 | b 0..15 | b 16..31], i.e.
 * low nibbles of a, high nibbles of a, then b. Broadcast loads place the
 * bytes with no shuffle (port 5 is the dots' bottleneck). */
static inline __m512i q4_0_pair_bytes(const struct block_q4_0 *a, const struct block_q4_0 *b)
{
	const __m512i aa = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)a->qs));
	const __m512i aabb = _mm512_mask_broadcast_i32x4(aa, 0xff00, _mm_loadu_si128((const __m128i *)b->qs));
	/* 16-bit lanes 8..15 and 24..31 (the second copy of each) shift by 4 */
	const __m512i nib = _mm512_mask_srli_epi16(aabb, 0xff00ff00u, aabb, 4);

	return _mm512_and_si512(nib, _mm512_set1_epi8(0x0f));
}

/* 64 elements 64j..64j+63 of a q4_K block: low nibbles of qs[32j..], then
 * high nibbles. */
static inline __m512i q4_K_quarter(const struct block_q4_K *b, int j)
{
	const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b->qs + 32 * j)));

	return _mm512_and_si512(_mm512_mask_srli_epi16(q, 0xffff0000u, q, 4), _mm512_set1_epi8(0x0f));
}

/* The 8 6-bit scales and 8 mins of a q4_K block (k4_scales_mins). */
static inline void q4_K_scales(const struct block_q4_K *b, uint8_t sc[8], uint8_t m[8])
{
	uint32_t w[4];

	k4_scales_mins(b->scales, w);
	memcpy(sc, w, 8);
	memcpy(m, w + 2, 8);
}

/* Half h (128 elements) of a q6_K block: lo = elements 0..63, hi = 64..127
 * of the half, each a 6-bit unsigned quant (the − 32 is the caller's). */
static inline void q6_K_half(const struct block_q6_K *b, int h, __m512i *lo, __m512i *hi)
{
	const __m512i ql = _mm512_loadu_si512(b->ql + 64 * h);
	const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b->qh + 32 * h)));
	/* [qh | qh >> 2], bits 0-1 (then, >> 4, bits 4-5) the high bits of lo
	 * (hi) in element order; bitselects by 0x0f join them to the nibbles */
	const __m512i qhz = _mm512_and_si512(_mm512_mask_srli_epi16(qh, 0xffff0000u, qh, 2), _mm512_set1_epi8(0x33));
	const __m512i m4 = _mm512_set1_epi8(0x0f);

	/* m4 ? ql : qhz << 4, and m4 ? ql >> 4 : qhz, written over the shifts */
	*lo = _mm512_ternarylogic_epi32(_mm512_slli_epi16(qhz, 4), ql, m4, 0xd8);
	*hi = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), qhz, m4, 0xe4);
}

#endif
