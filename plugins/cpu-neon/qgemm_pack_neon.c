/* The int8 GEMM's B packers (cpu_qgemm_pack_fn; panel layout:
 * plugins/cpu/gemm/qgemm.h) with AdvSIMD: the bytes of the framework's
 * cpu_qgemm_pack_b (plugins/cpu/gemm/qgemm_pack.c, the reference), w_bias
 * subtracted (the NEON tables pack signed), without its per-row scalar
 * decode and 4-byte interleave.
 *
 * cpu-avx2's packers (qgemm_pack_avx2.c) in 128-bit registers: for each 64
 * elements of K every row's 64 u bytes are decoded into four registers,
 * each 4 rows × 4 dwords block is transposed in registers (trn1/trn2), and
 * each result (one 4-byte group of K across 4 rows) is one 16-byte store.
 * The scales come from gemm/qgemm_pack_isa.h with fp16.h's conversion, so
 * the panels are byte-identical (unit test qgemm-pack-neon, under
 * qemu-aarch64 in CI).
 */
#include <arm_neon.h>
#include <string.h>

#include "cpu_cntx.h"
#include "fp16.h"
#include "neon_kernels.h"

#define NR CPU_QGEMM_NR

/* Decode elements [64·c, 64·c + 64) of one weight row into u[0..4) (16
 * each, in order), and the scales (and offsets) of its 64/sb sub-blocks
 * into scale[NR·s], off[NR·s]. */
typedef void (*chunk_decoder)(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off);

/* ------------------------------------------------------ panel body */

/* r[j] becomes dword j of r[0..4) (r[i] being row i). */
static inline __attribute__((always_inline)) void transpose_4x4_u32(uint32x4_t r[4])
{
	const uint32x4_t t0 = vtrn1q_u32(r[0], r[1]), t1 = vtrn2q_u32(r[0], r[1]);
	const uint32x4_t t2 = vtrn1q_u32(r[2], r[3]), t3 = vtrn2q_u32(r[2], r[3]);

	r[0] = vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2)));
	r[1] = vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3)));
	r[2] = vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2)));
	r[3] = vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3)));
}

static inline __attribute__((always_inline)) void pack_panel(const uint8_t *w, int64_t row_bytes, int64_t rows,
							     int64_t kc, int w_bias, uint8_t *dst, const int sb,
							     const int has_min, chunk_decoder decode)
{
	const int64_t sb_bytes = CPU_QGEMM_B_SB_BYTES(sb, has_min);
	const uint8x16_t bias = vdupq_n_u8((uint8_t)w_bias);

	for (int64_t c = 0; c < kc / 64; c++) {
		uint8_t *d = dst + c * (64 / sb) * sb_bytes;
		uint32x4_t u[4][NR]; /* [elements 16q .. 16q + 15][row] */
		float scale[4 * NR], off[4 * NR];

		if (rows < NR) {
			memset(scale, 0, sizeof(scale));
			memset(off, 0, sizeof(off));
		}
		for (int64_t r = 0; r < NR; r++) {
			uint8x16_t v[4] = { vdupq_n_u8(0), vdupq_n_u8(0), vdupq_n_u8(0), vdupq_n_u8(0) };

			if (r < rows) {
				decode(w + r * row_bytes, c, v, scale + r, off + r);
				for (int q = 0; q < 4; q++)
					v[q] = vsubq_u8(v[q], bias);
			}
			for (int q = 0; q < 4; q++)
				u[q][r] = vreinterpretq_u32_u8(v[q]);
		}
		/* after the transposes u[q][4·rb + i]: bytes 4j..4j+3 (j = 4q + i)
		 * of rows 4·rb .. 4·rb + 3, sub-block 4j/sb, group (4j mod sb)/4 */
		for (int q = 0; q < 4; q++)
			for (int rb = 0; rb < 4; rb++) {
				transpose_4x4_u32(u[q] + 4 * rb);
				for (int i = 0; i < 4; i++) {
					const int j = 4 * q + i;

					vst1q_u8(d + 4 * j / sb * sb_bytes + 4 * j % sb / 4 * 4 * NR + 16 * rb,
						 vreinterpretq_u8_u32(u[q][4 * rb + i]));
				}
			}
		for (int s = 0; s < 64 / sb; s++) {
			memcpy(d + s * sb_bytes + NR * sb, scale + NR * s, 4 * NR);
			if (has_min)
				memcpy(d + s * sb_bytes + NR * sb + 4 * NR, off + NR * s, 4 * NR);
		}
	}
}

/* --------------------------------------------------- byte helpers */

/* 16 bytes of nibble pairs (low: elements 0..15, high: 16..31, the q4_0
 * order) as u[0] = a & 15, u[1] = a >> 4. */
static inline void nibbles_16(const uint8_t *a, uint8x16_t u[2])
{
	const uint8x16_t v = vld1q_u8(a);

	u[0] = vandq_u8(v, vdupq_n_u8(0x0f));
	u[1] = vshrq_n_u8(v, 4);
}

/* iq4_nl's code book biased to unsigned (+128), through tbl. */
static inline void iq4_lookup(uint8x16_t u[4])
{
	const uint8x16_t book = veorq_u8(vreinterpretq_u8_s8(vld1q_s8(iq4nl_values)), vdupq_n_u8(0x80));

	for (int q = 0; q < 4; q++)
		u[q] = vqtbl1q_u8(book, u[q]);
}

/* (v >> shift) & mask of 16 bytes v (shift < 8). */
static inline uint8x16_t bits_at(uint8x16_t v, int shift, uint8_t mask)
{
	return vandq_u8(vshlq_u8(v, vdupq_n_s8((int8_t)-shift)), vdupq_n_u8(mask));
}

/* value where bit b of the 16 bytes at `bytes` is set, else 0. */
static inline uint8x16_t bit_value(const uint8_t *bytes, int b, uint8_t value)
{
	return vandq_u8(vtstq_u8(vld1q_u8(bytes), vdupq_n_u8((uint8_t)(1 << b))), vdupq_n_u8(value));
}

/* -------------------------------------- 32-element blocks: two a chunk */

static inline void decode_q4_0(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_q4_0 *x = (const struct block_q4_0 *)row + 2 * c;

	(void)off;
	scale[0] = f16_to_f32(x[0].d);
	scale[NR] = f16_to_f32(x[1].d);
	nibbles_16(x[0].qs, u);
	nibbles_16(x[1].qs, u + 2);
}

static inline void decode_iq4_nl(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	decode_q4_0(row, c, u, scale, off); /* the same block layout */
	iq4_lookup(u);
}

/* q8_0: the signed quants biased to unsigned (xor 0x80). */
static inline void decode_q8_0(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_q8_0 *x = (const struct block_q8_0 *)row + 2 * c;

	(void)off;
	scale[0] = f16_to_f32(x[0].d);
	scale[NR] = f16_to_f32(x[1].d);
	for (int q = 0; q < 4; q++)
		u[q] = veorq_u8(vld1q_u8((const uint8_t *)x[q / 2].qs + 16 * (q % 2)), vdupq_n_u8(0x80));
}

/* ------------------------------------ 256-element blocks: four chunks */

/* iq4_xs: chunk c is 32-element sub-blocks 2q, 2q + 1 (q = c mod 4). */
static inline void decode_iq4_xs(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_iq4_xs *x = (const struct block_iq4_xs *)row + c / 4;
	const int q = (int)(c % 4);

	(void)off;
	qgemm_chunk_scales_iq4_xs(x, q, f16_to_f32(x->d), scale);
	nibbles_16(x->qs + 32 * q, u);
	nibbles_16(x->qs + 32 * q + 16, u + 2);
	iq4_lookup(u);
}

/* q4_K and q5_K: chunk q = c mod 4 is sub-blocks 2q, 2q + 1 (the low and
 * the high nibbles of qs[32q ..]). */
static inline void k4_chunk(const uint8_t *scales, uint16_t d16, uint16_t dmin16, const uint8_t *qs, int q,
			    uint8x16_t u[4], float *scale, float *off)
{
	for (int i = 0; i < 2; i++) {
		const uint8x16_t v = vld1q_u8(qs + 32 * q + 16 * i);

		u[i] = vandq_u8(v, vdupq_n_u8(0x0f));
		u[2 + i] = vshrq_n_u8(v, 4);
	}
	qgemm_chunk_scales_k4(scales, f16_to_f32(d16), f16_to_f32(dmin16), q, scale, off);
}

static inline void decode_q4_K(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_q4_K *x = (const struct block_q4_K *)row + c / 4;

	k4_chunk(x->scales, x->d, x->dmin, x->qs, (int)(c % 4), u, scale, off);
}

/* q5_K: the fifth bit of element l of sub-block 2q + h is bit 2q + h of qh[l]. */
static inline void decode_q5_K(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_q5_K *x = (const struct block_q5_K *)row + c / 4;
	const int q = (int)(c % 4);

	k4_chunk(x->scales, x->d, x->dmin, x->qs, q, u, scale, off);
	for (int i = 0; i < 4; i++)
		u[i] = vorrq_u8(u[i], bit_value(x->qh + 16 * (i % 2), 2 * q + i / 2, 0x10));
}

/* q6_K: chunk c is half c/2 mod 2, part c mod 2 of it: 4 low bits from 64
 * ql bytes (low nibbles for part 0, high for 1), 2 high from 32 qh bytes
 * (bits 0-1 and 2-3 for part 0, 4-5 and 6-7 for 1); four 16-element
 * sub-blocks. */
static inline void decode_q6_K(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_q6_K *x = (const struct block_q6_K *)row + c / 4;
	const int half = (int)(c % 4 / 2), part = (int)(c % 2);

	(void)off;
	for (int i = 0; i < 4; i++) {
		const uint8x16_t ql = vld1q_u8(x->ql + 64 * half + 16 * i);
		const uint8x16_t qh = vld1q_u8(x->qh + 32 * half + 16 * (i % 2));

		/* elements 16i ..: ql[16i ..], qh bits 4·part + 2·(i / 2) */
		u[i] = vorrq_u8(bits_at(ql, 4 * part, 0x0f), vshlq_n_u8(bits_at(qh, 4 * part + 2 * (i / 2), 3), 4));
	}
	qgemm_chunk_scales_q6_K(x, (int)(c % 4), f16_to_f32(x->d), scale);
}

/* q2_K and q3_K: chunk q = c mod 4 holds, for 32 elements each, bit pairs
 * 2·(2q mod 4) and 2·(2q mod 4) + 2 of the 32 qs bytes of half q/2. */
static inline void crumbs_64(const uint8_t *qs, int q, uint8x16_t u[4])
{
	for (int i = 0; i < 4; i++)
		u[i] = bits_at(vld1q_u8(qs + 32 * (q / 2) + 16 * (i % 2)), 4 * (q % 2) + 2 * (i / 2), 3);
}

/* q3_K: the third bit of element l of 32-element group 2q + h is bit
 * 2q + h of hmask[l]. */
static inline void decode_q3_K(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_q3_K *x = (const struct block_q3_K *)row + c / 4;
	const int q = (int)(c % 4);

	(void)off;
	qgemm_chunk_scales_q3_K(x, q, f16_to_f32(x->d), scale);
	crumbs_64(x->qs, q, u);
	for (int i = 0; i < 4; i++)
		u[i] = vorrq_u8(u[i], bit_value(x->hmask + 16 * (i % 2), 2 * q + i / 2, 4));
}

static inline void decode_q2_K(const uint8_t *row, int64_t c, uint8x16_t u[4], float *scale, float *off)
{
	const struct block_q2_K *x = (const struct block_q2_K *)row + c / 4;
	const int q = (int)(c % 4);

	qgemm_chunk_scales_q2_K(x, q, f16_to_f32(x->d), f16_to_f32(x->dmin), scale, off);
	crumbs_64(x->qs, q, u);
}

/* --------------------------------------------------- the packers */

#define QGEMM_PACK(t, T, sb, has_min) CPU_QGEMM_PACKER_DEFINE(neon, t, sb, has_min)
CPU_QGEMM_ISA_PACKERS(QGEMM_PACK)
