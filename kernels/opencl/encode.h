/* ggml's reference encoders for 32-element blocks (SPEC/OPERATORS.md,
 * "quantize" and "kv_store"), shared by quant.cl (gllmk_quantize) and
 * kv_store.cl: 32 f32 at x to one block at b. Contraction is off so every
 * product rounds where ggml's C rounds it (no fused multiply-add); the
 * build asks for a correctly rounded divide. Needs common.h. */
#ifndef GLLMK_OCL_ENCODE_H
#define GLLMK_OCL_ENCODE_H

#pragma OPENCL FP_CONTRACT OFF

/* quantize_row_q8_0_ref: d = amax / 127 (f16), q = roundf(x / d). 34 bytes. */
static inline void encode_q8_0(__global const float *x, gbytes *b)
{
	float amax = 0.0f;

	for (int j = 0; j < 32; j++)
		amax = fmax(amax, fabs(x[j]));
	float d = amax / 127, id = d != 0.0f ? 1.0f / d : 0.0f;

	vstore_half_rte(d, 0, (__global half *)b);
	for (int j = 0; j < 32; j++)
		b[2 + j] = (uchar)(char)round(x[j] * id);
}

/* quantize_row_q4_0_ref: the element of largest |x| (the first on ties)
 * becomes -8, d = max / -8 (f16), q = min(15, (char)(x / d + 8.5)); byte j
 * holds element j (low nibble) and j + 16 (high). 18 bytes. */
static inline uint q4_0_nibble(float v, float id)
{
	float s = v * id;

	return (uint)min(15, (int)(char)(s + 8.5f));
}

static inline void encode_q4_0(__global const float *x, gbytes *b)
{
	float amax = 0.0f, max = 0.0f;

	for (int j = 0; j < 32; j++) {
		if (amax < fabs(x[j])) {
			amax = fabs(x[j]);
			max = x[j];
		}
	}
	float d = max / -8, id = d != 0.0f ? 1.0f / d : 0.0f;

	vstore_half_rte(d, 0, (__global half *)b);
	for (int j = 0; j < 16; j++)
		b[2 + j] = (uchar)(q4_0_nibble(x[j], id) | q4_0_nibble(x[16 + j], id) << 4);
}

#endif
