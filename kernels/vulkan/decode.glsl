/* dq(row, e): element e of a row of dtype WTYPE that starts at byte `row`
 * of buffer QB, decoded to f32 with ggml's formulas and operation order
 * (SPEC/QUANT.md), so dequantization matches ggml's to the bit. `precise`
 * keeps the compiler from fusing d*q - m into an FMA that ggml does not do.
 *
 * The including shader defines WTYPE (dtypes.glsl) and QB (a buffer).
 */
#include "dtypes.glsl"

#if WTYPE == DT_IQ4_NL || WTYPE == DT_IQ4_XS
const int iq4nl_values[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
#endif

#if WTYPE == DT_F32 || WTYPE == DT_F16 || WTYPE == DT_BF16
#define QK 1u
#elif WTYPE >= DT_Q2_K && WTYPE <= DT_Q8_K || WTYPE == DT_IQ4_XS
#define QK 256u
#else
#define QK 32u
#endif

#if WTYPE == DT_F32
#define BLOCK_BYTES 4u
#elif WTYPE == DT_F16 || WTYPE == DT_BF16
#define BLOCK_BYTES 2u
#elif WTYPE == DT_Q4_0 || WTYPE == DT_IQ4_NL
#define BLOCK_BYTES 18u
#elif WTYPE == DT_Q4_1
#define BLOCK_BYTES 20u
#elif WTYPE == DT_Q5_0
#define BLOCK_BYTES 22u
#elif WTYPE == DT_Q5_1
#define BLOCK_BYTES 24u
#elif WTYPE == DT_Q8_0
#define BLOCK_BYTES 34u
#elif WTYPE == DT_Q2_K
#define BLOCK_BYTES 84u
#elif WTYPE == DT_Q3_K
#define BLOCK_BYTES 110u
#elif WTYPE == DT_Q4_K
#define BLOCK_BYTES 144u
#elif WTYPE == DT_Q5_K
#define BLOCK_BYTES 176u
#elif WTYPE == DT_Q6_K
#define BLOCK_BYTES 210u
#elif WTYPE == DT_Q8_K
#define BLOCK_BYTES 292u
#elif WTYPE == DT_IQ4_XS
#define BLOCK_BYTES 136u
#else
#error unknown WTYPE
#endif

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
