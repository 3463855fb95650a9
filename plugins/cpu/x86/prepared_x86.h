/* The group kernels of prepared weights (plugins/cpu/prepared.h) for the
 * x86 plugins, on 256-bit vectors: cpu-avx2 (vpmaddubsw, or AVX-VNNI's
 * vpdpbusd) and cpu-avx512 (AVX512-VNNI's vpdpbusd on ymm, or vpmaddubsw),
 * the instruction picked by the including build's flags.
 *
 * q4_0x8, per block of the 8 rows: 4 loads of 8 rows × 4 bytes, each split into
 * low and high nibbles (elements 4c.. and 16 + 4c.. of every row, u ≤ 15)
 * once for all the call's activation rows, each multiplied with an
 * activation's 4 matching bytes broadcast to all lanes. vpmaddubsw's i16
 * pairs are summed over the 8 products before one vpmaddwd
 * (8 · 2 · 15 · 127 < 2^15), so lane r ends with row r's Σ u·x; − 8·Σ x
 * (the offset of every quant, xsum) and the 8 scales (one vcvtph2ps)
 * finish the block for all rows at once.
 */
#ifndef GLLMK_X86_PREPARED_X86_H
#define GLLMK_X86_PREPARED_X86_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "prepared.h"
#include "quant_blocks.h"

#if defined(__AVXVNNI__) && !defined(__AVX512VNNI__)
#define GROUP_DPBUSD(acc, u, s) _mm256_dpbusd_avx_epi32(acc, u, s)
#elif defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define GROUP_DPBUSD(acc, u, s) _mm256_dpbusd_epi32(acc, u, s)
#endif

/* Bytes 4c..4c+3 of an activation block's quants, in every i32 lane. */
static inline __m256i group_x4(const int8_t *qs, int c)
{
	int32_t v;

	memcpy(&v, qs + 4 * c, 4);
	return _mm256_set1_epi32(v);
}

/* The 8 rows' sums of each activation row: zeroed, and stored at out. */
static inline void group_acc_zero(__m256 acc[CPU_GROUP_X_ROWS], int xrows)
{
	for (int t = 0; t < xrows; t++)
		acc[t] = _mm256_setzero_ps();
}

static inline void group_acc_store(const __m256 acc[CPU_GROUP_X_ROWS], int xrows, float *out)
{
	for (int t = 0; t < xrows; t++)
		_mm256_storeu_ps(out + 8 * t, acc[t]);
}

/* The 8 rows' quants of one block: low and high nibbles of each chunk. */
struct q4_0x8_u {
	__m256i lo[4], hi[4];
};

static inline struct q4_0x8_u q4_0x8_nibbles(const struct cpu_q4_0x8 *u)
{
	const __m256i m4 = _mm256_set1_epi8(0x0f);
	struct q4_0x8_u n;

	for (int c = 0; c < 4; c++) {
		const __m256i w = _mm256_loadu_si256((const __m256i *)u->qs[c]);

		n.lo[c] = _mm256_and_si256(w, m4);
		n.hi[c] = _mm256_and_si256(_mm256_srli_epi16(w, 4), m4);
	}
	return n;
}

/* Row r's Σ u·x of one block against one activation block, in lane r. */
static inline __m256i q4_0x8_block_sums(const struct q4_0x8_u *n, const int8_t *xq)
{
#ifdef GROUP_DPBUSD
	__m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();

	for (int c = 0; c < 4; c++) {
		s0 = GROUP_DPBUSD(s0, n->lo[c], group_x4(xq, c));
		s1 = GROUP_DPBUSD(s1, n->hi[c], group_x4(xq + 16, c));
	}
	return _mm256_add_epi32(s0, s1);
#else
	__m256i s = _mm256_setzero_si256();

	for (int c = 0; c < 4; c++) {
		s = _mm256_add_epi16(s, _mm256_maddubs_epi16(n->lo[c], group_x4(xq, c)));
		s = _mm256_add_epi16(s, _mm256_maddubs_epi16(n->hi[c], group_x4(xq + 16, c)));
	}
	return _mm256_madd_epi16(s, _mm256_set1_epi16(1));
#endif
}

/* Bytes ahead of the block being read that the kernels prefetch: a
 * thread's groups are one run of memory (cpu_pool_run_streaming). */
#define GROUP_PREFETCH_AHEAD 4096

/* cpu_dot_group_fn's body for q4_0x8 and xrows activation rows (a
 * constant where inlined): each block's nibbles decoded once, then every
 * row's sums. */
static inline __attribute__((always_inline)) void q4_0x8_dot_body(int64_t n, const void *w, const void *xq,
								  const int32_t *xsum, float *out, const int xrows)
{
	const struct cpu_q4_0x8 *u = w;
	const struct block_q8_0 *x = xq;
	const int64_t nb = n / QK4_0;
	__m256 acc[CPU_GROUP_X_ROWS];

	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		const char *ahead = (const char *)&u[b] + GROUP_PREFETCH_AHEAD;
		const struct q4_0x8_u nib = q4_0x8_nibbles(&u[b]);
		const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)u[b].d));

		_mm_prefetch(ahead, _MM_HINT_T0);
		_mm_prefetch(ahead + 64, _MM_HINT_T0);
		_mm_prefetch(ahead + 128, _MM_HINT_T0);
		for (int t = 0; t < xrows; t++) {
			const struct block_q8_0 *xb = &x[t * nb + b];
			const __m256i sum = _mm256_sub_epi32(q4_0x8_block_sums(&nib, xb->qs),
							     _mm256_set1_epi32(8 * xsum[t * nb + b]));

			acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(xb->d))),
						 acc[t]);
		}
	}
	group_acc_store(acc, xrows, out);
}

/* ---------------------------------------------------- q4_Kx8, q5_Kx8
 *
 * Per pair of sub-blocks (64 elements) of the 8 rows: 8 loads of 8 rows ×
 * 4 bytes, each split into low nibbles (sub-block 2j) and high ones
 * (2j + 1) once for the call's activation rows, each multiplied with the
 * activation's 4 matching bytes broadcast; with vpmaddubsw the 8 products
 * of a sub-block sum in i16 (8 · 2 · 15 · 128 < 2^15) and one vpmaddwd by
 * the 8 rows' scales (each twice, i16) ends it in row r's i32 lane; with
 * vpdpbusd, one vpmulld by the scales. Per block: the 64 scales and 64
 * mins decoded in a few vector ops (prepared.h's order), the mins' term
 * by 4 vpmaddwd of min pairs with the activation's Σx of two sub-blocks,
 * and the 8 rows' d and dmin (two vcvtph2ps) for all rows at once. */

/* v[0..31] of a 6-bit field list (prepared.h); v[32..63] at *upper. */
static inline __m256i q4_Kx8_fields(const uint8_t lo[32], const uint8_t hi[16], __m256i *upper)
{
	const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(3);
	const __m256i l = _mm256_loadu_si256((const __m256i *)lo);
	const __m256i h = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)hi));
	const __m256i h01 = _mm256_srlv_epi32(h, _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2));
	const __m256i h23 = _mm256_srlv_epi32(h, _mm256_setr_epi32(4, 4, 4, 4, 6, 6, 6, 6));

	*upper = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l, 4), m4),
				 _mm256_slli_epi16(_mm256_and_si256(h23, m2), 4));
	return _mm256_or_si256(_mm256_and_si256(l, m4), _mm256_slli_epi16(_mm256_and_si256(h01, m2), 4));
}

/* 16 bytes as 8 i16 or i32 lanes per 128 bits: lane 0 of v, or lane 1. */
static inline __m128i q4_Kx8_half(__m256i v, int upper)
{
	return upper ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v);
}

/* Sub-block s's 8 scales as the multiplier of its 8 row sums: i16, each
 * twice (vpmaddwd of the vpmaddubsw sums), or i32 (vpmulld). sv[0..1]:
 * the scales' v[0..31], v[32..63], sub-block s at bytes 8s..8s+7. */
static inline __m256i q4_Kx8_scale(const __m256i sv[2], int s)
{
	const __m128i half = q4_Kx8_half(sv[s / 4], s / 2 % 2);
#ifdef GROUP_DPBUSD
	return _mm256_cvtepu8_epi32(s % 2 ? _mm_unpackhi_epi64(half, half) : half);
#else
	return _mm256_cvtepu8_epi16(s % 2 ? _mm_unpackhi_epi8(half, half) : _mm_unpacklo_epi8(half, half));
#endif
}

/* One sub-block's 8 row sums, i16 pairs or i32, times its scales. */
static inline __m256i q4_Kx8_scaled(__m256i sums, __m256i scale)
{
#ifdef GROUP_DPBUSD
	return _mm256_mullo_epi32(sums, scale);
#else
	return _mm256_madd_epi16(sums, scale);
#endif
}

static inline __m256i q4_Kx8_add_dot(__m256i acc, __m256i u, __m256i x)
{
#ifdef GROUP_DPBUSD
	return GROUP_DPBUSD(acc, u, x);
#else
	return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, x));
#endif
}

/* Σ_s min(r, s)·Σx(s) of an activation block, in row r's lane: the mins
 * mv[0..1] (v[0..31], v[32..63]; pair p at bytes 16p..) against the Σ of
 * each sub-block, two a vpmaddwd. */
static inline __m256i q4_Kx8_mins(const __m256i mv[2], const int16_t bsums[16])
{
	/* Σx of sub-blocks 0..7 (q8_K sums groups of 16), as i16 pairs:
	 * lane p of 128 bits 0 pairs 0, 1, of 128 bits 1 pairs 2, 3 */
	const __m256i s32 = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)bsums), _mm256_set1_epi16(1));
	const __m256i pairs = _mm256_packs_epi32(s32, s32);
	__m256i sum = _mm256_setzero_si256();

	for (int p = 0; p < 4; p++) {
		const __m256i m = _mm256_cvtepu8_epi16(q4_Kx8_half(mv[p / 2], p % 2));
		const __m256i x = _mm256_permutevar8x32_epi32(pairs, _mm256_set1_epi32(p / 2 * 4 + p % 2));

		sum = _mm256_add_epi32(sum, _mm256_madd_epi16(m, x));
	}
	return sum;
}

/* Bit `from` of each byte of hb at bit `to`, the others 0: a shift of
 * the 16-bit lanes moves no bit across bytes before the mask (both bits
 * are below 8). q5_Kx8's fifth bits of sub-block s go to bit 4, q3_Kx8's
 * high bits to bit 2. */
static inline __m256i group_bit_to(__m256i hb, int from, int to)
{
	const __m256i v = from < to ? _mm256_slli_epi16(hb, to - from) : _mm256_srli_epi16(hb, from - to);

	return _mm256_and_si256(v, _mm256_set1_epi8((char)(1 << to)));
}

/* cpu_dot_group_fn's body for q4_Kx8 (five 0) or q5_Kx8 (five 1) and
 * xrows activation rows (constants where inlined). With the fifth bit a
 * vpmaddubsw pair reaches 2·31·127: the i16 sums end every 4 chunks. */
static inline __attribute__((always_inline)) void kx8_dot_body(int64_t n, const void *w, const void *xq, float *out,
							       const int xrows, const int five)
{
	const size_t unit = five ? sizeof(struct cpu_q5_Kx8) : sizeof(struct cpu_q4_Kx8);
	const struct block_q8_K *x = xq;
	const int64_t nb = n / QK_K;
	const __m256i m4 = _mm256_set1_epi8(0x0f);
	__m256 acc[CPU_GROUP_X_ROWS];

	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		const char *ub = (const char *)w + b * unit, *ahead = ub + GROUP_PREFETCH_AHEAD;
		const struct cpu_kx8_head *h = (const struct cpu_kx8_head *)ub;
		const struct cpu_q5_Kx8 *u5 = (const struct cpu_q5_Kx8 *)ub;
		const uint8_t (*qs)[8][CPU_GROUP_ROWS][4] = five ? u5->qs : ((const struct cpu_q4_Kx8 *)ub)->qs;
		__m256i sv[2], mv[2], sc[8], isum[CPU_GROUP_X_ROWS];

		for (size_t l = 0; l < unit; l += 64)
			_mm_prefetch(ahead + l, _MM_HINT_T0);
		sv[0] = q4_Kx8_fields(h->scales_lo, h->scales_hi, &sv[1]);
		mv[0] = q4_Kx8_fields(h->mins_lo, h->mins_hi, &mv[1]);
		for (int s = 0; s < 8; s++)
			sc[s] = q4_Kx8_scale(sv, s);
		for (int t = 0; t < xrows; t++)
			isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
		for (int j = 0; j < 4; j++) {
			__m256i se[CPU_GROUP_X_ROWS], so[CPU_GROUP_X_ROWS];

			for (int t = 0; t < xrows; t++)
				se[t] = so[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
			for (int c = 0; c < 8; c++) {
				const __m256i q = _mm256_loadu_si256((const __m256i *)qs[j][c]);
				__m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);

				if (five) {
					const __m256i hb = _mm256_loadu_si256((const __m256i *)u5->qh[c]);

					lo = _mm256_or_si256(lo, group_bit_to(hb, 2 * j, 4));
					hi = _mm256_or_si256(hi, group_bit_to(hb, 2 * j + 1, 4));
				}
				for (int t = 0; t < xrows; t++) {
					const int8_t *xs = x[t * nb + b].qs + 64 * j;

					se[t] = q4_Kx8_add_dot(se[t], lo, group_x4(xs, c));
					so[t] = q4_Kx8_add_dot(so[t], hi, group_x4(xs + 32, c));
				}
				if (c == 7 || (five && c == 3))
					for (int t = 0; t < xrows; t++) {
						isum[t] = _mm256_add_epi32(isum[t],
									   _mm256_add_epi32(q4_Kx8_scaled(se[t], sc[2 * j]),
											    q4_Kx8_scaled(so[t], sc[2 * j + 1])));
						se[t] = so[t] = _mm256_setzero_si256();
					}
			}
		}
		const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h->d));
		const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h->dmin));

		for (int t = 0; t < xrows; t++) {
			const struct block_q8_K *xb = &x[t * nb + b];
			const __m256 dx = _mm256_set1_ps(xb->d);

			acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(dw, dx), acc[t]);
			acc[t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(q4_Kx8_mins(mv, xb->bsums)), _mm256_mul_ps(dm, dx),
						  acc[t]);
		}
	}
	group_acc_store(acc, xrows, out);
}

/* cpu_dot_group_fn's bodies for q4_Kx8 and q5_Kx8. */
#define q4_Kx8_dot_body(n, w, xq, xsum, out, xrows) kx8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 0)
#define q5_Kx8_dot_body(n, w, xq, xsum, out, xrows) kx8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 1)

/* ---------------------------------------------------- q2_Kx8, q3_Kx8
 *
 * Per half h of a block (128 elements) and parity q: 4 chunks of 8 rows ×
 * 4 bytes, each 4 vectors of 2-bit fields, vector s of group 8h + 2s + q,
 * each multiplied with the activation's 4 matching bytes broadcast. The
 * fields are masked where they lie in the bytes or the bytes shifted by 4
 * (one shift for 4 fields, not 3): the odd ones stay at bits 2-3, 4·u
 * (q3_K's high bit or-ed in at bit 2, or bit 4 for the odd ones), and
 * their groups' sums go to a second accumulator added ÷ 4 per block
 * (exact: multiples of 4); q2_Kx8's decode 1.05-1.35x, q3_Kx8's unchanged
 * (BENCHMARKS.md "Session 26"). After the 4 chunks a group's sums are
 * whole (8 · 4·7 · 128 < 2^15 in vpmaddubsw's i16) and one vpmaddwd
 * (vpmulld) by its 8 rows' scales adds them to the rows' lanes.
 * Per block: q3_K's 128 scale fields decoded as q4_Kx8's (q2_K's bytes
 * are read as they are), and Σ_g v_g·Σx_g of q2_K's mins or of q3_K's
 * scales (its offset 4) by 8 vpmaddwd of group pairs with q8_K's sums of
 * 16. */

/* The 16 bytes of pair p of a unit's scales (prepared.h's order): q3_K's
 * fields decoded in v, or q2_K's own at sc. (Each kept where it was
 * fastest: q3_K's 4 vectors in registers, q2_K's loaded as needed.) */
static inline __m128i k16x8_pair(const __m256i v[4], const uint8_t *sc, int p, int three)
{
	return three ? q4_Kx8_half(v[p / 2], p % 2) : _mm_loadu_si128((const __m128i *)(sc + 16 * p));
}

/* Group g's 8 row scales as q4_Kx8_scale's multiplier: bytes g % 2,
 * 2 + g % 2, .. of the 16 of its pair: q3_K's fields − 32, or q2_K's low
 * nibbles. */
static inline __m256i k16x8_scale(const __m256i v[4], const uint8_t *sc, int g, int three)
{
	const __m128i pair = k16x8_pair(v, sc, g / 2, three);
	const char h = (char)(g % 2);
#ifdef GROUP_DPBUSD
	const __m128i pick = _mm_setr_epi8(h, 2 + h, 4 + h, 6 + h, 8 + h, 10 + h, 12 + h, 14 + h, -1, -1, -1, -1, -1, -1,
					   -1, -1);
	const __m128i b = _mm_shuffle_epi8(pair, pick);

	return three ? _mm256_sub_epi32(_mm256_cvtepu8_epi32(b), _mm256_set1_epi32(32))
		     : _mm256_cvtepu8_epi32(_mm_and_si128(b, _mm_set1_epi8(0x0f)));
#else
	const __m128i pick = _mm_setr_epi8(h, h, 2 + h, 2 + h, 4 + h, 4 + h, 6 + h, 6 + h, 8 + h, 8 + h, 10 + h, 10 + h,
					   12 + h, 12 + h, 14 + h, 14 + h);
	const __m128i b = _mm_shuffle_epi8(pair, pick);

	return three ? _mm256_sub_epi16(_mm256_cvtepu8_epi16(b), _mm256_set1_epi16(32))
		     : _mm256_cvtepu8_epi16(_mm_and_si128(b, _mm_set1_epi8(0x0f)));
#endif
}

/* Σ_g v_g·Σx_g in row r's lane, v_g row r's field of group g in v (pairs,
 * prepared.h): q3_K's scales − 32, or q2_K's mins (the high nibbles). */
static inline __m256i k16x8_pair_sums(const __m256i v[4], const uint8_t *sc, int three, const int16_t bsums[16])
{
	__m256i sum = _mm256_setzero_si256();

	for (int p = 0; p < 8; p++) {
		const __m256i b = _mm256_cvtepu8_epi16(k16x8_pair(v, sc, p, three));
		const __m256i f = three ? _mm256_sub_epi16(b, _mm256_set1_epi16(32)) : _mm256_srli_epi16(b, 4);
		int32_t x;

		memcpy(&x, bsums + 2 * p, sizeof(x));
		sum = _mm256_add_epi32(sum, _mm256_madd_epi16(f, _mm256_set1_epi32(x)));
	}
	return sum;
}

/* q3_Kx8's 128 scale fields (prepared.h's pair order, 32 a vector),
 * decoded as q4_Kx8's. */
static inline void q3_Kx8_scales(const struct cpu_q3_Kx8 *u, __m256i v[4])
{
	v[0] = q4_Kx8_fields(u->scales_lo[0], u->scales_hi[0], &v[1]);
	v[2] = q4_Kx8_fields(u->scales_lo[1], u->scales_hi[1], &v[3]);
}

/* cpu_dot_group_fn's body for q2_Kx8 (three 0) or q3_Kx8 (three 1) and
 * xrows activation rows (constants where inlined). */
static inline __attribute__((always_inline)) void k16x8_dot_body(int64_t n, const void *w, const void *xq, float *out,
								 const int xrows, const int three)
{
	const size_t unit = three ? sizeof(struct cpu_q3_Kx8) : sizeof(struct cpu_q2_Kx8);
	const struct block_q8_K *x = xq;
	const int64_t nb = n / QK_K;
	const __m256i m2 = _mm256_set1_epi8(3), m2x4 = _mm256_set1_epi8(12);
	__m256 acc[CPU_GROUP_X_ROWS];

	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		const char *ub = (const char *)w + b * unit, *ahead = ub + GROUP_PREFETCH_AHEAD;
		const struct cpu_q3_Kx8 *u3 = (const struct cpu_q3_Kx8 *)ub;
		const struct cpu_q2_Kx8 *u2 = (const struct cpu_q2_Kx8 *)ub;
		const uint8_t (*qs)[CPU_GROUP_ROWS][4] = three ? u3->qs : u2->qs;
		const uint8_t *sc = u2->scales[0][0];
		__m256i isum[CPU_GROUP_X_ROWS], isum4[CPU_GROUP_X_ROWS], sv[4];

		for (size_t l = 0; l < unit; l += 64)
			_mm_prefetch(ahead + l, _MM_HINT_T0);
		if (three)
			q3_Kx8_scales(u3, sv);
		for (int t = 0; t < xrows; t++)
			isum[t] = isum4[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
		for (int h = 0; h < 2; h++)
#pragma GCC unroll 2
			for (int q = 0; q < 2; q++) {
				__m256i ss[CPU_GROUP_X_ROWS][4];

				for (int t = 0; t < xrows; t++)
					ss[t][0] = ss[t][1] = ss[t][2] = ss[t][3] = _mm256_setzero_si256();
#pragma GCC unroll 4
				for (int c = 4 * q; c < 4 * q + 4; c++) {
					const __m256i wq = _mm256_loadu_si256((const __m256i *)qs[8 * h + c]);
					const __m256i w4 = _mm256_srli_epi16(wq, 4);
					const __m256i hb = three ? _mm256_loadu_si256((const __m256i *)u3->hmask[c])
								 : _mm256_setzero_si256();

#pragma GCC unroll 4
					for (int s = 0; s < 4; s++) {
						/* odd fields at bits 2-3: 4·u (above) */
						__m256i u = _mm256_and_si256(s < 2 ? wq : w4, s % 2 ? m2x4 : m2);

						if (three)
							u = _mm256_or_si256(u, group_bit_to(hb, 4 * h + s, s % 2 ? 4 : 2));
						for (int t = 0; t < xrows; t++)
							ss[t][s] = q4_Kx8_add_dot(ss[t][s], u,
										  group_x4(x[t * nb + b].qs + 128 * h + 32 * s, c));
					}
				}
#pragma GCC unroll 4
				for (int s = 0; s < 4; s++) {
					const __m256i scale = k16x8_scale(sv, sc, 8 * h + 2 * s + q, three);

					for (int t = 0; t < xrows; t++) {
						__m256i *sum = s % 2 ? &isum4[t] : &isum[t];

						*sum = _mm256_add_epi32(*sum, q4_Kx8_scaled(ss[t][s], scale));
					}
				}
			}
		const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)ub));

		for (int t = 0; t < xrows; t++) {
			const struct block_q8_K *xb = &x[t * nb + b];
			const __m256 dx = _mm256_set1_ps(xb->d);

			isum[t] = _mm256_add_epi32(isum[t], _mm256_srai_epi32(isum4[t], 2)); /* exact: 4·Σ */
			if (three) /* Σ (v − 32)·(u − 4)·x */
				isum[t] = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(k16x8_pair_sums(sv, sc, 1, xb->bsums), 2));
			acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(dw, dx), acc[t]);
			if (!three) {
				const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)u2->dmin));

				acc[t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(k16x8_pair_sums(sv, sc, 0, xb->bsums)),
							  _mm256_mul_ps(dm, dx), acc[t]);
			}
		}
	}
	group_acc_store(acc, xrows, out);
}

/* cpu_dot_group_fn's bodies for q2_Kx8 and q3_Kx8. */
#define q2_Kx8_dot_body(n, w, xq, xsum, out, xrows) k16x8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 0)
#define q3_Kx8_dot_body(n, w, xq, xsum, out, xrows) k16x8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 1)

/* ----------------------------------------------------------- iq4_xsx8
 *
 * Per sub-block (32 elements) of the 8 rows: 4 loads of 8 rows × 4 bytes,
 * each split into low nibbles (elements 4c..) and high ones (16 + 4c..),
 * each looked up in the code book (vpshufb) once for the call's activation
 * rows. The values are signed (−127..113): vpmaddubsw takes |v| and the
 * activation bytes with v's signs (vpsign), and as such pair sums reach
 * 2·127·128 each is widened at once by a vpmaddwd with the sub-block's 8
 * scales (each twice, i16); with vpdpbusd the 4 chunks sum in i32 and one
 * vpmulld scales them. */

/* Sub-block s's 8 signed scales (the stored scale − 32), as
 * q4_Kx8_scale's multiplier. */
static inline __m256i iq4_xsx8_scale(const __m256i sv[2], int s)
{
#ifdef GROUP_DPBUSD
	return _mm256_sub_epi32(q4_Kx8_scale(sv, s), _mm256_set1_epi32(32));
#else
	return _mm256_sub_epi16(q4_Kx8_scale(sv, s), _mm256_set1_epi16(32));
#endif
}

/* The code book's values for 8 rows × 4 indices, and their magnitudes. */
struct iq4_xsx8_v {
	__m256i v, mag;
};

static inline struct iq4_xsx8_v iq4_xsx8_lookup(__m256i book, __m256i idx)
{
	const __m256i v = _mm256_shuffle_epi8(book, idx);

	return (struct iq4_xsx8_v){ .v = v, .mag = _mm256_abs_epi8(v) };
}

/* Σ v·x of one chunk half, v's signs moved onto x's broadcast bytes. */
static inline __m256i iq4_xsx8_dot(__m256i acc, struct iq4_xsx8_v w, __m256i x, __m256i scale)
{
#ifdef GROUP_DPBUSD
	(void)scale;
	return GROUP_DPBUSD(acc, w.mag, _mm256_sign_epi8(x, w.v));
#else
	return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(w.mag, _mm256_sign_epi8(x, w.v)), scale));
#endif
}

/* cpu_dot_group_fn's body for iq4_xsx8 and xrows activation rows (a
 * constant where inlined). */
static inline __attribute__((always_inline)) void iq4_xsx8_dot_body(int64_t n, const void *w, const void *xq,
								    const int32_t *xsum, float *out, const int xrows)
{
	const struct cpu_iq4_xsx8 *u = w;
	const struct block_q8_K *x = xq;
	const int64_t nb = n / QK_K;
	const __m256i m4 = _mm256_set1_epi8(0x0f);
	const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)iq4nl_values));
	__m256 acc[CPU_GROUP_X_ROWS];

	(void)xsum;
	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		const char *ahead = (const char *)&u[b] + GROUP_PREFETCH_AHEAD;
		__m256i sv[2], isum[CPU_GROUP_X_ROWS];

		for (int l = 0; l < (int)sizeof(u[b]); l += 64)
			_mm_prefetch(ahead + l, _MM_HINT_T0);
		sv[0] = q4_Kx8_fields(u[b].scales_lo, u[b].scales_hi, &sv[1]);
		for (int t = 0; t < xrows; t++)
			isum[t] = _mm256_setzero_si256();
		for (int s = 0; s < 8; s++) {
			const __m256i scale = iq4_xsx8_scale(sv, s);
			__m256i ss[CPU_GROUP_X_ROWS];

			for (int t = 0; t < xrows; t++)
				ss[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
			for (int c = 0; c < 4; c++) {
				const __m256i q = _mm256_loadu_si256((const __m256i *)u[b].qs[s][c]);
				const struct iq4_xsx8_v lo = iq4_xsx8_lookup(book, _mm256_and_si256(q, m4));
				const struct iq4_xsx8_v hi = iq4_xsx8_lookup(book, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));

				for (int t = 0; t < xrows; t++) {
					const int8_t *xs = x[t * nb + b].qs + 32 * s;

					ss[t] = iq4_xsx8_dot(ss[t], lo, group_x4(xs, c), scale);
					ss[t] = iq4_xsx8_dot(ss[t], hi, group_x4(xs + 16, c), scale);
				}
			}
			for (int t = 0; t < xrows; t++)
#ifdef GROUP_DPBUSD
				isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(ss[t], scale));
#else
				isum[t] = _mm256_add_epi32(isum[t], ss[t]);
#endif
		}
		const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)u[b].d));

		for (int t = 0; t < xrows; t++)
			acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(dw, _mm256_set1_ps(x[t * nb + b].d)),
						 acc[t]);
	}
	group_acc_store(acc, xrows, out);
}

#endif
