/* ggml's reference encoders for 32-element blocks (SPEC/OPERATORS.md,
 * "quantize" and "kv_store"), shared by quantize.comp and kv_store.comp.
 * encode_q8_0 / encode_q4_0 read 32 f32 at byte address x of binding 1 and
 * fill the block's 16-bit halves (the f16 scale first); store_halves writes
 * them at the block's 2-aligned byte address in binding 0. Needs
 * common.glsl. `precise` keeps every rounding where ggml's C has it (no
 * fused multiply-add). */

#define Q8_0_HALVES 17u /* 34 bytes */
#define Q4_0_HALVES 9u  /* 18 bytes */

/* roundf: half away from zero */
float round_away(float v)
{
	float t = trunc(v);
	precise float f = abs(v - t);
	return f >= 0.5 ? t + sign(v) : t;
}

/* quantize_row_q8_0_ref: d = amax / 127, q = roundf(x / d). */
void encode_q8_0(uint x, out uint h[17])
{
	float amax = 0.0;
	for (uint j = 0u; j < 32u; j++)
		amax = max(amax, abs(LDF(b1, x + 4u * j)));
	precise float d = amax / 127.0;
	precise float id = d != 0.0 ? 1.0 / d : 0.0;
	h[0] = f2h_bits(floatBitsToUint(d));
	for (uint j = 0u; j < 16u; j++) {
		precise float v0 = LDF(b1, x + 8u * j) * id;
		precise float v1 = LDF(b1, x + 8u * j + 4u) * id;
		h[1u + j] = (uint(int(round_away(v0))) & 0xFFu) | ((uint(int(round_away(v1))) & 0xFFu) << 8);
	}
}

/* quantize_row_q4_0_ref: the element of largest |x| (the first on ties)
 * becomes -8, d = max / -8, q = min(15, int(x / d + 8.5)); element j in
 * the low nibble of byte j, element j + 16 in its high nibble. */
uint q4_0_nibble(float v, float id)
{
	precise float s = v * id;
	precise float t = s + 8.5;
	return uint(min(15, int(t)));
}

void encode_q4_0(uint x, out uint h[17])
{
	float amax = 0.0, vmax = 0.0;
	for (uint j = 0u; j < 32u; j++) {
		float v = LDF(b1, x + 4u * j);
		if (amax < abs(v)) {
			amax = abs(v);
			vmax = v;
		}
	}
	precise float d = vmax / -8.0;
	precise float id = d != 0.0 ? 1.0 / d : 0.0;
	h[0] = f2h_bits(floatBitsToUint(d));
	for (uint k = 0u; k < 8u; k++) {
		uint lo = q4_0_nibble(LDF(b1, x + 8u * k), id) | (q4_0_nibble(LDF(b1, x + 64u + 8u * k), id) << 4);
		uint hi = q4_0_nibble(LDF(b1, x + 8u * k + 4u), id) | (q4_0_nibble(LDF(b1, x + 68u + 8u * k), id) << 4);
		h[1u + k] = lo | (hi << 8);
	}
	for (uint k = Q4_0_HALVES; k < 17u; k++)
		h[k] = 0u;
}

/* The first n halves of h at byte address y (2-aligned). A word wholly
 * inside the block is written plainly; one shared with a neighbouring block
 * or the bytes around a row, with masked atomics. */
void store_halves(uint y, uint h[17], uint n)
{
	uint i = 0u;
	while (i < n) {
		uint a = y + 2u * i;
		if ((a & 3u) == 0u && i + 1u < n) {
			b0.d[a >> 2] = h[i] | (h[i + 1u] << 16);
			i += 2u;
		} else {
			st16_shared(a, h[i]);
			i += 1u;
		}
	}
}
