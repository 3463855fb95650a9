/* The int8 GEMM's B packers (cpu_qgemm_pack_fn; panel layout:
 * plugins/cpu/gemm/qgemm.h) with AVX2: the bytes of the framework's
 * cpu_qgemm_pack_b (plugins/cpu/gemm/qgemm_pack.c, the reference), unsigned
 * or signed (w_bias subtracted, one vpsubb), without its per-row scalar
 * decode and 4-byte interleave.
 *
 * cpu-avx512's packers (qgemm_pack_avx512.c) in ymm: for each 64 elements
 * of K every row's 64 u bytes are decoded into two ymm (elements 0..31,
 * 32..63), each 8 rows × 8 dwords block is transposed in registers, and
 * each result (one 4-byte group of K across 8 rows) is one 32-byte store.
 * Why: decoding and packing the weights was 7 % of a Q4_K_M prompt on Zen 3
 * (BENCHMARKS.md, "Session 15"). The scales are computed as the C decoders
 * compute them, so they are bit-identical. The K-quants' isc packers
 * (pack_panel_isc) write the same bytes with the isc mode's integers in
 * place of the f32 scales: cpu_qgemm_pack_b followed by
 * cpu_qgemm_isc_scales, in one pass.
 */
#include <immintrin.h>
#include <string.h>

#include "avx2_kernels.h"
#include "cpu_cntx.h"
#include "gemm/qgemm_pack_isa.h"

#define NR CPU_QGEMM_NR

/* Decode elements [64·c, 64·c + 64) of one weight row into u[0] (the
 * first 32) and u[1], and the scales (and offsets) of its 64/sb sub-blocks
 * into scale[NR·s], off[NR·s]. */
typedef void (*chunk_decoder)(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off);

/* ------------------------------------------------------ panel body */

/* r[j] becomes dword j of r[0..8) (r[i] being row i). */
static inline __attribute__((always_inline)) void transpose_8x8_epi32(__m256i r[8])
{
	__m256i t[8], s[8];

	for (int i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
	}
	/* s[4q + i], lane L: dword i + 4L of rows 4q .. 4q + 3 */
	for (int q = 0; q < 8; q += 4) {
		s[q] = _mm256_unpacklo_epi64(t[q], t[q + 2]);
		s[q + 1] = _mm256_unpackhi_epi64(t[q], t[q + 2]);
		s[q + 2] = _mm256_unpacklo_epi64(t[q + 1], t[q + 3]);
		s[q + 3] = _mm256_unpackhi_epi64(t[q + 1], t[q + 3]);
	}
	for (int i = 0; i < 4; i++) {
		r[i] = _mm256_permute2x128_si256(s[i], s[4 + i], 0x20);
		r[4 + i] = _mm256_permute2x128_si256(s[i], s[4 + i], 0x31);
	}
}

/* The isc mode's integers of 256 c/4 of the panel's rows
 * (qgemm_pack_isa.h). */
static inline __attribute__((always_inline)) void isc_256(const uint8_t *w, int64_t row_bytes, int64_t rows,
							  int64_t kc, uint8_t *dst, int sb, int has_min, int64_t c,
							  cpu_qgemm_isc_fn isc, int64_t block_bytes)
{
	struct qgemm_isc_ints v;

	for (int64_t r = 0; r < rows; r++)
		isc(w + r * row_bytes + c / 4 * block_bytes, v.sc[r], v.k[r], &v.d[r], &v.dmin[r]);
	qgemm_isc_put(dst, kc, sb, has_min, c / 4, rows, &v);
}

/* Each row's bytes of elements [64·c, 64·c + 256) in the next panel, 16
 * rows on (qgemm_task, plugins/cpu/gemm/qgemm.c, packs a block's panels
 * in order; were that to change, these would fetch the wrong rows: time
 * lost, never a wrong result), fetched while this panel is decoded. At
 * M = 16 the packer took 46 % of a q4_K layer, its 16 row streams waiting
 * on memory; the prefetch gained q4_K 10 %, q6_K 7 % (q2_K within the
 * noise), q4_0 9 %, q8_0 6 %, iq4_xs and iq4_nl 11 % there, 2-5 % at
 * M = 64, nothing at 512 (BENCHMARKS.md "Session 18", "Session 19"). Past
 * the weights' end it is a prefetch of nothing, which never faults. */
static inline __attribute__((always_inline)) void prefetch_next_panel(const uint8_t *w, int64_t row_bytes,
								      int64_t rows, int64_t c, int64_t bytes256)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t o = 0; o < bytes256; o += 64)
			__builtin_prefetch(w + (NR + r) * row_bytes + c / 4 * bytes256 + o, 0, 3);
}

/* bytes256: a row's bytes of 256 elements. With isc (a format's
 * qgemm_isc_<t>, blocks of 256 elements) the isc mode's panel: its
 * integers instead of the decoders' f32 scales (whose work the decoders
 * then skip: scale and off NULL). */
static inline __attribute__((always_inline)) void pack_panel_body(const uint8_t *w, int64_t row_bytes,
								  int64_t rows, int64_t kc, int w_bias, uint8_t *dst,
								  const int sb, const int has_min,
								  chunk_decoder decode, cpu_qgemm_isc_fn isc,
								  int64_t bytes256)
{
	const int64_t sb_bytes = CPU_QGEMM_B_SB_BYTES(sb, has_min);

	for (int64_t c = 0; c < kc / 64; c++) {
		uint8_t *d = dst + c * (64 / sb) * sb_bytes;
		__m256i u[2][NR]; /* [elements 0..31, 32..63][row] */
		float scale[4 * NR], off[4 * NR];

		if (c % 4 == 0) {
			prefetch_next_panel(w, row_bytes, rows, c, bytes256);
			if (isc)
				isc_256(w, row_bytes, rows, kc, dst, sb, has_min, c, isc, bytes256);
		}
		if (rows < NR && !isc) {
			memset(scale, 0, sizeof(scale));
			memset(off, 0, sizeof(off));
		}
		for (int64_t r = 0; r < NR; r++) {
			__m256i v[2] = { _mm256_setzero_si256(), _mm256_setzero_si256() };

			if (r < rows) {
				decode(w + r * row_bytes, c, v, isc ? NULL : scale + r, isc ? NULL : off + r);
				v[0] = _mm256_sub_epi8(v[0], _mm256_set1_epi8((char)w_bias));
				v[1] = _mm256_sub_epi8(v[1], _mm256_set1_epi8((char)w_bias));
			}
			u[0][r] = v[0];
			u[1][r] = v[1];
		}
		/* after the transposes u[h][8·rb + i]: bytes 4j..4j+3 (j = 8h + i)
		 * of rows 8·rb .. 8·rb + 7, sub-block 4j/sb, group (4j mod sb)/4 */
		for (int h = 0; h < 2; h++)
			for (int rb = 0; rb < 2; rb++) {
				transpose_8x8_epi32(u[h] + 8 * rb);
				for (int i = 0; i < 8; i++) {
					const int j = 8 * h + i;

					_mm256_storeu_si256((__m256i *)(d + 4 * j / sb * sb_bytes + 4 * j % sb / 4 * 4 * NR +
									32 * rb),
							    u[h][8 * rb + i]);
				}
			}
		for (int s = 0; s < 64 / sb && !isc; s++)
			for (int h = 0; h < NR; h += 8) {
				_mm256_storeu_ps((float *)(d + s * sb_bytes + NR * sb) + h,
						 _mm256_loadu_ps(scale + NR * s + h));
				if (has_min)
					_mm256_storeu_ps((float *)(d + s * sb_bytes + NR * sb + 4 * NR) + h,
							 _mm256_loadu_ps(off + NR * s + h));
			}
	}
}

static inline __attribute__((always_inline)) void pack_panel(const uint8_t *w, int64_t row_bytes, int64_t rows,
							     int64_t kc, int w_bias, uint8_t *dst, const int sb,
							     const int has_min, chunk_decoder decode, int64_t bytes256)
{
	pack_panel_body(w, row_bytes, rows, kc, w_bias, dst, sb, has_min, decode, NULL, bytes256);
}

static inline __attribute__((always_inline)) void pack_panel_isc(const uint8_t *w, int64_t row_bytes,
								 int64_t rows, int64_t kc, uint8_t *dst, const int sb,
								 const int has_min, chunk_decoder decode,
								 cpu_qgemm_isc_fn isc, int64_t block_bytes)
{
	pack_panel_body(w, row_bytes, rows, kc, 0, dst, sb, has_min, decode, isc, block_bytes);
}

/* --------------------------------------------------- byte helpers */

static inline __m256i low_nibbles(__m256i v)
{
	return _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
}

static inline __m256i high_nibbles(__m256i v)
{
	return low_nibbles(_mm256_srli_epi16(v, 4));
}

/* Two 16-byte groups a, b of nibble pairs (low: elements 0..15, high:
 * 16..31, the q4_0 order): u[0] = [a & 15, a >> 4], u[1] = [b & 15, b >> 4]. */
static inline void nibbles_2x16(const uint8_t *a, const uint8_t *b, __m256i u[2])
{
	const __m256i v = _mm256_loadu2_m128i((const __m128i *)b, (const __m128i *)a);
	const __m256i lo = low_nibbles(v), hi = high_nibbles(v);

	u[0] = _mm256_permute2x128_si256(lo, hi, 0x20);
	u[1] = _mm256_permute2x128_si256(lo, hi, 0x31);
}

/* iq4_nl's code book biased to unsigned (+128), through vpshufb. */
static inline __m256i iq4_lookup(__m256i nib)
{
	const __m128i book = _mm_xor_si128(_mm_loadu_si128((const __m128i *)iq4nl_values), _mm_set1_epi8(-128));

	return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(book), nib);
}

/* (v >> shift) & 3 of 32 bytes v (shift < 8). */
static inline __m256i bit_pair(__m256i v, int shift)
{
	return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(3));
}

/* value where bit b of the 32 bytes at `bytes` is set, else 0. */
static inline __m256i bit_value(const uint8_t *bytes, int b, char value)
{
	const __m256i m = _mm256_set1_epi8((char)(1 << b));
	const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_loadu_si256((const __m256i *)bytes), m), m);

	return _mm256_and_si256(set, _mm256_set1_epi8(value));
}

/* -------------------------------------- 32-element blocks: two a chunk */

static inline void decode_q4_0(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_q4_0 *x = (const struct block_q4_0 *)row + 2 * c;

	(void)off;
	scale[0] = _cvtsh_ss(x[0].d);
	scale[NR] = _cvtsh_ss(x[1].d);
	nibbles_2x16(x[0].qs, x[1].qs, u);
}

static inline void decode_iq4_nl(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	decode_q4_0(row, c, u, scale, off); /* the same block layout */
	u[0] = iq4_lookup(u[0]);
	u[1] = iq4_lookup(u[1]);
}

/* q8_0: the signed quants biased to unsigned (xor 0x80). */
static inline void decode_q8_0(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_q8_0 *x = (const struct block_q8_0 *)row + 2 * c;

	(void)off;
	scale[0] = _cvtsh_ss(x[0].d);
	scale[NR] = _cvtsh_ss(x[1].d);
	for (int i = 0; i < 2; i++)
		u[i] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)x[i].qs), _mm256_set1_epi8(-128));
}

/* ------------------------------------ 256-element blocks: four chunks */

/* iq4_xs: chunk c is 32-element sub-blocks 2q, 2q + 1 (q = c mod 4). */
static inline void decode_iq4_xs(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_iq4_xs *x = (const struct block_iq4_xs *)row + c / 4;
	const int q = (int)(c % 4);

	(void)off;
	qgemm_chunk_scales_iq4_xs(x, q, _cvtsh_ss(x->d), scale);
	nibbles_2x16(x->qs + 32 * q, x->qs + 32 * q + 16, u);
	u[0] = iq4_lookup(u[0]);
	u[1] = iq4_lookup(u[1]);
}

/* q4_K and q5_K: chunk q = c mod 4 is sub-blocks 2q, 2q + 1 (the low and
 * the high nibbles of qs[32q ..]). */
static inline void k4_chunk(const uint8_t *scales, uint16_t d16, uint16_t dmin16, const uint8_t *qs, int q,
			    __m256i u[2], float *scale, float *off)
{
	const __m256i v = _mm256_loadu_si256((const __m256i *)(qs + 32 * q));

	if (scale) /* NULL: the isc mode */
		qgemm_chunk_scales_k4(scales, _cvtsh_ss(d16), _cvtsh_ss(dmin16), q, scale, off);
	u[0] = low_nibbles(v);
	u[1] = high_nibbles(v);
}

static inline void decode_q4_K(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_q4_K *x = (const struct block_q4_K *)row + c / 4;

	k4_chunk(x->scales, x->d, x->dmin, x->qs, (int)(c % 4), u, scale, off);
}

/* q5_K: the fifth bit of element l of sub-block 2q + h is bit 2q + h of qh[l]. */
static inline void decode_q5_K(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_q5_K *x = (const struct block_q5_K *)row + c / 4;
	const int q = (int)(c % 4);

	k4_chunk(x->scales, x->d, x->dmin, x->qs, q, u, scale, off);
	for (int h = 0; h < 2; h++)
		u[h] = _mm256_or_si256(u[h], bit_value(x->qh, 2 * q + h, 0x10));
}

/* q6_K: chunk c is half c/2 mod 2, part c mod 2 of it: 4 low bits from 64
 * ql bytes (low nibbles for part 0, high for 1), 2 high from 32 qh bytes
 * (bits 0-1 and 2-3 for part 0, 4-5 and 6-7 for 1); four 16-element
 * sub-blocks, scale d·sc. */
static inline void decode_q6_K(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_q6_K *x = (const struct block_q6_K *)row + c / 4;
	const int half = (int)(c % 4 / 2), part = (int)(c % 2);
	const __m256i qh = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * half));

	(void)off;
	for (int i = 0; i < 2; i++) {
		const __m256i ql = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * half + 32 * i));
		const __m256i lo = low_nibbles(_mm256_srl_epi16(ql, _mm_cvtsi32_si128(4 * part)));

		/* 0..3 << 4: no carry between bytes */
		u[i] = _mm256_or_si256(lo, _mm256_slli_epi16(bit_pair(qh, 4 * part + 2 * i), 4));
	}
	if (scale)
		qgemm_chunk_scales_q6_K(x, (int)(c % 4), _cvtsh_ss(x->d), scale);
}

/* q2_K and q3_K: chunk q = c mod 4 holds, for 32 elements each, bit pairs
 * 2·(2q mod 4) and 2·(2q mod 4) + 2 of the 32 qs bytes of half q/2. */
static inline void crumbs_64(const uint8_t *qs, int q, __m256i u[2])
{
	const __m256i v = _mm256_loadu_si256((const __m256i *)(qs + 32 * (q / 2)));

	u[0] = bit_pair(v, 4 * (q % 2));
	u[1] = bit_pair(v, 4 * (q % 2) + 2);
}

/* q3_K: the third bit of element l of 32-element group 2q + h is bit
 * 2q + h of hmask[l]; 16-element sub-blocks, scale d·(6-bit scale − 32). */
static inline void decode_q3_K(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_q3_K *x = (const struct block_q3_K *)row + c / 4;
	const int q = (int)(c % 4);

	(void)off;
	if (scale)
		qgemm_chunk_scales_q3_K(x, q, _cvtsh_ss(x->d), scale);
	crumbs_64(x->qs, q, u);
	for (int h = 0; h < 2; h++)
		u[h] = _mm256_or_si256(u[h], bit_value(x->hmask, 2 * q + h, 4));
}

/* q2_K: 16-element sub-blocks, scale d·(sc & 15), offset −dmin·(sc >> 4). */
static inline void decode_q2_K(const uint8_t *row, int64_t c, __m256i u[2], float *scale, float *off)
{
	const struct block_q2_K *x = (const struct block_q2_K *)row + c / 4;
	const int q = (int)(c % 4);

	if (scale)
		qgemm_chunk_scales_q2_K(x, q, _cvtsh_ss(x->d), _cvtsh_ss(x->dmin), scale, off);
	crumbs_64(x->qs, q, u);
}

/* --------------------------------------------------- the packers */

#define QGEMM_PACK(t, T, sb, has_min)                                                                   \
	CPU_QGEMM_PACKER_PROTO(avx2, t)                                                                 \
	{                                                                                               \
		pack_panel(w, row_bytes, rows, kc, w_bias, dst, sb, has_min, decode_##t,                \
			   cpu_row_bytes(GLLMK_##T, QK_K));                                             \
	}
CPU_QGEMM_ISA_PACKERS(QGEMM_PACK)
#define QGEMM_PACK_ISC(t, T, sb, has_min, j, shift) CPU_QGEMM_ISC_PACKER_DEFINE(avx2, t, sb, has_min)
CPU_QGEMM_ISC_FORMATS(QGEMM_PACK_ISC)
