/* dq(row, e): element e of a row of dtype WTYPE that starts at byte `row`
 * of buffer QB, decoded to f32 with ggml's formulas and operation order
 * (SPEC/QUANT.md), so dequantization matches ggml's to the bit. `precise`
 * keeps the compiler from fusing d*q - m into an FMA that ggml does not do.
 *
 * The including shader defines WTYPE (dtypes.glsl), WNAME (its name, as
 * DT_<NAME>) and QB (a buffer). With CODEBOOK_SHARED it calls
 * codebook_load() at the start of main, in uniform control flow: the
 * i-quants' codebook is then read from shared memory, else from the
 * codebook buffer (binding 6, codebooks.h) that the host binds.
 */
#include "dtypes.glsl"

#if WTYPE == DT_IQ4_NL || WTYPE == DT_IQ4_XS
const int iq4nl_values[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
#endif

/* QK (elements per block) and BLOCK_BYTES of WTYPE from abi/gllmk_dtypes.def
 * (through gllmk_dtype_ids.h); the build passes WTYPE's name as -DWNAME. */
#define DT_CAT3(a, b, c) a##b##c
#define DT_FIELD(name, field) DT_CAT3(DT_, name, field)
#define QK uint(DT_FIELD(WNAME, _ELEMS))
#define BLOCK_BYTES uint(DT_FIELD(WNAME, _BYTES))

/* ---- codebooks of the i-quants (codebooks.h: a buffer at binding 6)
 *
 * codebook(i) is grid entry i as the decoders take it: an 8-value entry
 * (iq2_xxs, iq2_xs, iq2_s: bytes 0x08, 0x19, 0x2b; iq1_s / iq1_m: int8 -1,
 * 0, 1) as a 16-bit code, 2 bits a value (value j in bits 2j, 2j + 1); a
 * 4-value entry (iq3_xxs, iq3_s: bytes 0x01 .. 0x3e) as its 32-bit word.
 * With CODEBOOK_SHARED the workgroup first copies the codes to shared
 * memory, two a word: at most 4 KiB (iq1_s, 2048 entries).
 */
#include "codebooks.h"

/* iq2: byte >> 4 is 0, 1, 2 for 0x08, 0x19, 0x2b. */
#define IQ2_CODE4(w) ((((w) >> 4) & 3u) | (((w) >> 10) & 0xCu) | (((w) >> 16) & 0x30u) | (((w) >> 22) & 0xC0u))
#define IQ2_CODE(lo, hi) (IQ2_CODE4(lo) | (IQ2_CODE4(hi) << 8))
/* iq1: int8 v + 1 is 0, 1, 2 for -1, 0, 1 (carries leave the 2 bits alone). */
#define IQ1_C(w, k) (((((w) >> (8u * k)) + 1u) & 3u) << (2u * k))
#define IQ1_CODE4(w) (IQ1_C(w, 0u) | IQ1_C(w, 1u) | IQ1_C(w, 2u) | IQ1_C(w, 3u))
#define IQ1_CODE(lo, hi) (IQ1_CODE4(lo) | (IQ1_CODE4(hi) << 8))

#if WTYPE == DT_IQ2_XXS
#define CB_AT VK_CB_IQ2XXS
#define CB_LEN GLLMK_IQ2XXS_GRID_LEN
#define CB_CODE IQ2_CODE
#elif WTYPE == DT_IQ2_XS
#define CB_AT VK_CB_IQ2XS
#define CB_LEN GLLMK_IQ2XS_GRID_LEN
#define CB_CODE IQ2_CODE
#elif WTYPE == DT_IQ2_S
#define CB_AT VK_CB_IQ2S
#define CB_LEN GLLMK_IQ2S_GRID_LEN
#define CB_CODE IQ2_CODE
#elif WTYPE == DT_IQ1_S || WTYPE == DT_IQ1_M
#define CB_AT VK_CB_IQ1S
#define CB_LEN GLLMK_IQ1S_GRID_LEN
#define CB_CODE IQ1_CODE
#elif WTYPE == DT_IQ3_XXS
#define CB_AT VK_CB_IQ3XXS
#define CB_LEN GLLMK_IQ3XXS_GRID_LEN
#elif WTYPE == DT_IQ3_S
#define CB_AT VK_CB_IQ3S
#define CB_LEN GLLMK_IQ3S_GRID_LEN
#endif

#ifdef CB_LEN
/* Entry i, read from the buffer. */
uint codebook_global(uint i)
{
#ifdef CB_CODE
	return CB_CODE(b6.d[CB_AT + 2u * i], b6.d[CB_AT + 2u * i + 1u]);
#else
	return b6.d[CB_AT + i];
#endif
}
#endif

#if defined(CB_LEN) && defined(CODEBOOK_SHARED)
#ifdef CB_CODE
shared uint codebook_shared[CB_LEN / 2]; /* two 16-bit codes a word */
#else
shared uint codebook_shared[CB_LEN];
#endif

/* Invocation t of n copies its share of the codebook; every invocation
 * of the workgroup calls it. */
void codebook_load(uint t, uint n)
{
#ifdef CB_CODE
	for (uint i = t; i < CB_LEN / 2; i += n)
		codebook_shared[i] = codebook_global(2u * i) | (codebook_global(2u * i + 1u) << 16);
#else
	for (uint i = t; i < CB_LEN; i += n)
		codebook_shared[i] = codebook_global(i);
#endif
	barrier();
}

uint codebook(uint i)
{
#ifdef CB_CODE
	return (codebook_shared[i >> 1] >> ((i & 1u) << 4)) & 0xFFFFu;
#else
	return codebook_shared[i];
#endif
}
#else
void codebook_load(uint t, uint n)
{
}

#ifdef CB_LEN
uint codebook(uint i)
{
	return codebook_global(i);
}
#endif
#endif

/* Bytes of a 32-bit word as integers, low first. */
uvec4 bytes4(uint w)
{
	return uvec4(w & 0xFFu, (w >> 8) & 0xFFu, (w >> 16) & 0xFFu, w >> 24);
}

int sext8(uint v)
{
	return int(v << 24) >> 24;
}

/* q4_K / q5_K: 6-bit scale and min j of the 12-byte field at s. */
void scale_min_k4(uint s, uint j, out uint sc, out uint mn)
{
	if (j < 4u) {
		sc = LD8(QB, s + j) & 63u;
		mn = LD8(QB, s + j + 4u) & 63u;
	} else {
		sc = (LD8(QB, s + j + 4u) & 0xFu) | ((LD8(QB, s + j - 4u) >> 6) << 4);
		mn = (LD8(QB, s + j + 4u) >> 4) | ((LD8(QB, s + j) >> 6) << 4);
	}
}

/* ---- the formats of ABI 1.1: groups of 8 elements
 *
 * Each decodes group g (elements 8g .. 8g + 7 of the block at byte b) to a
 * scale d and eight exact values v, and y = d * v is ggml's result to the
 * bit: ggml's d * grid * (+-1) equals d * (+-grid) (rounding is symmetric),
 * and its scales (d * (0.5 + s) * 0.25, d * (2s + 1), ...) are computed
 * here in its order. dq() takes one element of a group, matvec's unit
 * decoders whole groups.
 */
#if WTYPE == DT_IQ2_XXS || WTYPE == DT_IQ2_XS || WTYPE == DT_IQ2_S || WTYPE == DT_IQ3_XXS || \
	WTYPE == DT_IQ3_S || WTYPE == DT_IQ1_S || WTYPE == DT_IQ1_M || WTYPE == DT_TQ1_0 || WTYPE == DT_TQ2_0 || \
	WTYPE == DT_MXFP4
#define DQ_GROUPS

#ifdef CB_LEN /* the i-quants */
/* Four magnitudes m with the sign bits s (bit j negates m[j]). */
vec4 signed4(uvec4 m, uint s)
{
	bvec4 neg = notEqual((uvec4(s) >> uvec4(0u, 1u, 2u, 3u)) & 1u, uvec4(0u));
	vec4 v = vec4(m);
	return mix(v, -v, neg);
}

/* The 2-bit fields of an 8-bit code, low first. */
uvec4 codes4(uint c)
{
	return (uvec4(c) >> uvec4(0u, 2u, 4u, 6u)) & 3u;
}

/* iq2: the grid bytes of four codes (0x08, 0x19, 0x2b). */
uvec4 iq2_bytes(uint c)
{
	return (uvec4(0x2B1908u) >> (8u * codes4(c))) & 0xFFu;
}

/* ggml's ksigns_iq2xs: 7 sign bits and an 8th that makes their count
 * even (the table in quant_grids.h, computed). */
uint ksigns(uint i)
{
	return i | ((uint(bitCount(i)) & 1u) << 7);
}

/* iq2_xxs, iq2_xs, iq2_s: grid entry `entry`, sign byte s. */
void iq2_group(uint entry, uint s, out vec4 lo, out vec4 hi)
{
	uint c = codebook(entry);
	lo = signed4(iq2_bytes(c), s);
	hi = signed4(iq2_bytes(c >> 8), s >> 4);
}

/* iq3_xxs, iq3_s: grid entries e1 (values 0..3) and e2 (4..7), sign byte s. */
void iq3_group(uint e1, uint e2, uint s, out vec4 lo, out vec4 hi)
{
	lo = signed4(bytes4(codebook(e1)), s);
	hi = signed4(bytes4(codebook(e2)), s >> 4);
}

/* iq1_s, iq1_m: grid entry `entry` (-1, 0, 1), each value + delta. */
void iq1_group(uint entry, float delta, out vec4 lo, out vec4 hi)
{
	uint c = codebook(entry);
	lo = vec4(ivec4(codes4(c)) - 1) + delta;
	hi = vec4(ivec4(codes4(c >> 8)) - 1) + delta;
}
#endif

#if WTYPE == DT_TQ1_0 || WTYPE == DT_TQ2_0 || WTYPE == DT_MXFP4
/* Formats whose elements decode on their own (one scale a block). */
#define DQ_ELEMS
#if WTYPE == DT_TQ1_0
const uint pow3[5] = uint[5](1u, 3u, 9u, 27u, 81u);

/* tq1_0: 5 trits in each of qs[0..47] (bytes 0..31 for elements 0..159,
 * 32..47 for 160..239), 4 in each of qh[0..3] (240..255); trit n of a byte
 * is the top of 3 * (byte * 3^n mod 256) >> 8. */
float elem_value(uint b, uint i)
{
	uint n, at;
	if (i < 160u) {
		n = i / 32u;
		at = i % 32u;
	} else if (i < 240u) {
		n = (i - 160u) / 16u;
		at = 32u + (i - 160u) % 16u;
	} else {
		n = (i - 240u) / 4u;
		at = 48u + (i - 240u) % 4u;
	}
	uint q = (LD8(QB, b + at) * pow3[n]) & 0xFFu;
	return float(int((q * 3u) >> 8) - 1);
}

float block_scale(uint b)
{
	return h2f(LD16(QB, b + 52u));
}
#elif WTYPE == DT_TQ2_0
/* tq2_0: 2 bits an element; 32-byte chunks of 128 elements, bits 2l of
 * byte m hold element 32l + m of the chunk; value q - 1. */
float elem_value(uint b, uint i)
{
	uint q = LD8(QB, b + 32u * (i / 128u) + i % 32u) >> (2u * ((i % 128u) / 32u));
	return float(int(q & 3u) - 1);
}

float block_scale(uint b)
{
	return h2f(LD16(QB, b + 64u));
}
#else
const int mxfp4_values[16] = int[16](GLLMK_KVALUES_MXFP4(int));

/* mxfp4: E2M1 nibbles (doubled, ggml's kvalues_mxfp4), element i < 16 in
 * the low nibble of qs[i], i >= 16 in the high one of qs[i - 16]. */
float elem_value(uint b, uint i)
{
	uint q = (LD8(QB, b + 1u + i % 16u) >> (4u * (i / 16u))) & 0xFu;
	return float(mxfp4_values[q]);
}

/* ggml_e8m0_to_fp32_half: 2^(e - 128), subnormal below e = 2 (a device
 * that flushes subnormals gives 0 there, as it would for the product). */
float block_scale(uint b)
{
	uint e = LD8(QB, b);
	return uintBitsToFloat(e < 2u ? 0x00200000u << e : (e - 1u) << 23);
}
#endif

void dq_group(uint b, uint g, out float d, out vec4 lo, out vec4 hi)
{
	d = block_scale(b);
	uint i = 8u * g;
	lo = vec4(elem_value(b, i), elem_value(b, i + 1u), elem_value(b, i + 2u), elem_value(b, i + 3u));
	hi = vec4(elem_value(b, i + 4u), elem_value(b, i + 5u), elem_value(b, i + 6u), elem_value(b, i + 7u));
}
#else
void dq_group(uint b, uint g, out float d, out vec4 lo, out vec4 hi)
{
	uint ib = g / 4u, l = g % 4u; /* 32-element sub-block, its group */
#if WTYPE == DT_IQ2_XXS
	/* sub-block: 4 grid bytes, then 4 x 7 sign bits and a 4-bit scale */
	uint a = b + 2u + 8u * ib;
	uint aux = LD32H(QB, a + 4u);
	d = h2f(LD16(QB, b)) * (0.5 + float(aux >> 28)) * 0.25;
	iq2_group(LD8(QB, a + l), ksigns((aux >> (7u * l)) & 127u), lo, hi);
#elif WTYPE == DT_IQ2_XS
	/* qs[g]: 9-bit grid entry, 7-bit sign index; a 4-bit scale per 2 groups */
	uint q = LD16(QB, b + 2u + 2u * g);
	uint sc = (LD8(QB, b + 66u + ib) >> (4u * (l / 2u))) & 0xFu;
	d = h2f(LD16(QB, b)) * (0.5 + float(sc)) * 0.25;
	iq2_group(q & 511u, ksigns(q >> 9), lo, hi);
#elif WTYPE == DT_IQ2_S
	/* qs[g] + 2 bits of qh[ib]: 10-bit grid entry; sign byte qs[32 + g] */
	uint entry = LD8(QB, b + 2u + g) | ((LD8(QB, b + 66u + ib) << (8u - 2u * l)) & 0x300u);
	uint sc = (LD8(QB, b + 74u + ib) >> (4u * (l / 2u))) & 0xFu;
	d = h2f(LD16(QB, b)) * (0.5 + float(sc)) * 0.25;
	iq2_group(entry, LD8(QB, b + 34u + g), lo, hi);
#elif WTYPE == DT_IQ3_XXS
	/* qs[2g], qs[2g + 1]: grid entries; the sub-block's word at 66 + 4 ib:
	 * 4 x 7 sign bits and a 4-bit scale */
	uint q = LD16(QB, b + 2u + 2u * g);
	uint aux = LD32H(QB, b + 66u + 4u * ib);
	d = h2f(LD16(QB, b)) * (0.5 + float(aux >> 28)) * 0.5;
	iq3_group(q & 0xFFu, q >> 8, ksigns((aux >> (7u * l)) & 127u), lo, hi);
#elif WTYPE == DT_IQ3_S
	/* qs[2g], qs[2g + 1] + bits 2l, 2l + 1 of qh[ib]: 9-bit entries;
	 * sign byte signs[g]; a 4-bit scale per sub-block */
	uint q = LD16(QB, b + 2u + 2u * g);
	uint qh = LD8(QB, b + 66u + ib);
	uint sc = (LD8(QB, b + 106u + ib / 2u) >> (4u * (ib % 2u))) & 0xFu;
	d = h2f(LD16(QB, b)) * float(1u + 2u * sc);
	iq3_group((q & 0xFFu) | ((qh << (8u - 2u * l)) & 256u), (q >> 8) | ((qh << (7u - 2u * l)) & 256u),
		  LD8(QB, b + 74u + g), lo, hi);
#elif WTYPE == DT_IQ1_S
	/* qs[g] + 3 bits of qh[ib]: 11-bit entry; qh[ib] bits 12..14 the
	 * scale, bit 15 the delta's sign */
	uint qh = LD16(QB, b + 34u + 2u * ib);
	d = h2f(LD16(QB, b)) * float(2u * ((qh >> 12) & 7u) + 1u);
	float delta = (qh & 0x8000u) != 0u ? -GLLMK_IQ1_DELTA : GLLMK_IQ1_DELTA;
	iq1_group(LD8(QB, b + 2u + g) | (((qh >> (3u * l)) & 7u) << 8), delta, lo, hi);
#elif WTYPE == DT_IQ1_M
	/* qs[g] + a nibble of qh[2 ib + l / 2]: 3 bits of entry, the delta's
	 * sign; 3-bit scales in the 16-bit words sc[0..3] (bytes 48..55),
	 * whose top nibbles form the f16 super-scale */
	uint s01 = LD32H(QB, b + 48u), s23 = LD32H(QB, b + 52u);
	uint dh = ((s01 & 0xFFFFu) >> 12) | ((s01 >> 24) & 0xF0u) | (((s23 & 0xFFFFu) >> 4) & 0xF00u) |
		  ((s23 >> 16) & 0xF000u);
	/* sc[ib / 2], bits 6 (ib % 2) ..: the sub-block's two scales */
	uint sc = LD16(QB, b + 48u + 2u * (ib / 2u));
	d = h2f(dh) * float(2u * ((sc >> (6u * (ib % 2u) + 3u * (l / 2u))) & 7u) + 1u);
	uint nib = LD8(QB, b + 32u + 2u * ib + l / 2u) >> (4u * (l % 2u));
	float delta = (nib & 8u) != 0u ? -GLLMK_IQ1_DELTA : GLLMK_IQ1_DELTA;
	iq1_group(LD8(QB, b + g) | ((nib & 7u) << 8), delta, lo, hi);
#endif
}
#endif
#endif

float dq(uint row, uint e)
{
#if WTYPE == DT_F32
	return LDF(QB, row + 4u * e);
#elif WTYPE == DT_F16
	return h2f(LD16(QB, row + 2u * e));
#elif WTYPE == DT_BF16
	return uintBitsToFloat(LD16(QB, row + 2u * e) << 16);
#else
	uint b = row + (e / QK) * BLOCK_BYTES;
	uint i = e % QK;
#if WTYPE == DT_Q4_0 || WTYPE == DT_IQ4_NL
	float d = h2f(LD16(QB, b));
	uint q = LD8(QB, b + 2u + (i & 15u));
	q = i < 16u ? q & 0xFu : q >> 4;
#if WTYPE == DT_Q4_0
	return float(int(q) - 8) * d;
#else
	return d * float(iq4nl_values[q]);
#endif
#elif WTYPE == DT_Q4_1
	float d = h2f(LD16(QB, b));
	float m = h2f(LD16(QB, b + 2u));
	uint q = LD8(QB, b + 4u + (i & 15u));
	q = i < 16u ? q & 0xFu : q >> 4;
	precise float y = float(q) * d + m;
	return y;
#elif WTYPE == DT_Q5_0 || WTYPE == DT_Q5_1
#if WTYPE == DT_Q5_0
	uint qh_at = b + 2u;
#else
	uint qh_at = b + 4u;
#endif
	float d = h2f(LD16(QB, b));
	uint qh = LD32H(QB, qh_at);
	uint q = LD8(QB, qh_at + 4u + (i & 15u));
	q = (i < 16u ? q & 0xFu : q >> 4) | (((qh >> i) & 1u) << 4);
#if WTYPE == DT_Q5_0
	return float(int(q) - 16) * d;
#else
	float m = h2f(LD16(QB, b + 2u));
	precise float y = float(q) * d + m;
	return y;
#endif
#elif WTYPE == DT_Q8_0
	float d = h2f(LD16(QB, b));
	return float(sext8(LD8(QB, b + 2u + i))) * d;
#elif WTYPE == DT_Q2_K
	float d = h2f(LD16(QB, b + 80u));
	float dmin = h2f(LD16(QB, b + 82u));
	uint n = i / 128u, r = i % 128u, j = r / 32u, l = r % 32u;
	uint sc = LD8(QB, b + n * 8u + j * 2u + l / 16u);
	uint q = (LD8(QB, b + 16u + n * 32u + l) >> (2u * j)) & 3u;
	float dl = d * float(sc & 0xFu);
	float ml = dmin * float(sc >> 4);
	precise float y = dl * float(q) - ml;
	return y;
#elif WTYPE == DT_Q3_K
	float d = h2f(LD16(QB, b + 108u));
	uint n = i / 128u, r = i % 128u, j = r / 32u, l = r % 32u;
	uint is = n * 8u + j * 2u + l / 16u;
	uint lo = is < 8u ? LD8(QB, b + 96u + is) & 0xFu : LD8(QB, b + 96u + is - 8u) >> 4;
	uint hi = (LD8(QB, b + 104u + (is % 4u)) >> (2u * (is / 4u))) & 3u;
	int sc = int(lo | (hi << 4)) - 32;
	uint q = (LD8(QB, b + 32u + n * 32u + l) >> (2u * j)) & 3u;
	bool hbit = (LD8(QB, b + l) & (1u << (n * 4u + j))) != 0u;
	float dl = d * float(sc);
	return dl * float(int(q) - (hbit ? 0 : 4));
#elif WTYPE == DT_Q4_K || WTYPE == DT_Q5_K
	float d = h2f(LD16(QB, b));
	float dmin = h2f(LD16(QB, b + 2u));
	uint g = i / 64u, r = i % 64u, sub = r / 32u, l = r % 32u;
	uint sc, mn;
	scale_min_k4(b + 4u, 2u * g + sub, sc, mn);
#if WTYPE == DT_Q4_K
	uint q = LD8(QB, b + 16u + g * 32u + l);
	q = sub != 0u ? q >> 4 : q & 0xFu;
#else
	uint q = LD8(QB, b + 48u + g * 32u + l);
	q = sub != 0u ? q >> 4 : q & 0xFu;
	q += ((LD8(QB, b + 16u + l) >> (2u * g + sub)) & 1u) << 4;
#endif
	float d1 = d * float(sc);
	float m1 = dmin * float(mn);
	precise float y = d1 * float(q) - m1;
	return y;
#elif WTYPE == DT_Q6_K
	float d = h2f(LD16(QB, b + 208u));
	uint n = i / 128u, r = i % 128u, qt = r / 32u, l = r % 32u;
	int sc = sext8(LD8(QB, b + 192u + n * 8u + l / 16u + 2u * qt));
	uint ql = LD8(QB, b + n * 64u + l + (qt & 1u) * 32u);
	ql = qt >= 2u ? ql >> 4 : ql & 0xFu;
	uint qh = (LD8(QB, b + 128u + n * 32u + l) >> (2u * qt)) & 3u;
	int q = int(ql | (qh << 4)) - 32;
	precise float y = d * float(sc) * float(q);
	return y;
#elif WTYPE == DT_Q8_K
	float d = LDF(QB, b);
	return d * float(sext8(LD8(QB, b + 4u + i)));
#elif defined(DQ_ELEMS)
	return elem_value(b, i) * block_scale(b);
#elif defined(DQ_GROUPS)
	float d;
	vec4 lo, hi;
	dq_group(b, i / 8u, d, lo, hi);
	uint j = i % 8u;
	return d * (j < 4u ? lo[j] : hi[j - 4u]);
#elif WTYPE == DT_IQ4_XS
	float d = h2f(LD16(QB, b));
	uint ib = i / 32u, r = i % 32u;
	uint sh = LD16(QB, b + 2u);
	uint ls = ((LD8(QB, b + 4u + ib / 2u) >> (4u * (ib % 2u))) & 0xFu) | (((sh >> (2u * ib)) & 3u) << 4);
	float dl = d * float(int(ls) - 32);
	uint q = LD8(QB, b + 8u + ib * 16u + (r & 15u));
	q = r < 16u ? q & 0xFu : q >> 4;
	return dl * float(iq4nl_values[q]);
#endif
#endif
}
