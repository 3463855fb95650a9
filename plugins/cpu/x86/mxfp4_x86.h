/* mxfp4's pieces shared by the x86 dots (AVX2 and up): 8 blocks' E8M0
 * scales at once (MXFP4_SCALE one, fp16.h's e8m0_half_to_f32) and the code book
 * through vpshufb, offset to be unsigned for vpmaddubsw / vpdpbusd (the
 * dots take MXFP4_OFFSET·Σ x back out, as q5_0's take 16·Σ x).
 */
#ifndef GLLMK_X86_MXFP4_X86_H
#define GLLMK_X86_MXFP4_X86_H

#include <immintrin.h>
#include <stdint.h>

#include "fp16.h"
#include "quant_blocks.h"
#include "quant_grids.h"

#define MXFP4_OFFSET 12
#define MXFP4_PLUS_OFFSET(v) (char)((v) + MXFP4_OFFSET)
/* The 16 values + 12 (0..24), for _mm_setr_epi8. */
#define MXFP4_VALUES_U8 GLLMK_KVALUES_MXFP4(MXFP4_PLUS_OFFSET)

#define MXFP4_SCALE(b) e8m0_half_to_f32((b)->e)

/* The scales of 8 consecutive blocks: 2^(e − 128) as f32 bits, e < 2
 * subnormal. */
static inline __m256 mxfp4_scales8(const struct block_mxfp4 *b)
{
	uint64_t e8 = 0;

	for (int j = 0; j < 8; j++)
		e8 |= (uint64_t)b[j].e << 8 * j;

	const __m256i e = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)e8));
	const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
	const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);

	return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e)));
}

#endif
