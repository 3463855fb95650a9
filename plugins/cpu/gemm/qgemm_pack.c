/* The int8 GEMM's weight decoders (gemm/qgemm.h): one row's blocks as
 * unsigned bytes u and, per sub-block, w = scale·u + offset. Plain loops
 * over whole blocks that the compiler vectorises; they run once per weight
 * element per call, amortised over the M activation rows.
 * Layouts and formulas: SPEC/QUANT.md (ref/quant_ref.c decodes the same).
 */
#include <string.h>

#include "gemm/qgemm.h"
#include "gemm/qgemm_pack_isa.h"
#include "fp16.h"
#include "iq_subblocks.h"
#include "quant_blocks.h"
#include "ref/codebooks.h"

/* The 16 low and 16 high nibbles of 16 bytes: u[0..15], u[16..31]. */
static void nibbles(const uint8_t *qs, uint8_t *u)
{
	for (int j = 0; j < 16; j++) {
		u[j] = qs[j] & 0x0f;
		u[j + 16] = qs[j] >> 4;
	}
}

/* The same through a code book, biased to unsigned (iq4_nl, iq4_xs). */
static void nibbles_iq4(const uint8_t *qs, uint8_t *u)
{
	for (int j = 0; j < 16; j++) {
		u[j] = (uint8_t)(iq4nl_values[qs[j] & 0x0f] + 128);
		u[j + 16] = (uint8_t)(iq4nl_values[qs[j] >> 4] + 128);
	}
}

/* q5's fifth bits over nibbles already in u (32 elements). */
static void add_q5_high(const uint8_t qh[4], uint8_t *u)
{
	const uint32_t h = qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;

	for (int j = 0; j < 32; j++)
		u[j] |= ((h >> j) & 1) << 4;
}

/* The 32-element formats: fill u from block x[i], the scale is d, and
 * with a min the offset is m. */
#define DECODE_32(name, fill, min)                                                       \
	static void decode_##name(const void *src, int64_t n, uint8_t *u, float *scale, float *off) \
	{                                                                                \
		const struct block_##name *x = src;                                      \
                                                                                         \
		(void)off;                                                               \
		for (int64_t i = 0; i < n / 32; i++, u += 32) {                          \
			fill;                                                            \
			scale[i] = f16_to_f32(x[i].d);                                   \
			min;                                                             \
		}                                                                        \
	}
DECODE_32(q4_0, nibbles(x[i].qs, u), )
DECODE_32(q4_1, nibbles(x[i].qs, u), off[i] = f16_to_f32(x[i].m))
DECODE_32(q5_0, (nibbles(x[i].qs, u), add_q5_high(x[i].qh, u)), )
DECODE_32(q5_1, (nibbles(x[i].qs, u), add_q5_high(x[i].qh, u)), off[i] = f16_to_f32(x[i].m))
DECODE_32(q8_0, for (int j = 0; j < 32; j++) u[j] = (uint8_t)x[i].qs[j] ^ 0x80, )
DECODE_32(iq4_nl, nibbles_iq4(x[i].qs, u), )

/* ---------------------------------------------------------- K-quants */

/* 16-element sub-blocks: u = q + 4·(3rd bit), offset −4·scale. */
static void decode_q3_K(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_q3_K *x = src;

	(void)off;
	for (int64_t i = 0; i < n / QK_K; i++, scale += 16) {
		const float d = f16_to_f32(x[i].d);
		const uint8_t *q = x[i].qs;
		int is = 0;

		for (int half = 0; half < 2; half++, q += 32) {
			for (int shift = 0; shift < 8; shift += 2) {
				const int hb = half * 4 + shift / 2;

				for (int l = 0; l < 32; l++)
					u[l] = (uint8_t)(((q[l] >> shift) & 3) | (((x[i].hmask[l] >> hb) & 1) << 2));
				scale[is] = d * q3_K_scale(x[i].scales, is);
				scale[is + 1] = d * q3_K_scale(x[i].scales, is + 1);
				is += 2;
				u += 32;
			}
		}
	}
}

/* 16-element sub-blocks, scale d·(sc & 15), offset −dmin·(sc >> 4). */
static void decode_q2_K(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_q2_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++, scale += 16, off += 16) {
		const float d = f16_to_f32(x[i].d), dmin = f16_to_f32(x[i].dmin);
		const uint8_t *q = x[i].qs;

		for (int half = 0; half < 2; half++, q += 32)
			for (int shift = 0; shift < 8; shift += 2, u += 32)
				for (int l = 0; l < 32; l++)
					u[l] = (q[l] >> shift) & 3;
		for (int is = 0; is < 16; is++) {
			scale[is] = d * (x[i].scales[is] & 0x0f);
			off[is] = -(dmin * (x[i].scales[is] >> 4));
		}
	}
}

/* q4_K and q5_K: 32-element sub-blocks, scale d·sc, offset −dmin·m. */
static void k4_scales(const uint8_t *scales, float d, float dmin, float *scale, float *off)
{
	for (int is = 0; is < 8; is++) {
		uint8_t sc, m;

		k4_scale_min(is, scales, &sc, &m);
		scale[is] = d * sc;
		off[is] = -(dmin * m);
	}
}

static void decode_q4_K(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_q4_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++, scale += 8, off += 8) {
		for (int j = 0; j < 4; j++, u += 64)
			for (int l = 0; l < 32; l++) {
				u[l] = x[i].qs[32 * j + l] & 0x0f;
				u[l + 32] = x[i].qs[32 * j + l] >> 4;
			}
		k4_scales(x[i].scales, f16_to_f32(x[i].d), f16_to_f32(x[i].dmin), scale, off);
	}
}

static void decode_q5_K(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_q5_K *x = src;

	for (int64_t i = 0; i < n / QK_K; i++, scale += 8, off += 8) {
		for (int j = 0; j < 4; j++, u += 64)
			for (int l = 0; l < 32; l++) {
				u[l] = (uint8_t)((x[i].qs[32 * j + l] & 0x0f) | ((x[i].qh[l] >> (2 * j) & 1) << 4));
				u[l + 32] = (uint8_t)((x[i].qs[32 * j + l] >> 4) | ((x[i].qh[l] >> (2 * j + 1) & 1) << 4));
			}
		k4_scales(x[i].scales, f16_to_f32(x[i].d), f16_to_f32(x[i].dmin), scale, off);
	}
}

/* 16-element sub-blocks: u = the 6-bit quant, scale d·sc, offset −32·scale. */
static void decode_q6_K(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_q6_K *x = src;

	(void)off;
	for (int64_t i = 0; i < n / QK_K; i++, u += QK_K, scale += 16) {
		const float d = f16_to_f32(x[i].d);

		for (int half = 0; half < 2; half++) {
			const uint8_t *ql = x[i].ql + 64 * half, *qh = x[i].qh + 32 * half;
			uint8_t *y = u + 128 * half;

			for (int l = 0; l < 32; l++) {
				y[l] = (uint8_t)((ql[l] & 0x0f) | ((qh[l] & 3) << 4));
				y[l + 32] = (uint8_t)((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4));
				y[l + 64] = (uint8_t)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
				y[l + 96] = (uint8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
			}
		}
		for (int is = 0; is < 16; is++)
			scale[is] = d * x[i].scales[is];
	}
}

/* 32-element sub-blocks through the code book, scale d·(ls − 32). */
static void decode_iq4_xs(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_iq4_xs *x = src;

	(void)off;
	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_to_f32(x[i].d);

		for (int ib = 0; ib < QK_K / 32; ib++, u += 32) {
			nibbles_iq4(x[i].qs + 16 * ib, u);
			*scale++ = d * (iq4_xs_ls(&x[i], ib) - 32);
		}
	}
}

/* mxfp4: the code book + 12 (0..24), offset −12·scale, scale the E8M0's. */
static void decode_mxfp4(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_mxfp4 *x = src;

	(void)off;
	for (int64_t i = 0; i < n / QK_MXFP4; i++, u += 32) {
		for (int j = 0; j < 16; j++) {
			u[j] = (uint8_t)(ref_kvalues_mxfp4[x[i].qs[j] & 0x0f] + 12);
			u[j + 16] = (uint8_t)(ref_kvalues_mxfp4[x[i].qs[j] >> 4] + 12);
		}
		scale[i] = e8m0_half_to_f32(x[i].e);
	}
}

/* The ternary formats: u = q (0..2), offset −1·scale, scale d per 32. */
static void decode_tq2_0(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_tq2_0 *x = src;

	(void)off;
	for (int64_t i = 0; i < n / QK_K; i++) {
		for (int h = 0; h < 2; h++)
			for (int s = 0; s < 4; s++, u += 32)
				for (int l = 0; l < 32; l++)
					u[l] = (x[i].qs[32 * h + l] >> 2 * s) & 3;
		for (int is = 0; is < 8; is++)
			*scale++ = f16_to_f32(x[i].d);
	}
}

/* Trit j of a tq1_0 byte b, p = 3^j: ((b·p mod 256)·3) >> 8. */
static uint8_t tq1_trit(uint8_t b, int p)
{
	return (uint8_t)(((uint8_t)(b * p) * 3) >> 8);
}

/* tq1_0's element order: trits 0..4 of qs[0..31], of qs[32..47], then
 * trits 0..3 of qh[0..3], each trit's bytes in a run. */
static void decode_tq1_0(const void *src, int64_t n, uint8_t *u, float *scale, float *off)
{
	const struct block_tq1_0 *x = src;

	(void)off;
	for (int64_t i = 0; i < n / QK_K; i++) {
		for (int j = 0, p = 1; j < 5; j++, p *= 3)
			for (int m = 0; m < 32; m++)
				*u++ = tq1_trit(x[i].qs[m], p);
		for (int j = 0, p = 1; j < 5; j++, p *= 3)
			for (int m = 0; m < 16; m++)
				*u++ = tq1_trit(x[i].qs[32 + m], p);
		for (int j = 0, p = 1; j < 4; j++, p *= 3)
			for (int m = 0; m < 4; m++)
				*u++ = tq1_trit(x[i].qh[m], p);
		for (int is = 0; is < 8; is++)
			*scale++ = f16_to_f32(x[i].d);
	}
}

/* 0xff in byte j where bit j of bits (the low 8) is set, else 0. */
static inline uint64_t byte_mask8(uint32_t bits)
{
	const uint64_t b = ((bits & 0xff) * 0x0101010101010101ull) & 0x8040201008040201ull;

	return (((b + 0x7f7f7f7f7f7f7f7full) >> 7) & 0x0101010101010101ull) * 0xff;
}

/* The 32 bytes u of an i-quant sub-block, 8 at a time in a 64-bit word:
 * base ± delta, − where the element's sign bit is set. iq2/iq3: base 64,
 * delta the grid byte, always below 64 (iq2 8..43, iq3 1..62); iq1: base
 * 8·(grid + 2) with grid −1, 0 or 1 (its low two bits xor 2 give
 * grid + 2), delta 1. No byte ever carries into or borrows from its
 * neighbour. Element-wise, this was a third of an iq2_xxs GEMM at M = 512. */
static inline __attribute__((always_inline)) void iq_grid_bytes(const struct iq_sub *sub, int e, int iq1, uint8_t *u)
{
	const uint64_t ones = 0x0101010101010101ull;

	for (int w = 0; w < 4; w++) {
		const uint64_t m = byte_mask8(sub->signs >> 8 * w);
		uint64_t g;

		if (e == 8) {
			memcpy(&g, sub->entry[w], 8);
		} else {
			uint32_t lo, hi;

			memcpy(&lo, sub->entry[2 * w], 4);
			memcpy(&hi, sub->entry[2 * w + 1], 4);
			g = lo | (uint64_t)hi << 32;
		}
		const uint64_t base = iq1 ? ((g & 3 * ones) ^ 2 * ones) << 3 : 0x40 * ones, delta = iq1 ? ones : g;

		g = ((base + delta) & ~m) | ((base - delta) & m);
		memcpy(u + 8 * w, &g, 8);
	}
}

/* The i-quants (iq_subblocks.h), as the SIMD dots make them: u = 64 ±
 * grid, offset −64·scale (iq2, iq3) or u = 8·(grid + 2) ± 1, offset
 * −16·scale (iq1, the delta times 8); 16-element sub-blocks, scale
 * d·factor·(2·ls + 1). */
static inline __attribute__((always_inline)) void decode_iq(enum iq_format f, const void *src, int64_t n,
							     uint8_t *u, float *scale)
{
	for (int64_t i = 0; i < n / QK_K; i++) {
		const void *b = (const char *)src + i * iq_block_bytes(f);
		const float d = f16_to_f32(iq_d(f, b)) * iq_factor(f);

		for (int ib = 0; ib < QK_K / 32; ib++, u += 32) {
			const struct iq_sub sub = iq_sub_of(f, b, ib);

			iq_grid_bytes(&sub, iq_entry_bytes(f), iq_is_iq1(f), u);
			*scale++ = d * sub.scale[0];
			*scale++ = d * sub.scale[1];
		}
	}
}

#define DECODE_IQ(name, F)                                                                        \
	static void decode_##name(const void *src, int64_t n, uint8_t *u, float *scale, float *off) \
	{                                                                                          \
		(void)off;                                                                         \
		decode_iq(F, src, n, u, scale);                                                    \
	}
DECODE_IQ(iq2_xxs, IQ_IQ2_XXS)
DECODE_IQ(iq2_xs, IQ_IQ2_XS)
DECODE_IQ(iq2_s, IQ_IQ2_S)
DECODE_IQ(iq3_xxs, IQ_IQ3_XXS)
DECODE_IQ(iq3_s, IQ_IQ3_S)
DECODE_IQ(iq1_s, IQ_IQ1_S)
DECODE_IQ(iq1_m, IQ_IQ1_M)

/* ------------------------------------------- the isc mode's integers */

/* Per 256: every row's integers (qgemm_isc_<t>, gemm/qgemm_pack_isa.h),
 * then qgemm_isc_put: the pass that the ISAs' isc packers fold into
 * theirs, and the reference they are tested against. */
void cpu_qgemm_isc_scales(int32_t t, const void *w, int64_t row_bytes, int64_t rows, int64_t kc, void *dst)
{
	const struct cpu_qgemm_format *f = cpu_qgemm_format(t);
	const int64_t block_bytes = cpu_row_bytes(t, QK_K);

	for (int64_t i = 0; i < kc / QK_K; i++) {
		struct qgemm_isc_ints v;

		for (int64_t jj = 0; jj < rows; jj++)
			f->isc((const char *)w + jj * row_bytes + i * block_bytes, v.sc[jj], v.k[jj], &v.d[jj],
			       &v.dmin[jj]);
		qgemm_isc_put(dst, kc, (int)f->sb, f->has_min, i, rows, &v);
	}
}

/* Each dtype's packing: sub-block, offset −c·scale or a min, the largest
 * u, its decoder and its isc integers. */
#define FORMAT(sb_, c_, umax_, t) { .sb = sb_, .c = c_, .umax = umax_, .decode = decode_##t }
#define FORMAT_MIN(sb_, umax_, t) { .sb = sb_, .has_min = 1, .umax = umax_, .decode = decode_##t }
static const struct cpu_qgemm_format qgemm_formats[GLLMK_DTYPE_LIMIT] = {
	[GLLMK_Q4_0] = FORMAT(32, 8, 15, q4_0),
	[GLLMK_Q4_1] = FORMAT_MIN(32, 15, q4_1),
	[GLLMK_Q5_0] = FORMAT(32, 16, 31, q5_0),
	[GLLMK_Q5_1] = FORMAT_MIN(32, 31, q5_1),
	[GLLMK_Q8_0] = FORMAT(32, 128, 255, q8_0),
	[GLLMK_IQ4_NL] = FORMAT(32, 128, 255, iq4_nl),
	[GLLMK_Q2_K] = { .sb = 16, .has_min = 1, .umax = 3, .decode = decode_q2_K, .isc = qgemm_isc_q2_K },
	[GLLMK_Q3_K] = { .sb = 16, .c = 4, .umax = 7, .decode = decode_q3_K, .isc = qgemm_isc_q3_K },
	[GLLMK_Q4_K] = { .sb = 32, .has_min = 1, .umax = 15, .decode = decode_q4_K, .isc = qgemm_isc_q4_K },
	[GLLMK_Q5_K] = { .sb = 32, .has_min = 1, .umax = 31, .decode = decode_q5_K, .isc = qgemm_isc_q5_K },
	[GLLMK_Q6_K] = { .sb = 16, .c = 32, .umax = 63, .decode = decode_q6_K, .isc = qgemm_isc_q6_K },
	[GLLMK_IQ4_XS] = { .sb = 32, .c = 128, .umax = 255, .decode = decode_iq4_xs, .isc = qgemm_isc_iq4_xs },
	[GLLMK_MXFP4] = FORMAT(32, 12, 24, mxfp4),
	[GLLMK_TQ1_0] = FORMAT(32, 1, 2, tq1_0),
	[GLLMK_TQ2_0] = FORMAT(32, 1, 3, tq2_0),
	[GLLMK_IQ2_XXS] = FORMAT(16, 64, 127, iq2_xxs),
	[GLLMK_IQ2_XS] = FORMAT(16, 64, 127, iq2_xs),
	[GLLMK_IQ2_S] = FORMAT(16, 64, 127, iq2_s),
	[GLLMK_IQ3_XXS] = FORMAT(16, 64, 127, iq3_xxs),
	[GLLMK_IQ3_S] = FORMAT(16, 64, 127, iq3_s),
	[GLLMK_IQ1_S] = FORMAT(16, 16, 31, iq1_s),
	[GLLMK_IQ1_M] = FORMAT(16, 16, 31, iq1_m),
};

const struct cpu_qgemm_format *cpu_qgemm_format(int32_t t)
{
	return t >= 0 && t < GLLMK_DTYPE_LIMIT && qgemm_formats[t].decode ? &qgemm_formats[t] : NULL;
}

/* Decode each row, then interleave its sub-blocks' u into the panel's
 * [sb/4][16][4] (4 bytes of K per row) and place its scales and offsets. */
void cpu_qgemm_pack_b(int32_t t, int w_bias, const void *w, int64_t row_bytes, int64_t rows, int64_t kc,
		      void *dst)
{
	typedef float f32_alias __attribute__((may_alias));
	const struct cpu_qgemm_format *f = cpu_qgemm_format(t);
	const int64_t sb = f->sb, nsb = kc / sb, sb_bytes = CPU_QGEMM_B_SB_BYTES(sb, f->has_min);
	uint8_t u[CPU_QGEMM_KC_MAX];
	float scale[CPU_QGEMM_KC_MAX / 16], off[CPU_QGEMM_KC_MAX / 16];

	if (rows < CPU_QGEMM_NR)
		memset(dst, 0, (size_t)(nsb * sb_bytes));
	for (int64_t jj = 0; jj < rows; jj++) {
		f->decode((const char *)w + jj * row_bytes, kc, u, scale, off);
		if (w_bias) /* the signed packing: s8 bytes u − c, two's complement */
			for (int64_t e = 0; e < kc; e++)
				u[e] = (uint8_t)(u[e] - w_bias);
		for (int64_t s = 0; s < nsb; s++) {
			uint8_t *d = (uint8_t *)dst + s * sb_bytes;
			const uint8_t *us = u + s * sb;

			for (int64_t j = 0; j < sb / 4; j++)
				memcpy(d + (j * CPU_QGEMM_NR + jj) * 4, us + 4 * j, 4);
			((f32_alias *)(d + CPU_QGEMM_NR * sb))[jj] = scale[s];
			if (f->has_min)
				((f32_alias *)(d + CPU_QGEMM_NR * sb + 4 * CPU_QGEMM_NR))[jj] = off[s];
		}
	}
}
