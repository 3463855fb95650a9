/* Scalar conversions between f32 and the 16-bit floats (IEEE binary16 and
 * bfloat16), in portable C on bit patterns: no F16C, results unaffected by
 * FTZ/DAZ, and branch-free so that gcc vectorises the row loops over them.
 *
 * Narrowing rounds to nearest, ties to even; NaN stays NaN (quieted, top
 * payload bits kept); f16 gets correct subnormals and overflows to ±inf.
 * Both directions of f16 equal F16C's conversions for every input (checked
 * exhaustively). bf16 narrowing is ggml's GGML_FP32_TO_BF16, bit for bit.
 */
#ifndef GLLMK_CPU_FP16_H
#define GLLMK_CPU_FP16_H

#include <stdint.h>
#include <string.h>

static inline uint32_t fp_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float fp_from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* mxfp4's E8M0 block scale as ggml applies it (ggml_e8m0_to_fp32_half):
 * half of 2^(e − 127), the code book being doubled; e < 2 subnormal. */
static inline float e8m0_half_to_f32(uint8_t e)
{
	return fp_from_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* Branch-free so that row loops vectorise: the exponent is rebiased in
 * place; inf/NaN get the rest of the f32 exponent range (a NaN comes out
 * quiet, as F16C and AArch64 convert it); subnormals are
 * renormalised by an exact float subtraction (m·2^-24, a normal f32, so
 * FTZ/DAZ cannot touch it). */
static inline float f16_to_f32(uint16_t h)
{
	const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	const uint32_t em = (uint32_t)(h & 0x7fff) << 13;
	const uint32_t exp = em & 0x0f800000;
	/* all-ones masks rather than branches */
	const uint32_t special = 0u - (uint32_t)(exp == 0x0f800000);
	const uint32_t tiny = 0u - (uint32_t)(exp == 0);
	const uint32_t quiet = (0u - (uint32_t)((em & 0x7fe000) != 0)) & 0x400000;
	const uint32_t normal = (em + ((uint32_t)(127 - 15) << 23)) | (special & ((uint32_t)(128 - 16) << 23 | quiet));
	const float sub = fp_from_bits(em + (113u << 23)) - fp_from_bits(113u << 23);

	return fp_from_bits(sign | (tiny & fp_bits(sub)) | (~tiny & normal));
}

/* Branch-free as well. Normal results: rebias and round the 13 dropped
 * bits to nearest even with an integer add (a carry may bump the exponent,
 * up to inf, where it is clamped). Subnormal results: adding 0.5 puts the
 * value's 2^-24 units in the low mantissa bits, rounded by the FPU (to
 * nearest even in the default mode; an f32 subnormal input is 0 either way). */
static inline uint16_t f32_to_f16(float f)
{
	const uint32_t x = fp_bits(f);
	const uint32_t sign = (x >> 16) & 0x8000;
	const uint32_t a = x & 0x7fffffff;
	const uint32_t rounded = (a + ((uint32_t)(15 - 127) << 23) + 0xfff + ((a >> 13) & 1)) >> 13;
	const uint32_t over = 0u - (uint32_t)(rounded >= 0x7c00);
	const uint32_t normal = (over & 0x7c00) | (~over & rounded);
	const uint32_t sub = fp_bits(fp_from_bits(a) + 0.5f) - 0x3f000000;
	const uint32_t nan = 0x7e00 | ((a >> 13) & 0x3ff);
	/* all-ones masks rather than branches, so that row loops vectorise */
	const uint32_t is_nan = 0u - (uint32_t)(a > 0x7f800000);
	const uint32_t is_normal = 0u - (uint32_t)(a >= 0x38800000);
	const uint32_t finite = (is_normal & normal) | (~is_normal & sub);

	return (uint16_t)(sign | (is_nan & nan) | (~is_nan & finite));
}

static inline float bf16_to_f32(uint16_t h)
{
	return fp_from_bits((uint32_t)h << 16);
}

static inline uint16_t f32_to_bf16(float f)
{
	uint32_t x = fp_bits(f);

	if ((x & 0x7fffffff) > 0x7f800000)      /* NaN: keep it, force quiet */
		return (uint16_t)((x >> 16) | 64);
	return (uint16_t)((x + (0x7fff + ((x >> 16) & 1))) >> 16);
}

#endif
