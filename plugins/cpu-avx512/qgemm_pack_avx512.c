/* The int8 GEMM's B packers (cpu_qgemm_pack_fn; panel layout:
 * plugins/cpu/gemm/qgemm.h, unsigned u for vpdpbusd) with AVX-512: the same
 * bytes as the framework's cpu_qgemm_pack_b (plugins/cpu/gemm/qgemm_pack.c, the
 * reference), without its per-row scalar decode and 4-byte interleave.
 *
 * For each 64 elements of K: every row's 64 u bytes are decoded into one zmm
 * (nibbles and code books by shifts, masks and vpshufb), the 16 rows ×
 * 16 dwords are transposed in registers, and each result (one 4-byte group
 * of K across the 16 rows) is one 64-byte store into its sub-block. The
 * scales are computed as the C decoders compute them (F16C converts the
 * f16s exactly as fp16.h does), one float multiply each, so they are
 * bit-identical.
 */
#include <immintrin.h>
#include <string.h>

#include "avx512_kernels.h"
#include "cpu_cntx.h"
#include "gemm/qgemm_pack_isa.h"

#define NR CPU_QGEMM_NR

/* Decode elements [64·c, 64·c + 64) of one weight row into u (the
 * returned zmm) and the scales (and offsets) of its 64/sb sub-blocks into
 * scale[NR·s], off[NR·s]. */
typedef __m512i (*chunk_decoder)(const uint8_t *row, int64_t c, float *scale, float *off);

/* ------------------------------------------------------ panel body */

/* r[j] becomes dword j of every r[i] (i = 0..15), r[i] being row i. */
static inline __attribute__((always_inline)) void transpose_16x16_epi32(__m512i r[16])
{
	__m512i t[16];

	/* 4×4 blocks within each 128-bit lane: 32-bit, then 64-bit interleaves */
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
	for (int i = 0; i < 16; i += 4) {
		r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
		r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
		r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
		r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* r[4q + i], lane L: dword 4L + i of rows 4q..4q+3; gather the lanes */
	for (int i = 0; i < 4; i++) {
		const __m512i a0 = _mm512_shuffle_i32x4(r[i], r[4 + i], 0x88);
		const __m512i a1 = _mm512_shuffle_i32x4(r[i], r[4 + i], 0xdd);
		const __m512i b0 = _mm512_shuffle_i32x4(r[8 + i], r[12 + i], 0x88);
		const __m512i b1 = _mm512_shuffle_i32x4(r[8 + i], r[12 + i], 0xdd);

		t[i] = _mm512_shuffle_i32x4(a0, b0, 0x88);
		t[4 + i] = _mm512_shuffle_i32x4(a1, b1, 0x88);
		t[8 + i] = _mm512_shuffle_i32x4(a0, b0, 0xdd);
		t[12 + i] = _mm512_shuffle_i32x4(a1, b1, 0xdd);
	}
	for (int i = 0; i < 16; i++)
		r[i] = t[i];
}

static inline __attribute__((always_inline)) void pack_panel(const uint8_t *w, int64_t row_bytes, int64_t rows,
							     int64_t kc, int w_bias, uint8_t *dst, const int sb,
							     const int has_min, chunk_decoder decode)
{
	const int64_t sb_bytes = CPU_QGEMM_B_SB_BYTES(sb, has_min);

	for (int64_t c = 0; c < kc / 64; c++) {
		uint8_t *d = dst + c * (64 / sb) * sb_bytes;
		__m512i u[NR];
		float scale[4 * NR], off[4 * NR];

		if (rows < NR) {
			memset(scale, 0, sizeof(scale));
			memset(off, 0, sizeof(off));
		}
		for (int64_t r = 0; r < NR; r++)
			u[r] = r < rows ? _mm512_sub_epi8(decode(w + r * row_bytes, c, scale + r, off + r),
							  _mm512_set1_epi8((char)w_bias))
					: _mm512_setzero_si512();
		transpose_16x16_epi32(u);
		/* u[j]: bytes 4j..4j+3 of the 64, sub-block 4j/sb, group (4j mod sb)/4 */
		for (int j = 0; j < 16; j++)
			_mm512_storeu_si512(d + 4 * j / sb * sb_bytes + 4 * j % sb / 4 * 4 * NR, u[j]);
		for (int s = 0; s < 64 / sb; s++) {
			_mm512_storeu_ps(d + s * sb_bytes + NR * sb, _mm512_loadu_ps(scale + NR * s));
			if (has_min)
				_mm512_storeu_ps(d + s * sb_bytes + NR * sb + 4 * NR, _mm512_loadu_ps(off + NR * s));
		}
	}
}

/* --------------------------------------------------- byte helpers */

/* Two 16-byte groups a, b of nibble pairs (low: elements 0..15, high:
 * 16..31, the q4_0 order) as [a & 15, a >> 4, b & 15, b >> 4]. */
static inline __m512i nibbles_2x16(__m128i a, __m128i b)
{
	const __m256i v = _mm256_set_m128i(b, a), m = _mm256_set1_epi8(0x0f);
	const __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
	const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);

	return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));
}

/* 32 bytes of nibble pairs (low: elements 0..31, high: 32..63, the q4_K
 * order) as [v & 15, v >> 4]. */
static inline __m512i nibbles_32(__m256i v)
{
	const __m256i m = _mm256_set1_epi8(0x0f);

	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(v, m)),
				  _mm256_and_si256(_mm256_srli_epi16(v, 4), m), 1);
}

/* iq4_nl's code book biased to unsigned (+128), through vpshufb. */
static inline __m512i iq4_lookup(__m512i nib)
{
	const __m128i book = _mm_xor_si128(_mm_loadu_si128((const __m128i *)iq4nl_values), _mm_set1_epi8(-128));

	return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(book), nib);
}

/* Bit pairs of 32 bytes v, as 64: [(v >> shift) & 3, (v >> (shift + 2)) & 3]. */
static inline __m512i bit_pairs_64(__m256i v, int shift)
{
	const __m256i three = _mm256_set1_epi8(3);

	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(_mm256_srli_epi16(v, shift), three)),
				  _mm256_and_si256(_mm256_srli_epi16(v, shift + 2), three), 1);
}

/* Bits b and b + 1 of 32 bytes, as 64: value where bit b (first 32) or bit
 * b + 1 (last 32) is set, else 0. */
static inline __m512i bits_64(const uint8_t *bytes, int b, char value)
{
	const __m256i v = _mm256_loadu_si256((const __m256i *)bytes);
	const __mmask64 set = (__mmask64)_mm256_test_epi8_mask(v, _mm256_set1_epi8((char)(1 << b))) |
			      (__mmask64)_mm256_test_epi8_mask(v, _mm256_set1_epi8((char)(2 << b))) << 32;

	return _mm512_maskz_mov_epi8(set, _mm512_set1_epi8(value));
}

/* -------------------------------------- 32-element blocks: two a chunk */

static inline __m512i decode_q4_0(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_q4_0 *x = (const struct block_q4_0 *)row + 2 * c;

	(void)off;
	scale[0] = _cvtsh_ss(x[0].d);
	scale[NR] = _cvtsh_ss(x[1].d);
	return nibbles_2x16(_mm_loadu_si128((const __m128i *)x[0].qs), _mm_loadu_si128((const __m128i *)x[1].qs));
}

static inline __m512i decode_iq4_nl(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_iq4_nl *x = (const struct block_iq4_nl *)row + 2 * c;

	(void)off;
	scale[0] = _cvtsh_ss(x[0].d);
	scale[NR] = _cvtsh_ss(x[1].d);
	return iq4_lookup(
		nibbles_2x16(_mm_loadu_si128((const __m128i *)x[0].qs), _mm_loadu_si128((const __m128i *)x[1].qs)));
}

/* q8_0: the signed quants biased to unsigned (xor 0x80). */
static inline __m512i decode_q8_0(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_q8_0 *x = (const struct block_q8_0 *)row + 2 * c;
	const __m256i q0 = _mm256_loadu_si256((const __m256i *)x[0].qs);
	const __m256i q1 = _mm256_loadu_si256((const __m256i *)x[1].qs);

	(void)off;
	scale[0] = _cvtsh_ss(x[0].d);
	scale[NR] = _cvtsh_ss(x[1].d);
	return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1), _mm512_set1_epi8(-128));
}

/* ------------------------------------ 256-element blocks: four chunks */

/* iq4_xs: chunk c is 32-element sub-blocks 2q, 2q + 1 (q = c mod 4), scale
 * d·(ls − 32) with ls 4 low bits from scales_l, 2 high from scales_h. */
static inline __m512i decode_iq4_xs(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_iq4_xs *x = (const struct block_iq4_xs *)row + c / 4;
	const int q = (int)(c % 4);

	(void)off;
	qgemm_chunk_scales_iq4_xs(x, q, _cvtsh_ss(x->d), scale);
	return iq4_lookup(nibbles_2x16(_mm_loadu_si128((const __m128i *)(x->qs + 32 * q)),
				       _mm_loadu_si128((const __m128i *)(x->qs + 32 * q + 16))));
}

/* q4_K and q5_K: chunk q = c mod 4 is sub-blocks 2q, 2q + 1 (qgemm_pack_isa.h). */
static inline __m512i decode_q4_K(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_q4_K *x = (const struct block_q4_K *)row + c / 4;
	const int q = (int)(c % 4);

	qgemm_chunk_scales_k4(x->scales, _cvtsh_ss(x->d), _cvtsh_ss(x->dmin), q, scale, off);
	return nibbles_32(_mm256_loadu_si256((const __m256i *)(x->qs + 32 * q)));
}

/* q5_K: the fifth bit of element l of sub-block 2q + h is bit 2q + h of qh[l]. */
static inline __m512i decode_q5_K(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_q5_K *x = (const struct block_q5_K *)row + c / 4;
	const int q = (int)(c % 4);

	qgemm_chunk_scales_k4(x->scales, _cvtsh_ss(x->d), _cvtsh_ss(x->dmin), q, scale, off);
	return _mm512_or_si512(nibbles_32(_mm256_loadu_si256((const __m256i *)(x->qs + 32 * q))),
			       bits_64(x->qh, 2 * q, 0x10));
}

/* q6_K: chunk c is half c/2 mod 2, part c mod 2 of it: 4 low bits from 64
 * ql bytes (low nibbles for part 0, high for 1), 2 high from 32 qh bytes
 * (bits 0-1 and 2-3 for part 0, 4-5 and 6-7 for 1); four 16-element
 * sub-blocks, scale d·sc. */
static inline __m512i decode_q6_K(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_q6_K *x = (const struct block_q6_K *)row + c / 4;
	const int half = (int)(c % 4 / 2), part = (int)(c % 2);
	const __m512i ql = _mm512_loadu_si512(x->ql + 64 * half);
	const __m256i qh = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * half));
	const __m512i h = _mm512_slli_epi16(bit_pairs_64(qh, 4 * part), 4); /* 0..3 << 4: no carry between bytes */
	const __m512i lo = _mm512_and_si512(_mm512_srli_epi16(ql, 4 * part), _mm512_set1_epi8(0x0f));

	(void)off;
	qgemm_chunk_scales_q6_K(x, (int)(c % 4), _cvtsh_ss(x->d), scale);
	return _mm512_or_si512(lo, h);
}

/* q2_K and q3_K: chunk q = c mod 4 holds, for 32 elements each, bit pairs
 * 2·(2q mod 4) and 2·(2q mod 4) + 2 of the 32 qs bytes of half q/2. */
static inline __m512i crumbs_64(const uint8_t *qs, int q)
{
	return bit_pairs_64(_mm256_loadu_si256((const __m256i *)(qs + 32 * (q / 2))), 4 * (q % 2));
}

/* q3_K: the third bit of element l of 32-element group 2q + h is bit
 * 2q + h of hmask[l]; 16-element sub-blocks, scale d·(6-bit scale − 32). */
static inline __m512i decode_q3_K(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_q3_K *x = (const struct block_q3_K *)row + c / 4;
	const int q = (int)(c % 4);

	(void)off;
	qgemm_chunk_scales_q3_K(x, q, _cvtsh_ss(x->d), scale);
	return _mm512_or_si512(crumbs_64(x->qs, q), bits_64(x->hmask, 2 * q, 4));
}

/* q2_K: 16-element sub-blocks, scale d·(sc & 15), offset −dmin·(sc >> 4). */
static inline __m512i decode_q2_K(const uint8_t *row, int64_t c, float *scale, float *off)
{
	const struct block_q2_K *x = (const struct block_q2_K *)row + c / 4;
	const int q = (int)(c % 4);

	qgemm_chunk_scales_q2_K(x, q, _cvtsh_ss(x->d), _cvtsh_ss(x->dmin), scale, off);
	return crumbs_64(x->qs, q);
}

/* --------------------------------------------------- the packers */

#define QGEMM_PACK(t, T, sb, has_min) CPU_QGEMM_PACKER_DEFINE(avx512, t, sb, has_min)
CPU_QGEMM_ISA_PACKERS(QGEMM_PACK)
