/* The integer-dot vocabulary of cpu-neon's block-format dots, shared by the
 * files that define them (matmul_quant_neon.c: q8_0, q4_0;
 * matmul_legacy_neon.c: q4_1, q5_0, q5_1, iq4_nl; matmul_kquant_neon.c:
 * q2_K .. q6_K and iq4_xs; one file per format family). Every such file is
 * built twice (meson.build): with -march=armv8.2-a+dotprod -DNEON_DOTPROD
 * the s8×s8 dot is sdot and the kernels are neondot_*; without, smull +
 * sadalp (any AArch64 CPU) and neon_*: DOT_NAME(sdot name, name) picks
 * this build's name where a kernel is defined. Integer sums are exact either
 * way, so both flavours give the same result.
 *
 * NEON_DEFINE_DOT_32 is the multi-row body of every 32-element format
 * against q8_0 activations: a format gives row_<t> (one block's integer
 * dot against the activation block's 32 bytes) and, with a min, min_of(w)
 * (the block's min in f32; NO_MIN for the others);
 * NEON_DEFINE_DOT_32_SCALED the same with scale_of(w), the block's scale
 * in f32, for a format whose scale is not the f16 d (mxfp4's E8M0 byte).
 */
#ifndef GLLMK_NEON_DOT_H
#define GLLMK_NEON_DOT_H

#include <arm_neon.h>

#include "dot_kernel.h"
#include "fp16.h"
#include "ref/codebooks.h"
#include "neon_kernels.h"
#include "quant_blocks.h"

#ifdef NEON_DOTPROD
#define DOT_NAME(sdot_name, name) sdot_name

/* acc + four sums of four products of signed bytes. */
static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	return vdotq_s32(acc, a, b);
}
#else
#define DOT_NAME(sdot_name, name) name

/* The same sums in another lane order (each product is at most 128·128,
 * a pair of them fits int16 before sadalp widens). */
static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	return vpadalq_s16(acc, vmull_high_s8(a, b));
}
#endif

/* Σ a·b over 32 signed bytes. */
static inline int32x4_t dot32(int8x16_t a0, int8x16_t a1, int8x16_t b0, int8x16_t b1)
{
	return dot16(dot16(vdupq_n_s32(0), a0, b0), a1, b1);
}

/* The low and high nibbles of 16 bytes. */
static inline int8x16_t nibbles_lo(uint8x16_t q)
{
	return vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0f)));
}

static inline int8x16_t nibbles_hi(uint8x16_t q)
{
	return vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
}

/* iq4_nl's code book T at 16 indices 0..15. */
static inline int8x16_t iq4_lookup(int8x16_t idx)
{
	return vqtbl1q_s8(vld1q_s8(iq4nl_values), vreinterpretq_u8_s8(idx));
}

/* mxfp4's code book (E2M1 values doubled) at 16 indices 0..15. */
static inline int8x16_t mxfp4_lookup(int8x16_t idx)
{
	return vqtbl1q_s8(vld1q_s8(ref_kvalues_mxfp4), vreinterpretq_u8_s8(idx));
}

/* Bits 0..15 of `bits` as 16 bytes, 0xff where set. */
static inline uint8x16_t bit_bytes(uint32_t bits)
{
	static const uint8_t sel[16] = { 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128 };

	return vtstq_u8(vcombine_u8(vdup_n_u8((uint8_t)bits), vdup_n_u8((uint8_t)(bits >> 8))), vld1q_u8(sel));
}

/* -------------------------------------------------- 32-element blocks */

#define NO_MIN(w) 0.0f
#define F16_D(w) f16_to_f32((w)->d)

/* The rows a block at a time: the activation block's bytes, its scale and
 * (with_min) dx·Σ x loaded once for all rows; per row one integer dot,
 * scaled by d·dx, and with_min m·dx·Σ x (Σ (d·q + m)·dx·xq). Every 8 blocks
 * each row prefetches the next 8 blocks' bytes DOT_PREFETCH_AHEAD on. */
#define NEON_DEFINE_DOT_32_SCALED(body, t, wblock, with_min, min_of, scale_of)                                 \
	static DOT_ALWAYS_INLINE void body(int64_t n, const void *wv, int64_t stride, const void *xv,  \
					       float *out, const int rows)                                  \
	{                                                                                           \
		const struct block_q8_0 *x = xv;                                                    \
		const int64_t nb = n / QK8_0, bytes = sizeof(struct wblock);                        \
		float32x4_t acc[NEON_DOT_ROWS];                                                     \
		float macc[NEON_DOT_ROWS];                                                          \
                                                                                                    \
		FOR_ROWS(r) {                                                                       \
			acc[r] = vdupq_n_f32(0.0f);                                                 \
			macc[r] = 0.0f;                                                             \
		}                                                                                   \
		for (int64_t i = 0; i < nb; i++) {                                                  \
			const int8x16_t x0 = vld1q_s8(x[i].qs), x1 = vld1q_s8(x[i].qs + 16);        \
			const float dx = f16_to_f32(x[i].d);                                        \
			const float xs = with_min ? dx * (float)(vaddlvq_s8(x0) + vaddlvq_s8(x1)) : 0.0f; \
                                                                                                    \
			if (i % 8 == 0)                                                             \
				dot_prefetch_rows(wv, stride, rows, nb * bytes, i * bytes, 8 * (int)bytes); \
			FOR_ROWS(r) {                                                               \
				const struct wblock *w = (const struct wblock *)dot_row_at(wv, stride, r) + i; \
                                                                                                    \
				acc[r] = vfmaq_n_f32(acc[r], vcvtq_f32_s32(row_##t(w, x0, x1)),     \
						     scale_of(w) * dx);                             \
				if (with_min)                                                       \
					macc[r] += min_of(w) * xs;                                  \
			}                                                                           \
		}                                                                                   \
		FOR_ROWS(r)                                                                         \
			out[r] = vaddvq_f32(acc[r]) + macc[r];                                      \
	}

/* The formats whose block scale is the f16 d. */
#define NEON_DEFINE_DOT_32(body, t, wblock, with_min, min_of) \
	NEON_DEFINE_DOT_32_SCALED(body, t, wblock, with_min, min_of, F16_D)

#endif
