/* Shared by every gllmk Vulkan shader.
 *
 * Every tensor is bound as a plain array of 32-bit words and addressed in
 * bytes: offsets and strides come from the host in push constants. Quant
 * blocks (18, 22, 34 bytes ...) and f16 rows are only 2-byte aligned, so
 * sub-word loads extract bits from words. This needs no 8/16-bit storage
 * feature, so the plugin runs on any Vulkan 1.1 device.
 *
 * Binding 7 is the context's status buffer: a shader that meets an index
 * out of range (get_rows ids, attention block tables) clamps it and records
 * the first offence there; the host turns it into GLLMK_E_BOUNDS at sync.
 */
#extension GL_GOOGLE_include_directive : require
/* -DSUBGROUP variants reduce with Vulkan 1.1 subgroup arithmetic; the host
 * picks them only where the device supports it in compute shaders. */
#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(std430, binding = 0) buffer Buf0 { uint d[]; } b0;
layout(std430, binding = 1) buffer Buf1 { uint d[]; } b1;
layout(std430, binding = 2) buffer Buf2 { uint d[]; } b2;
layout(std430, binding = 3) buffer Buf3 { uint d[]; } b3;
layout(std430, binding = 4) buffer Buf4 { uint d[]; } b4;
layout(std430, binding = 5) buffer Buf5 { uint d[]; } b5;
layout(std430, binding = 6) buffer Buf6 { uint d[]; } b6;
layout(std430, binding = 7) buffer StatusBuf { uint d[]; } bstatus;

/* Byte-addressed loads; a is a byte address, evaluated more than once. */
#define LD32(B, a) (B.d[(a) >> 2])
#define LDF(B, a) uintBitsToFloat(B.d[(a) >> 2])
#define STF(B, a, v) (B.d[(a) >> 2] = floatBitsToUint(v))
#define LD8(B, a) ((B.d[(a) >> 2] >> (((a) & 3u) << 3)) & 0xFFu)
#define LD16(B, a) ((B.d[(a) >> 2] >> (((a) & 2u) << 3)) & 0xFFFFu)
/* 32 bits at a 2-byte aligned address. Both words holding bytes a and a + 3
 * are loaded (the same word when a is 4-aligned, so nothing past the data is
 * read) and combined by a select: no divergent branch where neighbouring
 * lanes' blocks alternate in alignment (18/34/210-byte blocks). */
uint ld32h_join(uint a, uint lo, uint hi)
{
	return (a & 2u) == 0u ? lo : (lo >> 16) | (hi << 16);
}
#define LD32H(B, a) ld32h_join((a), B.d[(a) >> 2], B.d[((a) + 3u) >> 2])

/* Status words: [0] set once, [1] op, [2] position, [3] value, [4] limit,
 * [5] slot (status_raise_slot). */
#define STATUS_GET_ROWS 1u
#define STATUS_BLOCK_TABLE 2u  /* pos: the page */
#define STATUS_BLOCK_TABLES 3u /* attention_varlen; pos: the sequence */
#define STATUS_EXPERT_IDS 4u   /* matmul_id; pos: the token, slot: the slot */
#define STATUS_KV_SLOTS 5u     /* kv_store; pos: the token (x's row) */
void status_raise(uint op, uint pos, uint value, uint limit)
{
	if (atomicCompSwap(bstatus.d[0], 0u, 1u) == 0u) {
		bstatus.d[1] = op;
		bstatus.d[2] = pos;
		bstatus.d[3] = value;
		bstatus.d[4] = limit;
	}
}

/* The same for an offence at (row, slot) (matmul_id: token, slot): word
 * [5] holds the slot. */
void status_raise_slot(uint op, uint pos, uint slot, uint value, uint limit)
{
	if (atomicCompSwap(bstatus.d[0], 0u, 1u) == 0u) {
		bstatus.d[1] = op;
		bstatus.d[2] = pos;
		bstatus.d[3] = value;
		bstatus.d[4] = limit;
		bstatus.d[5] = slot;
	}
}

/* Workgroups are laid out 2-D (x <= 65535) by the host; this is their
 * linear index. */
uint wg_linear()
{
	return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

/* Byte address of row r of a tensor padded to 4-D [d0, d1, d2, n]. */
uint row_addr(uint r, uint d1, uint d2, uint off, uint s0, uint s1, uint s2)
{
	uint i2 = r % d2;
	uint t = r / d2;
	return off + (t / d1) * s0 + (t % d1) * s1 + i2 * s2;
}

#define NEG_INF uintBitsToFloat(0xFF800000u)

bool is_nan_bits(uint x)
{
	return (x & 0x7FFFFFFFu) > 0x7F800000u;
}

/* IEEE half <-> single on bit patterns, exact and independent of the
 * device's denormal and rounding modes. */
uint h2f_bits(uint h)
{
	uint s = (h & 0x8000u) << 16;
	uint e = (h >> 10) & 0x1Fu;
	uint m = h & 0x3FFu;

	if (e == 31u)
		return s | 0x7F800000u | (m << 13);
	if (e != 0u)
		return s | ((e + 112u) << 23) | (m << 13);
	if (m == 0u)
		return s;
	int msb = findMSB(m);
	return s | (uint(103 + msb) << 23) | ((m << uint(23 - msb)) & 0x7FFFFFu);
}

/* The same value without branches (selects only), for the decoders' hot
 * loops: a subnormal half is m · 2^-24, exact and normal in f32. */
float h2f(uint h)
{
	uint em = h & 0x7FFFu;
	uint bits = em >= 0x7C00u ? 0x7F800000u | (em << 13) : (em << 13) + 0x38000000u;
	bits = em < 0x400u ? floatBitsToUint(float(em) * 5.9604644775390625e-8) : bits;
	return uintBitsToFloat(((h & 0x8000u) << 16) | bits);
}

/* Round to nearest even; NaN stays NaN (quiet), overflow gives inf. */
uint f2h_bits(uint x)
{
	uint s = (x >> 16) & 0x8000u;
	uint a = x & 0x7FFFFFFFu;

	if (a > 0x7F800000u)
		return s | 0x7E00u | ((a >> 13) & 0x3FFu);
	if (a >= 0x477FF000u)
		return s | 0x7C00u;
	if (a >= 0x38800000u) {
		uint r = a - 0x38000000u;
		uint q = r >> 13;
		uint rem = r & 0x1FFFu;
		if (rem > 0x1000u || (rem == 0x1000u && (q & 1u) != 0u))
			q++;
		return s | q;
	}
	uint e = a >> 23;
	if (e < 102u)
		return s;
	uint m = (a & 0x7FFFFFu) | 0x800000u;
	uint shift = 126u - e;
	uint q = m >> shift;
	uint rem = m & ((1u << shift) - 1u);
	uint half_ = 1u << (shift - 1u);
	if (rem > half_ || (rem == half_ && (q & 1u) != 0u))
		q++;
	return s | q;
}

uint f2bf_bits(uint x)
{
	if (is_nan_bits(x))
		return (x >> 16) | 0x40u;
	return (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
}

/* Masked store of 16 bits at a 2-aligned byte address whose word other
 * invocations may be writing at the same time (its other half). */
void st16_shared(uint a, uint v)
{
	uint sh = (a & 2u) << 3;
	atomicAnd(b0.d[a >> 2], ~(0xFFFFu << sh));
	atomicOr(b0.d[a >> 2], (v & 0xFFFFu) << sh);
}
