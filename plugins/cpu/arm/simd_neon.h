/* The AArch64 half of the f32 vector vocabulary (vf_*, simd/simd.h): the
 * primitives on AdvSIMD's float32x4_t, with the meaning the x86 ones have
 * (x86/simd_x86.h), so that one kernel source serves both. AdvSIMD is part
 * of the AArch64 base ISA: nothing here needs a -march flag.
 *
 * Where the two ISAs differ, the x86 meaning is kept:
 *   vf_max/vf_min return the second operand when either is NaN (a compare
 *   and a select; vmaxq would give NaN, vmaxnmq the number);
 *   vf_stream is a plain store (AArch64's non-temporal pair stores are a
 *   hint for scalar pairs only) and vf_sfence does nothing;
 *   vf_recip is an exact division.
 * Partial vectors go through a 4-lane buffer on the stack (a tail is at
 * most 3 elements), so nothing reads or writes past the n-th element.
 * Include simd/simd.h, not this file.
 */
#ifndef GLLMK_ARM_SIMD_NEON_H
#define GLLMK_ARM_SIMD_NEON_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#define VEC_WIDTH 4
typedef float32x4_t vf;
typedef int32x4_t vi;
typedef uint32x4_t vmask;       /* all-ones lanes */

#define vf_zero() vdupq_n_f32(0.0f)
#define vf_set1(f) vdupq_n_f32(f)
#define vf_load(p) vld1q_f32(p)
#define vf_store(p, v) vst1q_f32((p), (v))
#define vf_add(a, b) vaddq_f32((a), (b))
#define vf_sub(a, b) vsubq_f32((a), (b))
#define vf_mul(a, b) vmulq_f32((a), (b))
#define vf_div(a, b) vdivq_f32((a), (b))
#define vf_fma(a, b, c) vfmaq_f32((c), (a), (b))             /* a·b + c */
#define vf_fnma(a, b, c) vfmsq_f32((c), (a), (b))            /* c − a·b */
#define vf_fms(a, b, c) vnegq_f32(vfmsq_f32((c), (a), (b)))  /* a·b − c, one rounding */
#define vf_round(a) vrndnq_f32(a)
#define vf_and(a, b) vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)))
#define vf_or(a, b) vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)))
#define vf_xor(a, b) vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)))
#define vf_to_vi(a) vcvtq_s32_f32(a)    /* truncates, as cvttps2dq */
#define vi_add(a, b) vaddq_s32((a), (b))
#define vi_sub(a, b) vsubq_s32((a), (b))
#define vi_and(a, b) vandq_s32((a), (b))
#define vi_or(a, b) vorrq_s32((a), (b))
#define vi_set1(i) vdupq_n_s32(i)
#define vi_srai(a, n) vshrq_n_s32((a), (n))
#define vi_srli(a, n) vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(a), (n)))
#define vi_slli(a, n) vshlq_n_s32((a), (n))
#define vi_as_vf(a) vreinterpretq_f32_s32(a)
#define vf_as_vi(a) vreinterpretq_s32_f32(a)

#define vf_lt(a, b) vcltq_f32((a), (b))
#define vf_ge(a, b) vcgeq_f32((a), (b))
#define vf_unord(a, b) vmvnq_u32(vandq_u32(vceqq_f32((a), (a)), vceqq_f32((b), (b))))
#define vi_gt(a, b) vcgtq_s32((a), (b))
#define vf_select(m, a, b) vbslq_f32((m), (a), (b))
#define vf_any(m) (vmaxvq_u32(m) != 0)
#define vi_select(m, a, b) vbslq_s32((m), (a), (b))

/* a > b ? a : b and a < b ? a : b: x86's maxps/minps, NaN included. */
static inline vf vf_max(vf a, vf b)
{
	return vbslq_f32(vcgtq_f32(a, b), a, b);
}

static inline vf vf_min(vf a, vf b)
{
	return vbslq_f32(vcltq_f32(a, b), a, b);
}

static inline vmask vf_tail_mask(int64_t n)
{
	static const uint32_t lane[VEC_WIDTH] = { 0, 1, 2, 3 };

	return vcltq_u32(vld1q_u32(lane), vdupq_n_u32((uint32_t)n));
}

/* The first n (< VEC_WIDTH) elements; the other lanes hold `fill`. */
static inline vf vf_load_n_or(const float *p, int64_t n, float fill)
{
	float buf[VEC_WIDTH] = { fill, fill, fill, fill };

	return vld1q_f32(memcpy(buf, p, (size_t)n * sizeof(*p)));
}

static inline void vf_store_n(float *p, vf v, int64_t n)
{
	float buf[VEC_WIDTH];

	vst1q_f32(buf, v);
	memcpy(p, buf, (size_t)n * sizeof(*p));
}

static inline float vf_hsum(vf v)
{
	return vaddvq_f32(v);
}

static inline float vf_hmax(vf v)
{
	return vmaxvq_f32(v);
}

static inline vf vf_first_n(int64_t n, vf a, vf b)
{
	return vbslq_f32(vf_tail_mask(n), a, b);
}

static inline vf vf_swap_pairs(vf v)
{
	return vrev64q_f32(v);
}

static inline vf vf_recip(vf d)
{
	return vdivq_f32(vdupq_n_f32(1.0f), d);
}

#define vf_stream(p, v) vst1q_f32((p), (v))
#define vf_sfence() ((void)0)

/* 16-bit rows. f16: fcvtl/fcvtn widen exactly and narrow to nearest even,
 * keeping subnormals (Linux runs with FPCR.FZ clear) and quieting NaNs
 * with their top payload, as fp16.h. */
static inline uint16x4_t load_u16_n(const uint16_t *p, int64_t n)
{
	uint16_t buf[VEC_WIDTH] = { 0 };

	return vld1_u16(memcpy(buf, p, (size_t)n * sizeof(*p)));
}

static inline void store_u16_n(uint16_t *p, uint16x4_t v, int64_t n)
{
	uint16_t buf[VEC_WIDTH];

	vst1_u16(buf, v);
	memcpy(p, buf, (size_t)n * sizeof(*p));
}

#define f16_as_f32(h) vcvt_f32_f16(vreinterpret_f16_u16(h))
#define f32_as_f16(v) vreinterpret_u16_f16(vcvt_f16_f32(v))
#define vf_load_f16(p) f16_as_f32(vld1_u16(p))
#define vf_load_f16_n(p, n) f16_as_f32(load_u16_n((p), (n)))
#define vf_store_f16(p, v) vst1_u16((p), f32_as_f16(v))
#define vf_store_f16_n(p, v, n) store_u16_n((p), f32_as_f16(v), (n))

/* bf16 lanes as the low halves of 32-bit lanes and back. */
#define vi_widen_u16(p) vreinterpretq_s32_u32(vmovl_u16(vld1_u16(p)))
#define vi_widen_u16_n(p, n) vreinterpretq_s32_u32(vmovl_u16(load_u16_n((p), (n))))
#define vi_narrow_u16(p, v) vst1_u16((p), vmovn_u32(vreinterpretq_u32_s32(v)))
#define vi_narrow_u16_n(p, v, n) store_u16_n((p), vmovn_u32(vreinterpretq_u32_s32(v)), (n))

/* VEC_WIDTH (4) bytes widened to 32-bit lanes (quant blocks in attention's
 * KV): one 32-bit load (memcpy: any alignment), then two widenings. */
static inline uint8x8_t load_u8x4(const void *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	return vreinterpret_u8_u32(vdup_n_u32(w));
}

#define vi_widen_i8(p) vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(load_u8x4(p)))))
#define vi_widen_u8(p) vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(load_u8x4(p)))))
#define vi_to_vf(a) vcvtq_f32_s32(a)
/* Every lane the f16 value h (a block's scale). */
#define vf_set1_f16(h) f16_as_f32(vdup_n_u16(h))

#endif
