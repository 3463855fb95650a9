/* Reference decoders and encoders for the conformance suite, written from
 * the GGUF/ggml block layouts (SPEC/QUANT.md). Decoding works in double:
 * every value a block encodes is a small integer times one or two f16 (or
 * f32) scales, exact in double, so the test's f32 expectation is the
 * correctly rounded value and nothing here depends on evaluation order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "quant_grids.h"
#include "ref_half.h"
#include "ref_quant.h"

/* ------------------------------------------------------------ bytes */

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* f16 and bf16 decode straight from the bits (exact; per element, so cheap
 * matters: ref_half.c's general converters go through frexp/ldexp). */
static double f16_value(uint16_t h)
{
	int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	double mag;

	if (exp == 31)
		mag = mant ? NAN : INFINITY;
	else if (exp == 0)
		mag = mant * 0x1p-24;
	else
		mag = (1024 + mant) * 0x1p-25 * (double)(1u << exp);
	return (h & 0x8000) ? -mag : mag;
}

static double rdf16(const uint8_t *p)
{
	return f16_value(rd16(p));
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* ----------------------------------------------------- one block decoders */

/* iq4_nl's and iq4_xs's non-linear 4-bit grid (ggml's kvalues_iq4nl). */
static const int8_t iq4_grid[16] = { -127, -104, -83, -65, -49, -35, -22, -10,
				     1,    13,   25,  38,  53,  69,  89,  113 };

static void dec_f32(const uint8_t *b, double *y)
{
	float f;

	memcpy(&f, b, sizeof(f));
	y[0] = f;
}

static void dec_f16(const uint8_t *b, double *y)
{
	y[0] = rdf16(b);
}

static void dec_bf16(const uint8_t *b, double *y)
{
	uint32_t u = (uint32_t)rd16(b) << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	y[0] = f;
}

/* The 32-element formats share one nibble order: byte j holds element j in
 * its low nibble and element j + 16 in its high nibble. */
static int nibble(const uint8_t *qs, int i)
{
	return i < 16 ? qs[i] & 0xf : qs[i - 16] >> 4;
}

/* q4_0: f16 d, u8 qs[16]; x = d·(q − 8) */
static void dec_q4_0(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 32; i++)
		y[i] = d * (nibble(b + 2, i) - 8);
}

/* q4_1: f16 d, f16 m, u8 qs[16]; x = d·q + m */
static void dec_q4_1(const uint8_t *b, double *y)
{
	double d = rdf16(b), m = rdf16(b + 2);

	for (int i = 0; i < 32; i++)
		y[i] = d * nibble(b + 4, i) + m;
}

/* The fifth bit of element i of q5_0/q5_1 is bit i of a little-endian u32. */
static int fifth_bit(const uint8_t *qh, int i)
{
	return (qh[i / 8] >> (i % 8)) & 1;
}

/* q5_0: f16 d, u8 qh[4], u8 qs[16]; x = d·(q − 16) */
static void dec_q5_0(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 32; i++)
		y[i] = d * ((nibble(b + 6, i) | fifth_bit(b + 2, i) << 4) - 16);
}

/* q5_1: f16 d, f16 m, u8 qh[4], u8 qs[16]; x = d·q + m */
static void dec_q5_1(const uint8_t *b, double *y)
{
	double d = rdf16(b), m = rdf16(b + 2);

	for (int i = 0; i < 32; i++)
		y[i] = d * (nibble(b + 8, i) | fifth_bit(b + 4, i) << 4) + m;
}

/* q8_0: f16 d, i8 qs[32]; x = d·q */
static void dec_q8_0(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 32; i++)
		y[i] = d * (int8_t)b[2 + i];
}

/* iq4_nl: f16 d, u8 qs[16]; x = d·grid[q] */
static void dec_iq4_nl(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 32; i++)
		y[i] = d * iq4_grid[nibble(b + 2, i)];
}

/* The 2-bit planes of q2_K and q3_K: each half of 128 elements uses 32
 * bytes of qs; element e of the half is bits 2·(e/32) of byte e % 32. */
static int crumb(const uint8_t *qs, int i)
{
	int half = i / 128, e = i % 128;

	return (qs[32 * half + e % 32] >> (2 * (e / 32))) & 3;
}

/* q2_K (84 bytes): u8 scales[16], u8 qs[64], f16 d, f16 dmin. Sub-block s
 * of 16 elements: scales[s] low nibble = scale, high nibble = min;
 * x = d·sc·q − dmin·m. */
static void dec_q2_K(const uint8_t *b, double *y)
{
	double d = rdf16(b + 80), dmin = rdf16(b + 82);

	for (int i = 0; i < 256; i++) {
		int sc = b[i / 16];

		y[i] = d * (sc & 0xf) * crumb(b + 16, i) - dmin * (sc >> 4);
	}
}

/* q3_K's 16 six-bit scales in 12 bytes: the low 4 bits of scale s are the
 * low (s < 8) or high (s >= 8) nibble of byte s % 8; the top 2 bits are
 * bits 2·(s/4) of byte 8 + s % 4. Stored with a +32 offset. */
static int q3_K_scale(const uint8_t *sc, int s)
{
	int lo = s < 8 ? sc[s] & 0xf : sc[s - 8] >> 4;
	int hi = (sc[8 + s % 4] >> (2 * (s / 4))) & 3;

	return (lo | hi << 4) - 32;
}

/* q3_K (110 bytes): u8 hmask[32], u8 qs[64], u8 scales[12], f16 d.
 * Element i: 2 low bits from qs (as q2_K), high bit = bit i/32 of
 * hmask[i % 32]; q = low − (high ? 0 : 4); x = d·scale(i/16)·q. */
static void dec_q3_K(const uint8_t *b, double *y)
{
	double d = rdf16(b + 108);

	for (int i = 0; i < 256; i++) {
		int high = (b[i % 32] >> (i / 32)) & 1;
		int q = crumb(b + 32, i) - (high ? 0 : 4);

		y[i] = d * q3_K_scale(b + 96, i / 16) * q;
	}
}

/* q4_K/q5_K's 8 six-bit (scale, min) pairs in 12 bytes: pairs 0..3 are
 * the low 6 bits of bytes j and j + 4; pairs 4..7 take their low nibbles
 * from byte j + 4 (scale low, min high) and their top 2 bits from the top
 * bits of bytes j − 4 (scale) and j (min). */
static void k4_scale_min(const uint8_t *q, int j, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 0xf) | (q[j - 4] >> 6) << 4;
		*m = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
	}
}

/* The 4-bit plane of q4_K/q5_K: each 64 elements use 32 bytes, the first
 * 32 elements in the low nibbles and the next 32 in the high nibbles. */
static int k_nibble(const uint8_t *qs, int i)
{
	int chunk = i / 64, e = i % 64;
	int byte = qs[32 * chunk + e % 32];

	return e < 32 ? byte & 0xf : byte >> 4;
}

/* q4_K (144 bytes): f16 d, f16 dmin, u8 scales[12], u8 qs[128];
 * sub-block s of 32: x = d·sc·q − dmin·m. */
static void dec_q4_K(const uint8_t *b, double *y)
{
	double d = rdf16(b), dmin = rdf16(b + 2);

	for (int i = 0; i < 256; i++) {
		int sc, m;

		k4_scale_min(b + 4, i / 32, &sc, &m);
		y[i] = d * sc * k_nibble(b + 16, i) - dmin * m;
	}
}

/* q5_K (176 bytes): f16 d, f16 dmin, u8 scales[12], u8 qh[32], u8 qs[128];
 * the fifth bit of element i is bit i/32 of qh[i % 32]. */
static void dec_q5_K(const uint8_t *b, double *y)
{
	double d = rdf16(b), dmin = rdf16(b + 2);

	for (int i = 0; i < 256; i++) {
		int sc, m;
		int q = k_nibble(b + 48, i) | ((b[16 + i % 32] >> (i / 32)) & 1) << 4;

		k4_scale_min(b + 4, i / 32, &sc, &m);
		y[i] = d * sc * q - dmin * m;
	}
}

/* q6_K (210 bytes): u8 ql[128], u8 qh[64], i8 scales[16], f16 d. In each
 * half of 128 elements (ql 64 bytes, qh 32 bytes), element e: quarter
 * g = e/32, l = e%32; low nibble of ql[l + 32·(g&1)] (high nibble for
 * g >= 2), two high bits (qh[l] >> 2g) & 3; q − 32; scale 8·half + e/16. */
static void dec_q6_K(const uint8_t *b, double *y)
{
	double d = rdf16(b + 208);

	for (int i = 0; i < 256; i++) {
		int half = i / 128, e = i % 128, g = e / 32, l = e % 32;
		int low = b[64 * half + l + 32 * (g & 1)];
		int q = ((g >= 2 ? low >> 4 : low & 0xf) | ((b[128 + 32 * half + l] >> (2 * g)) & 3) << 4) - 32;

		y[i] = d * (int8_t)b[192 + 8 * half + e / 16] * q;
	}
}

/* q8_K (292 bytes): f32 d, i8 qs[256], i16 bsums[16]; x = d·q. */
static void dec_q8_K(const uint8_t *b, double *y)
{
	float d;

	memcpy(&d, b, sizeof(d));
	for (int i = 0; i < 256; i++)
		y[i] = (double)d * (int8_t)b[4 + i];
}

/* iq4_xs (136 bytes): f16 d, u16 scales_h, u8 scales_l[4], u8 qs[128].
 * Sub-block s of 32: 6-bit scale = nibble s%2 of scales_l[s/2] | bits 2s of
 * scales_h << 4, minus 32; its 16 bytes of qs in q4_0's nibble order. */
static void dec_iq4_xs(const uint8_t *b, double *y)
{
	double d = rdf16(b);
	int scales_h = rd16(b + 2);

	for (int i = 0; i < 256; i++) {
		int s = i / 32;
		int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 0xf) | ((scales_h >> (2 * s)) & 3) << 4;

		y[i] = d * (ls - 32) * iq4_grid[nibble(b + 8 + 16 * s, i % 32)];
	}
}

/* ------------------------------------------------ the formats of ABI 1.1
 *
 * The codebooks are format data (kernels/quant_grids.h, SPEC/QUANT.md):
 * a grid entry's element j is byte j of its words, low word first. The
 * sign bytes and E2M1 values are computed here from their definitions. */

static const uint32_t iq2xxs_words[][2] = {
#define PAIR(lo, hi) { lo, hi }
	GLLMK_IQ2XXS_GRID(PAIR)
};
static const uint32_t iq2xs_words[][2] = { GLLMK_IQ2XS_GRID(PAIR) };
static const uint32_t iq2s_words[][2] = { GLLMK_IQ2S_GRID(PAIR) };
static const uint32_t iq1s_words[][2] = { GLLMK_IQ1S_GRID(PAIR) };
#undef PAIR
#define WORD(v) v
static const uint32_t iq3xxs_words[] = { GLLMK_IQ3XXS_GRID(WORD) };
static const uint32_t iq3s_words[] = { GLLMK_IQ3S_GRID(WORD) };
#undef WORD

/* Element j (0..7) of an 8-byte grid entry, unsigned. */
static int grid8(const uint32_t (*grid)[2], int idx, int j)
{
	return (grid[idx][j / 4] >> (8 * (j % 4))) & 0xff;
}

/* Element j (0..3) of a 4-byte grid entry. */
static int grid4(const uint32_t *grid, int idx, int j)
{
	return (grid[idx] >> (8 * j)) & 0xff;
}

/* iq1s grid values are int8 in {-1, 0, 1}. */
static int grid_iq1s(int idx, int j)
{
	return (int8_t)grid8(iq1s_words, idx, j);
}

/* −1 or 1 for bit j of a sign byte. */
static int sign_bit(int byte, int j)
{
	return (byte >> j) & 1 ? -1 : 1;
}

/* The sign byte of a 7-bit sign index: the 7 bits, and bit 7 set when
 * they have an odd count of ones (an even count of minus signs). */
static int sign_byte(int idx)
{
	int ones = 0;

	for (int b = 0; b < 7; b++)
		ones += (idx >> b) & 1;
	return idx | (ones & 1) << 7;
}

static uint32_t rd32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* iq2_xxs (66 bytes): f16 d, then per 32 elements 8 bytes: 4 grid indices
 * (one per 8 elements), a u32 of four 7-bit sign indices (bits 7l) and a
 * 4-bit scale s (bits 28..31); x = d·(0.5 + s)/4 · grid · sign. */
static void dec_iq2_xxs(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 256; i++) {
		const uint8_t *q = b + 2 + 8 * (i / 32);
		uint32_t aux = rd32(q + 4);
		int l = i % 32 / 8, j = i % 8;

		y[i] = d * (0.5 + (aux >> 28)) / 4 * grid8(iq2xxs_words, q[l], j) *
		       sign_bit(sign_byte((aux >> (7 * l)) & 127), j);
	}
}

/* iq2_xs (74 bytes): f16 d, u16 qs[32] (9-bit grid index, 7-bit sign
 * index per 8 elements), u8 scales[8] (4 bits per 16 elements);
 * x = d·(0.5 + s)/4 · grid · sign. */
static void dec_iq2_xs(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 256; i++) {
		int v = rd16(b + 2 + 2 * (i / 8)), s = (b[66 + i / 32] >> (4 * (i % 32 / 16))) & 0xf;

		y[i] = d * (0.5 + s) / 4 * grid8(iq2xs_words, v & 511, i % 8) * sign_bit(sign_byte(v >> 9), i % 8);
	}
}

/* iq2_s (82 bytes): f16 d, u8 qs[32] (low 8 bits of the grid index per 8
 * elements), u8 signs[32] (a sign byte per 8), u8 qh[8] (2 high index
 * bits per 8: bits 2l of qh[i/32]), u8 scales[8] as iq2_xs. */
static void dec_iq2_s(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 256; i++) {
		int g = i / 8, l = i % 32 / 8, s = (b[74 + i / 32] >> (4 * (i % 32 / 16))) & 0xf;
		int idx = b[2 + g] | ((b[66 + i / 32] >> (2 * l)) & 3) << 8;

		y[i] = d * (0.5 + s) / 4 * grid8(iq2s_words, idx, i % 8) * sign_bit(b[34 + g], i % 8);
	}
}

/* iq3_xxs (98 bytes): f16 d, u8 qs[64] (a grid index per 4 elements),
 * then per 32 elements a u32 as iq2_xxs's; x = d·(0.5 + s)/2 · grid · sign. */
static void dec_iq3_xxs(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 256; i++) {
		uint32_t aux = rd32(b + 66 + 4 * (i / 32));
		int l = i % 32 / 8;

		y[i] = d * (0.5 + (aux >> 28)) / 2 * grid4(iq3xxs_words, b[2 + i / 4], i % 4) *
		       sign_bit(sign_byte((aux >> (7 * l)) & 127), i % 8);
	}
}

/* iq3_s (110 bytes): f16 d, u8 qs[64] (low 8 bits of a grid index per 4
 * elements), u8 qh[8] (the 9th bits: bit k of qh[i/32] for the k-th 4 of
 * the 32), u8 signs[32] (a sign byte per 8), u8 scales[4] (4 bits per 32);
 * x = d·(1 + 2s) · grid · sign. */
static void dec_iq3_s(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 256; i++) {
		int ib = i / 32, k = i % 32 / 4, s = (b[106 + ib / 2] >> (4 * (ib % 2))) & 0xf;
		int idx = b[2 + i / 4] | ((b[66 + ib] >> k) & 1) << 8;

		y[i] = d * (1 + 2 * s) * grid4(iq3s_words, idx, i % 4) * sign_bit(b[74 + i / 8], i % 8);
	}
}

/* iq1_s (50 bytes): f16 d, u8 qs[32] (low 8 bits of an 11-bit grid index
 * per 8 elements), u16 qh[8] per 32: bits 3l..3l+2 the index's high bits,
 * 12..14 the scale s, 15 the sign of the offset; x = d·(2s + 1)·(g ± 1/8). */
static void dec_iq1_s(const uint8_t *b, double *y)
{
	double d = rdf16(b);

	for (int i = 0; i < 256; i++) {
		int h = rd16(b + 34 + 2 * (i / 32)), l = i % 32 / 8;
		int idx = b[2 + i / 8] | ((h >> (3 * l)) & 7) << 8;
		double delta = h & 0x8000 ? -GLLMK_IQ1_DELTA : GLLMK_IQ1_DELTA;

		y[i] = d * (2 * ((h >> 12) & 7) + 1) * (grid_iq1s(idx, i % 8) + delta);
	}
}

/* iq1_m (56 bytes): u8 qs[32] (low index bits as iq1_s), u8 qh[16] (a
 * nibble per 8 elements: 3 high index bits, then the offset's sign), u8
 * scales[8] read as four u16: 3-bit scales per 16 elements (bits 6·(ib%2)
 * + 3·half of u16 ib/2), and the f16 d made of the four top nibbles. */
static void dec_iq1_m(const uint8_t *b, double *y)
{
	int sc[4];

	for (int k = 0; k < 4; k++)
		sc[k] = rd16(b + 48 + 2 * k);

	double d = f16_value((uint16_t)(sc[0] >> 12 | (sc[1] >> 12) << 4 | (sc[2] >> 12) << 8 | (sc[3] >> 12) << 12));

	for (int i = 0; i < 256; i++) {
		int ib = i / 32, half = i % 32 / 16, g = i / 8;
		int nib = (b[32 + g / 2] >> (4 * (g % 2))) & 0xf;
		int s = (sc[ib / 2] >> (6 * (ib % 2) + 3 * half)) & 7;
		double delta = nib & 8 ? -GLLMK_IQ1_DELTA : GLLMK_IQ1_DELTA;

		y[i] = d * (2 * s + 1) * (grid_iq1s(b[g] | (nib & 7) << 8, i % 8) + delta);
	}
}

/* Trit n (0 first, the most significant) of a tq1_0 byte: the byte is
 * 256ths of 3^5, so its trits are those of floor(byte·243/256) in base 3. */
static int trit(int byte, int n)
{
	int v = byte * 243 / 256;

	for (int k = n; k < 4; k++)
		v /= 3;
	return v % 3;
}

/* tq1_0 (54 bytes): u8 qs[48], u8 qh[4], f16 d. Elements 0..159: trit
 * e/32 of qs[e%32]; 160..239: trit (e−160)/16 of qs[32 + (e−160)%16];
 * 240..255: trit (e−240)/4 of qh[(e−240)%4]; x = d·(trit − 1). */
static void dec_tq1_0(const uint8_t *b, double *y)
{
	double d = rdf16(b + 52);

	for (int i = 0; i < 256; i++) {
		int t = i < 160 ? trit(b[i % 32], i / 32)
			: i < 240 ? trit(b[32 + (i - 160) % 16], (i - 160) / 16)
				  : trit(b[48 + (i - 240) % 4], (i - 240) / 4);

		y[i] = d * (t - 1);
	}
}

/* tq2_0 (66 bytes): u8 qs[64], f16 d; element i is bits 2·((i%128)/32)
 * of qs[32·(i/128) + i%32]; x = d·(q − 1). */
static void dec_tq2_0(const uint8_t *b, double *y)
{
	double d = rdf16(b + 64);

	for (int i = 0; i < 256; i++)
		y[i] = d * (((b[32 * (i / 128) + i % 32] >> (2 * (i % 128 / 32))) & 3) - 1);
}

/* An E2M1 code: sign bit 3, exponent bits 1..2 (bias 1), mantissa bit 0. */
static double e2m1(int c)
{
	int e = (c >> 1) & 3, m = c & 1;
	double mag = e ? ldexp(1.0 + 0.5 * m, e - 1) : 0.5 * m;

	return c & 8 ? -mag : mag;
}

/* mxfp4 (17 bytes): u8 e (E8M0), u8 qs[16] in q4_0's nibble order;
 * x = E2M1(q)·2^(e − 127). */
static void dec_mxfp4(const uint8_t *b, double *y)
{
	for (int i = 0; i < 32; i++)
		y[i] = ldexp(e2m1(nibble(b + 1, i)), b[0] - 127);
}

/* ------------------------------------------------------------- the table */

struct ref_format {
	void (*decode)(const uint8_t *block, double *y);
	/* f16 scale fields a random block must keep finite and moderate */
	uint8_t n_scales;
	uint8_t scale_at[2];
};

/* The decoders; names, block sizes and the weight flag come from
 * abi/gllmk_dtypes.def (dtype_facts). */
static const struct ref_format formats[GLLMK_DTYPE_LIMIT] = {
	[GLLMK_F32] = { dec_f32, 0, { 0 } },
	[GLLMK_F16] = { dec_f16, 0, { 0 } },
	[GLLMK_BF16] = { dec_bf16, 0, { 0 } },
	[GLLMK_Q4_0] = { dec_q4_0, 1, { 0 } },
	[GLLMK_Q4_1] = { dec_q4_1, 2, { 0, 2 } },
	[GLLMK_Q5_0] = { dec_q5_0, 1, { 0 } },
	[GLLMK_Q5_1] = { dec_q5_1, 2, { 0, 2 } },
	[GLLMK_Q8_0] = { dec_q8_0, 1, { 0 } },
	[GLLMK_IQ4_NL] = { dec_iq4_nl, 1, { 0 } },
	[GLLMK_Q2_K] = { dec_q2_K, 2, { 80, 82 } },
	[GLLMK_Q3_K] = { dec_q3_K, 1, { 108 } },
	[GLLMK_Q4_K] = { dec_q4_K, 2, { 0, 2 } },
	[GLLMK_Q5_K] = { dec_q5_K, 2, { 0, 2 } },
	[GLLMK_Q6_K] = { dec_q6_K, 1, { 208 } },
	[GLLMK_Q8_K] = { dec_q8_K, 0, { 0 } },
	[GLLMK_IQ4_XS] = { dec_iq4_xs, 1, { 0 } },
	[GLLMK_IQ2_XXS] = { dec_iq2_xxs, 1, { 0 } },
	[GLLMK_IQ2_XS] = { dec_iq2_xs, 1, { 0 } },
	[GLLMK_IQ2_S] = { dec_iq2_s, 1, { 0 } },
	[GLLMK_IQ3_XXS] = { dec_iq3_xxs, 1, { 0 } },
	[GLLMK_IQ3_S] = { dec_iq3_s, 1, { 0 } },
	[GLLMK_IQ1_S] = { dec_iq1_s, 1, { 0 } },
	[GLLMK_IQ1_M] = { dec_iq1_m, 0, { 0 } },   /* d in the scales' top nibbles: random_iq1_m */
	[GLLMK_TQ1_0] = { dec_tq1_0, 1, { 52 } },
	[GLLMK_TQ2_0] = { dec_tq2_0, 1, { 64 } },
	[GLLMK_MXFP4] = { dec_mxfp4, 0, { 0 } },   /* an E8M0 scale: random_mxfp4 */
};

struct dtype_facts {
	const char *name;
	int64_t elems, bytes;
};

static const struct dtype_facts dtype_facts[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, nm, el, by, align, minor, w, kv) [e] = { #nm, el, by },
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

static const struct ref_format *format_of(gllmk_dtype dt)
{
	if ((unsigned)dt >= GLLMK_DTYPE_LIMIT || !formats[dt].decode)
		return NULL;
	return &formats[dt];
}

int64_t ref_block_elems(gllmk_dtype dt)
{
	return format_of(dt) ? dtype_facts[dt].elems : 0;
}

int64_t ref_block_bytes(gllmk_dtype dt)
{
	return format_of(dt) ? dtype_facts[dt].bytes : 0;
}

size_t ref_row_bytes(gllmk_dtype dt, int64_t n)
{
	return format_of(dt) ? (size_t)(n / dtype_facts[dt].elems * dtype_facts[dt].bytes) : 0;
}

const char *ref_dtype_name(gllmk_dtype dt)
{
	return format_of(dt) ? dtype_facts[dt].name : "?";
}

int ref_dtype_is_block(gllmk_dtype dt)
{
	return ref_block_elems(dt) > 1;
}

void ref_decode_row(gllmk_dtype dt, const void *src, double *dst, int64_t n)
{
	const struct ref_format *f = format_of(dt);
	const uint8_t *b = src;

	for (int64_t i = 0; i < n; i += dtype_facts[dt].elems, b += dtype_facts[dt].bytes)
		f->decode(b, dst + i);
}

void ref_ulp_tolerance(const double *want, double *tol, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float w = (float)want[i];
		double up = fabs((double)nextafterf(w, INFINITY) - want[i]);
		double down = fabs((double)nextafterf(w, -INFINITY) - want[i]);

		tol[i] = isfinite(up) && isfinite(down) ? fmax(up, down) : 0.0;
	}
}

/* --------------------------------------------------------- random rows */

/* A finite f16 of magnitude 2^-10 .. 2^-3 with a random sign and mantissa. */
static uint16_t random_scale(struct conf_rng *r)
{
	uint16_t exp = (uint16_t)conf_rng_int(r, 15 - 10, 15 - 4);

	return (uint16_t)((conf_rng_u64(r) & 0x83ff) | exp << 10);
}

/* n random bytes, eight per draw. */
static void random_bytes(struct conf_rng *r, uint8_t *b, int64_t n)
{
	for (int64_t i = 0; i < n; i += 8) {
		uint64_t u = conf_rng_u64(r);

		for (int64_t j = i; j < n && j < i + 8; j++, u >>= 8)
			b[j] = (uint8_t)u;
	}
}

static void random_q8_K(struct conf_rng *r, uint8_t *b)
{
	float d = (float)ldexp(conf_rng_uniform(r, 1.0, 2.0), (int)conf_rng_int(r, -10, -4));
	int8_t *qs = (int8_t *)(b + 4);

	if (conf_rng_u64(r) & 1)
		d = -d;
	memcpy(b, &d, sizeof(d));
	random_bytes(r, b + 4, 256);
	for (int i = 0; i < 256; i++) {
		if (qs[i] == -128)
			qs[i] = -127; /* the encoder's range is [-127, 127] */
	}
	for (int j = 0; j < 16; j++) {
		int sum = 0;

		for (int i = 0; i < 16; i++)
			sum += qs[16 * j + i];
		wr16(b + 260 + 2 * j, (uint16_t)(int16_t)sum);
	}
}

/* Moderate values (magnitude 2^-10 .. 2), drawn as bits: f32 with a random
 * mantissa, f16/bf16 directly in their own format (no rounding needed). */
static void random_element(gllmk_dtype dt, struct conf_rng *r, uint8_t *b)
{
	uint64_t u = conf_rng_u64(r);
	uint32_t exp = (uint32_t)((u >> 32) % 12) - 10;

	if (dt == GLLMK_F32) {
		uint32_t v = (uint32_t)(u & 0x807fffff) | (exp + 127) << 23;

		memcpy(b, &v, sizeof(v));
	} else if (dt == GLLMK_F16) {
		wr16(b, (uint16_t)((u & 0x83ff) | (exp + 15) << 10));
	} else {
		wr16(b, (uint16_t)((u & 0x807f) | (exp + 127) << 7));
	}
}

/* iq1_m keeps its f16 d in the top nibbles of its four scale u16s. */
static void random_iq1_m(struct conf_rng *r, uint8_t *b)
{
	uint16_t d = random_scale(r);

	random_bytes(r, b, 56);
	for (int k = 0; k < 4; k++)
		b[48 + 2 * k + 1] = (uint8_t)((b[48 + 2 * k + 1] & 0x0f) | ((d >> (4 * k)) & 0xf) << 4);
}

/* mxfp4's E8M0 scale: 2^-10 .. 2^-3, like the f16 scales. */
static void random_mxfp4(struct conf_rng *r, uint8_t *b)
{
	random_bytes(r, b, 17);
	b[0] = (uint8_t)conf_rng_int(r, 127 - 10, 127 - 3);
}

void ref_random_row(gllmk_dtype dt, struct conf_rng *r, void *dst, int64_t n)
{
	const struct ref_format *f = format_of(dt);
	const int64_t elems = dtype_facts[dt].elems, bytes = dtype_facts[dt].bytes;
	uint8_t *b = dst;

	for (int64_t i = 0; i < n; i += elems, b += bytes) {
		if (elems == 1) {
			random_element(dt, r, b);
		} else if (dt == GLLMK_Q8_K) {
			random_q8_K(r, b);
		} else if (dt == GLLMK_IQ1_M) {
			random_iq1_m(r, b);
		} else if (dt == GLLMK_MXFP4) {
			random_mxfp4(r, b);
		} else {
			random_bytes(r, b, bytes);
			for (int s = 0; s < f->n_scales; s++)
				wr16(b + f->scale_at[s], random_scale(r));
		}
	}
}

/* ------------------------------------------------------------ encoders */

/* ggml's nearest_int: round half to even (the FPU's default mode). */
static int nearest_even(float v)
{
	return (int)rintf(v);
}

/* q8_0: amax = max|x|, d = amax/127, id = d ? 1/d : 0, q = roundf(x·id)
 * (half away from zero), d stored as f16. Float arithmetic is the
 * definition here, so it is what the reference computes. */
static float q8_0_block(const float *x, uint8_t *b)
{
	float amax = 0.0f;

	for (int i = 0; i < 32; i++)
		amax = fmaxf(amax, fabsf(x[i]));
	float d = amax / 127.0f;
	float id = d != 0.0f ? 1.0f / d : 0.0f;

	wr16(b, ref_f16_bits(d));
	for (int i = 0; i < 32; i++)
		b[2 + i] = (uint8_t)(int8_t)roundf(x[i] * id);
	return id;
}

/* q8_K: v = the first element of largest |x|; v == 0: all zero; else
 * iscale = −127/v, q = min(127, nearest_even(iscale·x)), d = 1/iscale (f32),
 * bsums[j] = Σ q[16j .. 16j+15]. Returns iscale (0 for a zero block). */
static float q8_K_block(const float *x, uint8_t *b)
{
	float amax = 0.0f, v = 0.0f, iscale, d;
	int8_t *qs = (int8_t *)(b + 4);

	memset(b, 0, 292);
	for (int i = 0; i < 256; i++) {
		if (fabsf(x[i]) > amax) {
			amax = fabsf(x[i]);
			v = x[i];
		}
	}
	if (amax == 0.0f)
		return 0.0f;
	iscale = -127.0f / v;
	for (int i = 0; i < 256; i++) {
		int q = nearest_even(iscale * x[i]);

		qs[i] = (int8_t)(q < 127 ? q : 127);
	}
	for (int j = 0; j < 16; j++) {
		int sum = 0;

		for (int i = 0; i < 16; i++)
			sum += qs[16 * j + i];
		wr16(b + 260 + 2 * j, (uint16_t)(int16_t)sum);
	}
	d = 1.0f / iscale;
	memcpy(b, &d, sizeof(d));
	return iscale;
}

void ref_quantize_q8_0(const float *x, void *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i += 32)
		q8_0_block(x + i, (uint8_t *)dst + i / 32 * 34);
}

void ref_quantize_q8_K(const float *x, void *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i += 256)
		q8_K_block(x + i, (uint8_t *)dst + i / 256 * 292);
}

/* A one-step difference is allowed only near a tie, never on one: an exact
 * tie in double is a tie for any sane formulation, and its direction is
 * part of the definition (away from zero for q8_0, to even for q8_K). */
static int near_tie(double t)
{
	double dist = fabs(fabs(t - floor(t)) - 0.5);

	return dist != 0.0 && dist <= 1e-6 * fmax(1.0, fabs(t));
}

static int compare_quants(const int8_t *got, const int8_t *want, const float *x, float scale, int nq,
			  int64_t block, char *msg, size_t msg_len)
{
	for (int i = 0; i < nq; i++) {
		double t = (double)x[i] * scale;

		if (got[i] == want[i] || (abs(got[i] - want[i]) == 1 && near_tie(t)))
			continue;
		snprintf(msg, msg_len, "block %lld q[%d]: got %d, want %d (x = %.9g, x*scale = %.9g)",
			 (long long)block, i, got[i], want[i], x[i], t);
		return -1;
	}
	return 0;
}

static int compare_q8_0(const float *x, const uint8_t *got, const uint8_t *want, int64_t block, char *msg,
			size_t msg_len)
{
	uint8_t again[34];
	float id = q8_0_block(x, again);

	if (rd16(got) != rd16(want)) {
		snprintf(msg, msg_len, "block %lld d: got f16 0x%04x (%.9g), want 0x%04x (%.9g)", (long long)block,
			 rd16(got), rdf16(got), rd16(want), rdf16(want));
		return -1;
	}
	return compare_quants((const int8_t *)got + 2, (const int8_t *)want + 2, x, id, 32, block, msg, msg_len);
}

static int compare_q8_K(const float *x, const uint8_t *got, const uint8_t *want, int64_t block, char *msg,
			size_t msg_len)
{
	uint8_t again[292];
	float iscale = q8_K_block(x, again);
	const int8_t *qs = (const int8_t *)got + 4;
	float gd, wd;

	memcpy(&gd, got, sizeof(gd));
	memcpy(&wd, want, sizeof(wd));
	if (memcmp(got, want, 4) != 0) {
		snprintf(msg, msg_len, "block %lld d: got %.9g, want %.9g (f32 bits differ)", (long long)block, gd,
			 wd);
		return -1;
	}
	if (compare_quants(qs, (const int8_t *)want + 4, x, iscale, 256, block, msg, msg_len))
		return -1;
	for (int j = 0; j < 16; j++) {
		int sum = 0, bsum = (int16_t)rd16(got + 260 + 2 * j);

		for (int i = 0; i < 16; i++)
			sum += qs[16 * j + i];
		if (bsum != sum) {
			snprintf(msg, msg_len, "block %lld bsums[%d]: got %d, want %d (the sum of its quants)",
				 (long long)block, j, bsum, sum);
			return -1;
		}
	}
	return 0;
}

int ref_compare_q8(gllmk_dtype dt, const float *x, const void *got, const void *want, int64_t n, char *msg,
		   size_t msg_len)
{
	const uint8_t *g = got, *w = want;
	int64_t qk = dt == GLLMK_Q8_0 ? 32 : 256, bytes = dt == GLLMK_Q8_0 ? 34 : 292;

	for (int64_t b = 0; b < n / qk; b++) {
		int bad = dt == GLLMK_Q8_0 ? compare_q8_0(x + b * qk, g + b * bytes, w + b * bytes, b, msg, msg_len)
					   : compare_q8_K(x + b * qk, g + b * bytes, w + b * bytes, b, msg, msg_len);

		if (bad)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- matmul */

/* The largest error quantizing one activation to 8 bits can make, per
 * element of a block with max |x| = amax: half a step of amax/127, plus
 * the f16 rounding of q8_0's scale (127 steps × 2^-11 relative), rounded
 * up to 0.6 steps. */
static double act_quant_error(const float *x, int64_t n)
{
	double amax = 0.0;

	for (int64_t i = 0; i < n; i++)
		amax = fmax(amax, fabs((double)x[i]));
	return 0.6 * amax / 127.0;
}

/* y[i,n] and its bound for one decoded weight row; w2[b] = Σ_{k in block b} w_k². */
static void matmul_row(const double *wrow, const double *w2, int64_t k, int64_t qk, const float *xi,
		       const double *ei, int bf16_x, double bias, double *y, double *bound)
{
	double dot = bias, xw_sum = 0.0, q_err = 0.0, flushed = (double)k;

	for (int64_t j = 0; j < k; j++) {
		double p = xi[j] * wrow[j];

		dot += p;
		xw_sum += fabs(p);
		flushed += fabs(xi[j]) + fabs(wrow[j]);
	}
	for (int64_t b = 0; b < k / qk; b++)
		q_err += ei[b] * ei[b] * w2[b];
	*y = dot;
	*bound = 1e-5 * (xw_sum + fabs(bias)) + 6.0 * sqrt(q_err);
	if (bf16_x) /* SPEC/TOLERANCES.md, "bf16 activations" */
		*bound += 0x1p-8 * xw_sum + 0x1p-126 * flushed;
}

double ref_matmul_norm_tolerance(gllmk_dtype wdt)
{
	if (ref_dtype_is_block(wdt))
		return 1e-2;
	return wdt == GLLMK_BF16 && conf.bf16_act ? 0x1p-8 : 1e-4;
}

void ref_matmul(gllmk_dtype wdt, const void *w, size_t w_row_bytes, int64_t n_rows, int64_t k, const float *x,
		int64_t m, const float *bias, double *y, double *bound)
{
	int64_t qk = ref_block_elems(wdt), nb = k / qk;
	int quantizes = ref_dtype_is_block(wdt);
	double *wrow = conf_xmalloc((size_t)k * sizeof(*wrow));
	double *w2 = conf_xmalloc((size_t)nb * sizeof(*w2));
	double *err = conf_xmalloc((size_t)(m * nb) * sizeof(*err));

	/* e per activation block, from its max (0: x stays f32) */
	for (int64_t i = 0; i < m; i++)
		for (int64_t b = 0; b < nb; b++)
			err[i * nb + b] = quantizes ? act_quant_error(x + i * k + b * qk, qk) : 0.0;
	for (int64_t n = 0; n < n_rows; n++) {
		ref_decode_row(wdt, (const uint8_t *)w + n * w_row_bytes, wrow, k);
		for (int64_t b = 0; b < nb; b++) {
			w2[b] = 0.0;
			for (int64_t j = b * qk; j < (b + 1) * qk; j++)
				w2[b] += wrow[j] * wrow[j];
		}
		for (int64_t i = 0; i < m; i++)
			matmul_row(wrow, w2, k, qk, x + i * k, err + i * nb, wdt == GLLMK_BF16 && conf.bf16_act,
				   bias ? bias[n] : 0.0,
				   y + i * n_rows + n, bound + i * n_rows + n);
	}
	free(wrow);
	free(w2);
	free(err);
}
