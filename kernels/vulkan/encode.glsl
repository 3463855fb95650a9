/* ggml's reference encoders for 32-element blocks (SPEC/OPERATORS.md,
 * "quantize" and "kv_store"), shared by quantize.comp and kv_store.comp.
 * encode_q8_0 / encode_q4_0 read 32 f32 at byte address x of binding 1 and
 * fill the block's 16-bit halves (the f16 scale first); store_halves writes
 * them at the block's 2-aligned byte address in binding 0. Needs
 * common.glsl. `precise` keeps every rounding where ggml's C has it (no
 * fused multiply-add). */

#define Q8_0_HALVES 17u /* 34 bytes */
#define Q4_0_HALVES 9u  /* 18 bytes */

/* a / b rounded to nearest even, as C's division rounds it. Vulkan lets
 * OpFDiv be 2.5 ulp off (NVIDIA's is; lavapipe's is exact), and a scale one
 * ulp off changes the block's bytes, so the quotient is computed by long
 * division of the significands. Zeros, infinities and NaNs: the native
 * division, exact for them. */
uint div_rn_significand(uint u, out int e)
{
	uint m = u & 0x7FFFFFu;
	int f = int((u >> 23) & 0xFFu);
	if (f != 0) {
		e = f;
		return m | 0x800000u;
	}
	int s = 23 - findMSB(m); /* subnormal: normalise */
	e = 1 - s;
	return m << s;
}

float div_rn(float a, float b)
{
	uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
	uint sign = (ua ^ ub) & 0x80000000u;
	if ((ua & 0x7F800000u) == 0x7F800000u || (ub & 0x7F800000u) == 0x7F800000u ||
	    (ua & 0x7FFFFFFFu) == 0u || (ub & 0x7FFFFFFFu) == 0u)
		return a / b;
	int ea, eb;
	uint ma = div_rn_significand(ua, ea), mb = div_rn_significand(ub, eb);
	int e = ea - eb + 127; /* the quotient's biased exponent */
	if (ma < mb) {
		ma <<= 1;
		e -= 1;
	}
	uint q = 0u; /* 24 significant bits and a guard bit; ma ends as the remainder */
	for (int i = 0; i < 25; i++) {
		q <<= 1;
		if (ma >= mb) {
			ma -= mb;
			q |= 1u;
		}
		ma <<= 1;
	}
	if (e > 254)
		return uintBitsToFloat(sign | 0x7F800000u);
	int sh = e >= 1 ? 1 : 2 - e; /* below the normal range: fewer bits kept */
	if (sh > 25)
		return uintBitsToFloat(sign);
	uint base = e >= 1 ? uint(e - 1) << 23 : 0u;
	uint mant = q >> sh;
	uint guard = (q >> (sh - 1)) & 1u;
	uint rest = (q & ((1u << (sh - 1)) - 1u)) | ma;
	mant += guard & ((rest != 0u ? 1u : 0u) | (mant & 1u));
	return uintBitsToFloat(sign | (base + mant)); /* a carry out of mant bumps the exponent */
}

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
	float d = div_rn(amax, 127.0);
	float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
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
	float d = div_rn(vmax, -8.0);
	float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
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
