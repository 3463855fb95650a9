/* The group kernels of prepared weights (plugins/cpu/prepared.h) on
 * cpu-neon's sdot table (built once, with -march=armv8.2-a+dotprod): a
 * chunk of a group is rows 0..3 and 4..7 × 4 bytes, and sdot by lane c
 * adds each row's 4 bytes times the activation's bytes 4c..4c+3 into that
 * row's lane; the plain build's smull + sadalp sums other lanes, so its
 * table prepares nothing. A block's nibbles are split once for the call's
 * activation rows.
 */
#include "neon_dot.h"
#include "prepared.h"

/* The 8 rows' sums of each activation row: zeroed, and stored at out. */
static inline void group_acc_zero(float32x4_t acc[CPU_GROUP_X_ROWS][2], int xrows)
{
	for (int t = 0; t < xrows; t++)
		acc[t][0] = acc[t][1] = vdupq_n_f32(0.0f);
}

static inline void group_acc_store(float32x4_t acc[CPU_GROUP_X_ROWS][2], int xrows, float *out)
{
	for (int t = 0; t < xrows; t++) {
		vst1q_f32(out + 8 * t, acc[t][0]);
		vst1q_f32(out + 8 * t + 4, acc[t][1]);
	}
}

/* ------------------------------------------------------------ q4_0x8 */

#define Q4_0X8_CHUNK(c)                                                                      \
	do {                                                                                 \
		s0 = vdotq_laneq_s32(s0, lo[c][0], xl, c);                                   \
		s0 = vdotq_laneq_s32(s0, hi[c][0], xh, c);                                   \
		s1 = vdotq_laneq_s32(s1, lo[c][1], xl, c);                                   \
		s1 = vdotq_laneq_s32(s1, hi[c][1], xh, c);                                   \
	} while (0)

static inline __attribute__((always_inline)) void q4_0x8_dot_body(int64_t n, const void *w, const void *xq,
								  const int32_t *xsum, float *out, const int xrows)
{
	const struct cpu_q4_0x8 *u = w;
	const struct block_q8_0 *x = xq;
	const int64_t nb = n / QK4_0;
	float32x4_t acc[CPU_GROUP_X_ROWS][2];

	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		const float32x4_t d0 = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(u[b].d)));
		const float32x4_t d1 = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(u[b].d + 4)));
		int8x16_t lo[4][2], hi[4][2];

		for (int c = 0; c < 4; c++)
			for (int h = 0; h < 2; h++) {
				const uint8x16_t q = vld1q_u8(u[b].qs[c][4 * h]);

				lo[c][h] = nibbles_lo(q);
				hi[c][h] = nibbles_hi(q);
			}
		for (int t = 0; t < xrows; t++) {
			const struct block_q8_0 *xb = &x[t * nb + b];
			const int8x16_t xl = vld1q_s8(xb->qs), xh = vld1q_s8(xb->qs + 16);
			const float32x4_t dx = vdupq_n_f32(f16_to_f32(xb->d));
			int32x4_t s0 = vdupq_n_s32(-8 * xsum[t * nb + b]), s1 = s0;

			Q4_0X8_CHUNK(0);
			Q4_0X8_CHUNK(1);
			Q4_0X8_CHUNK(2);
			Q4_0X8_CHUNK(3);
			acc[t][0] = vfmaq_f32(acc[t][0], vcvtq_f32_s32(s0), vmulq_f32(d0, dx));
			acc[t][1] = vfmaq_f32(acc[t][1], vcvtq_f32_s32(s1), vmulq_f32(d1, dx));
		}
	}
	group_acc_store(acc, xrows, out);
}

CPU_DEFINE_DOT_GROUP(neondot_dot_q4_0x8, q4_0x8_dot_body)

/* ---------------------------------------------------- q4_Kx8, q5_Kx8
 *
 * Per pair of sub-blocks (64 elements): 8 chunks, each split into low
 * nibbles (sub-block 2j) and high ones (2j + 1), q5_Kx8's fifth bits or-ed
 * in, sdot by lane into the rows' i32 sums, one multiply-add by the rows'
 * scales a sub-block; the mins' term by widening multiplies of min pairs
 * with two sub-blocks' Σx. */

/* v[0..63] of a 6-bit field list (prepared.h) at v. */
static inline void q4_Kx8_fields(const uint8_t lo[32], const uint8_t hi[16], uint8_t v[64])
{
	const uint8x16_t l0 = vld1q_u8(lo), l1 = vld1q_u8(lo + 16), h = vld1q_u8(hi), m4 = vdupq_n_u8(0x0f);
	const uint8x16_t m2 = vdupq_n_u8(3);

	vst1q_u8(v, vorrq_u8(vandq_u8(l0, m4), vshlq_n_u8(vandq_u8(h, m2), 4)));
	vst1q_u8(v + 16, vorrq_u8(vandq_u8(l1, m4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 2), m2), 4)));
	vst1q_u8(v + 32, vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 4), m2), 4)));
	vst1q_u8(v + 48, vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(h, 6), 4)));
}

/* 4 bytes at v as i32 lanes. */
static inline int32x4_t q4_Kx8_widen(const uint8_t *v)
{
	return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(vld1_u8(v)))));
}

/* Σ_s min(r, s)·Σx(s) of an activation block for rows 4h..4h+3: pair p's
 * mins at mv[16p + 2r + h'] against Σx of sub-blocks 2p, 2p + 1. */
static inline int32x4_t q4_Kx8_mins(const uint8_t mv[64], const int16_t bsums[16], int h)
{
	int32x4_t sum = vdupq_n_s32(0);

	for (int p = 0; p < 4; p++) {
		const int16x8_t m = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(mv + 16 * p + 8 * h)));
		const int16_t sa = (int16_t)(bsums[4 * p] + bsums[4 * p + 1]);
		const int16_t sb = (int16_t)(bsums[4 * p + 2] + bsums[4 * p + 3]);
		const int16_t pair[8] = { sa, sb, sa, sb, sa, sb, sa, sb };
		const int16x8_t x = vld1q_s16(pair);

		sum = vaddq_s32(sum, vpaddq_s32(vmull_s16(vget_low_s16(m), vget_low_s16(x)), vmull_high_s16(m, x)));
	}
	return sum;
}

/* Bit s (a sub-block) of each byte of q5_Kx8's fifth bits hb, at bit 4. */
static inline int8x16_t q5_Kx8_bit(uint8x16_t hb, int s)
{
	return vreinterpretq_s8_u8(vandq_u8(vshlq_u8(hb, vdupq_n_s8((int8_t)(4 - s))), vdupq_n_u8(0x10)));
}

/* Chunk c of pair j: lanes c % 4 of the activation's 16-byte quarters. */
#define KX8_CHUNK(c)                                                                                 \
	do {                                                                                         \
		const uint8x16_t q0 = vld1q_u8(qs[j][c][0]), q1 = vld1q_u8(qs[j][c][4]);             \
		int8x16_t lo0 = nibbles_lo(q0), lo1 = nibbles_lo(q1);                                \
		int8x16_t hi0 = nibbles_hi(q0), hi1 = nibbles_hi(q1);                                \
		if (five) {                                                                          \
			const uint8x16_t h0 = vld1q_u8(u5->qh[c][0]), h1 = vld1q_u8(u5->qh[c][4]);   \
			lo0 = vorrq_s8(lo0, q5_Kx8_bit(h0, 2 * j));                                  \
			lo1 = vorrq_s8(lo1, q5_Kx8_bit(h1, 2 * j));                                  \
			hi0 = vorrq_s8(hi0, q5_Kx8_bit(h0, 2 * j + 1));                              \
			hi1 = vorrq_s8(hi1, q5_Kx8_bit(h1, 2 * j + 1));                              \
		}                                                                                    \
		for (int t = 0; t < xrows; t++) {                                                    \
			se[t][0] = vdotq_laneq_s32(se[t][0], lo0, xl[t][(c) / 4], (c) % 4);          \
			se[t][1] = vdotq_laneq_s32(se[t][1], lo1, xl[t][(c) / 4], (c) % 4);          \
			so[t][0] = vdotq_laneq_s32(so[t][0], hi0, xh[t][(c) / 4], (c) % 4);          \
			so[t][1] = vdotq_laneq_s32(so[t][1], hi1, xh[t][(c) / 4], (c) % 4);          \
		}                                                                                    \
	} while (0)

/* The body of q4_Kx8 (five 0) and q5_Kx8 (five 1). */
static inline __attribute__((always_inline)) void kx8_dot_body(int64_t n, const void *w, const void *xq, float *out,
							       const int xrows, const int five)
{
	const size_t unit = five ? sizeof(struct cpu_q5_Kx8) : sizeof(struct cpu_q4_Kx8);
	const struct block_q8_K *x = xq;
	const int64_t nb = n / QK_K;
	float32x4_t acc[CPU_GROUP_X_ROWS][2];

	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		const char *ub = (const char *)w + b * unit;
		const struct cpu_kx8_head *hd = (const struct cpu_kx8_head *)ub;
		const struct cpu_q5_Kx8 *u5 = (const struct cpu_q5_Kx8 *)ub;
		const uint8_t (*qs)[8][CPU_GROUP_ROWS][4] = five ? u5->qs : ((const struct cpu_q4_Kx8 *)ub)->qs;
		uint8_t sv[64], mv[64];
		int32x4_t isum[CPU_GROUP_X_ROWS][2];

		q4_Kx8_fields(hd->scales_lo, hd->scales_hi, sv);
		q4_Kx8_fields(hd->mins_lo, hd->mins_hi, mv);
		for (int t = 0; t < xrows; t++)
			isum[t][0] = isum[t][1] = vdupq_n_s32(0);
		for (int j = 0; j < 4; j++) {
			int32x4_t se[CPU_GROUP_X_ROWS][2], so[CPU_GROUP_X_ROWS][2];
			int8x16_t xl[CPU_GROUP_X_ROWS][2], xh[CPU_GROUP_X_ROWS][2];
			for (int t = 0; t < xrows; t++) {
				const int8_t *xs = x[t * nb + b].qs + 64 * j;

				se[t][0] = se[t][1] = so[t][0] = so[t][1] = vdupq_n_s32(0);
				xl[t][0] = vld1q_s8(xs);
				xl[t][1] = vld1q_s8(xs + 16);
				xh[t][0] = vld1q_s8(xs + 32);
				xh[t][1] = vld1q_s8(xs + 48);
			}
			KX8_CHUNK(0);
			KX8_CHUNK(1);
			KX8_CHUNK(2);
			KX8_CHUNK(3);
			KX8_CHUNK(4);
			KX8_CHUNK(5);
			KX8_CHUNK(6);
			KX8_CHUNK(7);
			for (int t = 0; t < xrows; t++)
				for (int h = 0; h < 2; h++) {
					isum[t][h] = vmlaq_s32(isum[t][h], se[t][h], q4_Kx8_widen(sv + 8 * (2 * j) + 4 * h));
					isum[t][h] = vmlaq_s32(isum[t][h], so[t][h], q4_Kx8_widen(sv + 8 * (2 * j + 1) + 4 * h));
				}
		}
		for (int h = 0; h < 2; h++) {
			const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(hd->d + 4 * h)));
			const float32x4_t dm = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(hd->dmin + 4 * h)));

			for (int t = 0; t < xrows; t++) {
				const struct block_q8_K *xb = &x[t * nb + b];
				const float32x4_t dx = vdupq_n_f32(xb->d);

				acc[t][h] = vfmaq_f32(acc[t][h], vcvtq_f32_s32(isum[t][h]), vmulq_f32(dw, dx));
				acc[t][h] = vfmsq_f32(acc[t][h], vcvtq_f32_s32(q4_Kx8_mins(mv, xb->bsums, h)),
						      vmulq_f32(dm, dx));
			}
		}
	}
	group_acc_store(acc, xrows, out);
}

#define q4_Kx8_dot_body(n, w, xq, xsum, out, xrows) kx8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 0)
#define q5_Kx8_dot_body(n, w, xq, xsum, out, xrows) kx8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 1)

CPU_DEFINE_DOT_GROUP(neondot_dot_q4_Kx8, q4_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(neondot_dot_q5_Kx8, q5_Kx8_dot_body)

/* ---------------------------------------------------- q2_Kx8, q3_Kx8
 *
 * Per half h of a block and parity q: 4 chunks, each 4 vectors of 2-bit
 * fields per 4 rows (q3_K's high bit or-ed in at bit 2), vector s of group
 * 8h + 2s + q, sdot by lane into that group's row sums; then one
 * multiply-add by the group's row scales (q3_K: its sums less 4·Σx first;
 * q2_K: its mins times Σx aside). */

/* 2-bit field s of each byte of q, with q3_K's high bit b of hb at bit 2. */
static inline int8x16_t k16x8_field(uint8x16_t q, int s, uint8x16_t hb, int b, int three)
{
	uint8x16_t u = vandq_u8(vshlq_u8(q, vdupq_n_s8((int8_t)(-2 * s))), vdupq_n_u8(3));

	if (three)
		u = vorrq_u8(u, vandq_u8(vshlq_u8(hb, vdupq_n_s8((int8_t)(2 - b))), vdupq_n_u8(4)));
	return vreinterpretq_s8_u8(u);
}

/* Row r's scale bytes (or fields) of group g, rows 4i..4i+3, as i32. */
static inline int32x4_t k16x8_rows(const uint8_t v[128], int g, int i)
{
	const uint8x8x2_t pair = vld2_u8(v + 16 * (g / 2)); /* val[h]: rows 0..7 of group 2·(g / 2) + h */
	const uint16x8_t w = vmovl_u8(pair.val[g % 2]);

	return vreinterpretq_s32_u32(vmovl_u16(i ? vget_high_u16(w) : vget_low_u16(w)));
}

/* Chunk 4q + c of half h: lane c of the activation's 16 bytes 128h + 32s +
 * 16q.. for field s. */
#define K16X8_CHUNK(c)                                                                                  \
	do {                                                                                            \
		const uint8x16_t q0 = vld1q_u8(qs[8 * h + 4 * q + (c)][0]), q1 = vld1q_u8(qs[8 * h + 4 * q + (c)][4]); \
		const uint8x16_t h0 = three ? vld1q_u8(u3->hmask[4 * q + (c)][0]) : q0;                \
		const uint8x16_t h1 = three ? vld1q_u8(u3->hmask[4 * q + (c)][4]) : q1;                \
		for (int s = 0; s < 4; s++) {                                                           \
			const int8x16_t u0 = k16x8_field(q0, s, h0, 4 * h + s, three);                  \
			const int8x16_t u1 = k16x8_field(q1, s, h1, 4 * h + s, three);                  \
			for (int t = 0; t < xrows; t++) {                                               \
				ss[t][s][0] = vdotq_laneq_s32(ss[t][s][0], u0, xs[t][s], c);           \
				ss[t][s][1] = vdotq_laneq_s32(ss[t][s][1], u1, xs[t][s], c);           \
			}                                                                               \
		}                                                                                       \
	} while (0)

/* The body of q2_Kx8 (three 0) and q3_Kx8 (three 1). */
static inline __attribute__((always_inline)) void k16x8_dot_body(int64_t n, const void *w, const void *xq, float *out,
								 const int xrows, const int three)
{
	const size_t unit = three ? sizeof(struct cpu_q3_Kx8) : sizeof(struct cpu_q2_Kx8);
	const struct block_q8_K *x = xq;
	const int64_t nb = n / QK_K;
	float32x4_t acc[CPU_GROUP_X_ROWS][2];

	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		const char *ub = (const char *)w + b * unit;
		const struct cpu_q2_Kx8 *u2 = (const struct cpu_q2_Kx8 *)ub;
		const struct cpu_q3_Kx8 *u3 = (const struct cpu_q3_Kx8 *)ub;
		const uint8_t (*qs)[CPU_GROUP_ROWS][4] = three ? u3->qs : u2->qs;
		uint8_t v[128];
		int32x4_t isum[CPU_GROUP_X_ROWS][2], mins[CPU_GROUP_X_ROWS][2];

		if (three) {
			q4_Kx8_fields(u3->scales_lo[0], u3->scales_hi[0], v);
			q4_Kx8_fields(u3->scales_lo[1], u3->scales_hi[1], v + 64);
		} else {
			memcpy(v, u2->scales, sizeof(v));
		}
		for (int t = 0; t < xrows; t++)
			isum[t][0] = isum[t][1] = mins[t][0] = mins[t][1] = vdupq_n_s32(0);
		for (int h = 0; h < 2; h++)
			for (int q = 0; q < 2; q++) {
				int32x4_t ss[CPU_GROUP_X_ROWS][4][2];
				int8x16_t xs[CPU_GROUP_X_ROWS][4];

				for (int t = 0; t < xrows; t++)
					for (int s = 0; s < 4; s++) {
						ss[t][s][0] = ss[t][s][1] = vdupq_n_s32(0);
						xs[t][s] = vld1q_s8(x[t * nb + b].qs + 128 * h + 32 * s + 16 * q);
					}
				K16X8_CHUNK(0);
				K16X8_CHUNK(1);
				K16X8_CHUNK(2);
				K16X8_CHUNK(3);
				for (int s = 0; s < 4; s++) {
					const int g = 8 * h + 2 * s + q;

					for (int i = 0; i < 2; i++) {
						const int32x4_t f = k16x8_rows(v, g, i);
						const int32x4_t sc = three ? vsubq_s32(f, vdupq_n_s32(32)) : vandq_s32(f, vdupq_n_s32(15));

						for (int t = 0; t < xrows; t++) {
							const int32_t sx = x[t * nb + b].bsums[g];

							if (three) /* (v − 32)·Σ (u − 4)·x */
								isum[t][i] = vmlaq_s32(isum[t][i], vsubq_s32(ss[t][s][i], vdupq_n_s32(4 * sx)), sc);
							else
								isum[t][i] = vmlaq_s32(isum[t][i], ss[t][s][i], sc);
							if (!three)
								mins[t][i] = vmlaq_n_s32(mins[t][i], vshrq_n_s32(f, 4), sx);
						}
					}
				}
			}
		for (int i = 0; i < 2; i++) {
			const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(u2->d + 4 * i)));
			const float32x4_t dm = three ? vdupq_n_f32(0.0f)
						     : vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(u2->dmin + 4 * i)));

			for (int t = 0; t < xrows; t++) {
				const float32x4_t dx = vdupq_n_f32(x[t * nb + b].d);

				acc[t][i] = vfmaq_f32(acc[t][i], vcvtq_f32_s32(isum[t][i]), vmulq_f32(dw, dx));
				acc[t][i] = vfmsq_f32(acc[t][i], vcvtq_f32_s32(mins[t][i]), vmulq_f32(dm, dx));
			}
		}
	}
	group_acc_store(acc, xrows, out);
}

#define q2_Kx8_dot_body(n, w, xq, xsum, out, xrows) k16x8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 0)
#define q3_Kx8_dot_body(n, w, xq, xsum, out, xrows) k16x8_dot_body(n, w, xq, ((void)(xsum), out), xrows, 1)

CPU_DEFINE_DOT_GROUP(neondot_dot_q2_Kx8, q2_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(neondot_dot_q3_Kx8, q3_Kx8_dot_body)

/* ----------------------------------------------------------- iq4_xsx8
 *
 * Per sub-block (32 elements): 4 chunks, each split into low nibbles
 * (elements 4c..) and high ones (16 + 4c..) and looked up in the code book
 * (tbl), the signed values sdot by lane into the rows' i32 sums; one
 * multiply-add by the rows' scales (− 32) a sub-block. */

#define IQ4_XSX8_CHUNK(c)                                                                            \
	do {                                                                                         \
		const uint8x16_t q0 = vld1q_u8(u[b].qs[s][c][0]), q1 = vld1q_u8(u[b].qs[s][c][4]);   \
		const int8x16_t lo0 = iq4_lookup(nibbles_lo(q0)), lo1 = iq4_lookup(nibbles_lo(q1)); \
		const int8x16_t hi0 = iq4_lookup(nibbles_hi(q0)), hi1 = iq4_lookup(nibbles_hi(q1)); \
		for (int t = 0; t < xrows; t++) {                                                    \
			ss[t][0] = vdotq_laneq_s32(ss[t][0], lo0, xl[t], c);                         \
			ss[t][1] = vdotq_laneq_s32(ss[t][1], lo1, xl[t], c);                         \
			ss[t][0] = vdotq_laneq_s32(ss[t][0], hi0, xh[t], c);                         \
			ss[t][1] = vdotq_laneq_s32(ss[t][1], hi1, xh[t], c);                         \
		}                                                                                    \
	} while (0)

static inline __attribute__((always_inline)) void iq4_xsx8_dot_body(int64_t n, const void *w, const void *xq,
								    const int32_t *xsum, float *out, const int xrows)
{
	const struct cpu_iq4_xsx8 *u = w;
	const struct block_q8_K *x = xq;
	const int64_t nb = n / QK_K;
	float32x4_t acc[CPU_GROUP_X_ROWS][2];

	(void)xsum;
	group_acc_zero(acc, xrows);
	for (int64_t b = 0; b < nb; b++) {
		uint8_t sv[64];
		int32x4_t isum[CPU_GROUP_X_ROWS][2];

		q4_Kx8_fields(u[b].scales_lo, u[b].scales_hi, sv);
		for (int t = 0; t < xrows; t++)
			isum[t][0] = isum[t][1] = vdupq_n_s32(0);
		for (int s = 0; s < 8; s++) {
			int32x4_t ss[CPU_GROUP_X_ROWS][2];
			int8x16_t xl[CPU_GROUP_X_ROWS], xh[CPU_GROUP_X_ROWS];

			for (int t = 0; t < xrows; t++) {
				ss[t][0] = ss[t][1] = vdupq_n_s32(0);
				xl[t] = vld1q_s8(x[t * nb + b].qs + 32 * s);
				xh[t] = vld1q_s8(x[t * nb + b].qs + 32 * s + 16);
			}
			IQ4_XSX8_CHUNK(0);
			IQ4_XSX8_CHUNK(1);
			IQ4_XSX8_CHUNK(2);
			IQ4_XSX8_CHUNK(3);
			for (int t = 0; t < xrows; t++)
				for (int h = 0; h < 2; h++)
					isum[t][h] = vmlaq_s32(isum[t][h], ss[t][h],
							       vsubq_s32(q4_Kx8_widen(sv + 8 * s + 4 * h), vdupq_n_s32(32)));
		}
		for (int h = 0; h < 2; h++) {
			const float32x4_t dw = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(u[b].d + 4 * h)));

			for (int t = 0; t < xrows; t++)
				acc[t][h] = vfmaq_f32(acc[t][h], vcvtq_f32_s32(isum[t][h]),
						      vmulq_f32(dw, vdupq_n_f32(x[t * nb + b].d)));
		}
	}
	group_acc_store(acc, xrows, out);
}

CPU_DEFINE_DOT_GROUP(neondot_dot_iq4_xsx8, iq4_xsx8_dot_body)
