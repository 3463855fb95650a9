/* Weight decoding for every dtype matmul, dequantize and get_rows take,
 * selected at build time by -DWTYPE=<gllmk dtype id>. Block layouts are
 * ggml's, bit for bit (SPEC/QUANT.md); so are the float operations of each
 * decoder, in ggml's order, so dequantize matches ggml to the bit.
 *
 * Float dtypes (f32, f16, bf16): WBLOCK 0 and wload(row, k) reads element k.
 * Block dtypes: WBLOCK 1, WQK elements in WQB bytes per block, and
 * deq32(block, c, v) decodes elements [32c, 32c + 32) of one block into
 * registers: matmul dots them without writing decoded weights anywhere.
 * Every 256-element i-quant spends its fields in groups of 32 (one scale or
 * two, four or eight codebook indices), so a 32-element piece is one group. */
#ifndef GLLMK_OCL_DECODE_H
#define GLLMK_OCL_DECODE_H

#include "common.h"

#if WTYPE == DT_F32 || WTYPE == DT_F16 || WTYPE == DT_BF16
#define WBLOCK 0
static inline float wload(cbytes *row, long k)
{
#if WTYPE == DT_F32
	return ((__global const float *)row)[k];
#elif WTYPE == DT_F16
	return vload_half(k, (__global const half *)row);
#else
	return ld_bf16(row + 2 * k);
#endif
}
#else
#define WBLOCK 1

/* Multi-byte fields of blocks are read byte by byte: a block starts at any
 * 2-byte boundary (1 for mxfp4), and OpenCL C has no unaligned loads. */
static inline uint ld_u16(cbytes *p)
{
	return p[0] | (uint)p[1] << 8;
}

static inline uint ld_u32(cbytes *p)
{
	return ld_u16(p) | ld_u16(p + 2) << 16;
}

#include "codebooks.h"

/* 8 grid bytes g (byte j = element j) times db, negated where bit j of
 * signs is set: ggml's db * grid[j] * (+-1.f), to the bit. */
static inline void grid_signed8(float *v, float db, ulong g, uint signs)
{
	for (int j = 0; j < 8; j++) {
		float x = db * (float)((g >> 8 * j) & 255);

		v[j] = (signs >> j) & 1 ? -x : x;
	}
}

/* iq1_s and iq1_m: 8 grid values in {-1, 0, 1} (int8 bytes of g), each
 * offset by delta then scaled: ggml's dl * (grid[j] + delta). */
static inline void grid_delta8(float *v, float dl, ulong g, float delta)
{
	for (int j = 0; j < 8; j++)
		v[j] = dl * ((float)(char)(g >> 8 * j) + delta);
}

#if WTYPE == DT_Q4_0 || WTYPE == DT_Q4_1 || WTYPE == DT_Q5_0 || WTYPE == DT_Q5_1 || WTYPE == DT_Q8_0 || \
	WTYPE == DT_IQ4_NL || WTYPE == DT_MXFP4
#define WQK 32
#else
#define WQK 256
#endif

#if WTYPE == DT_Q4_0
#define WQB DT_Q4_0_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);

	for (int j = 0; j < 16; j++) {
		v[j] = ((b[2 + j] & 15) - 8) * d;
		v[j + 16] = ((b[2 + j] >> 4) - 8) * d;
	}
}
#elif WTYPE == DT_Q4_1
#define WQB DT_Q4_1_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b), m = ld_f16(b + 2);

	for (int j = 0; j < 16; j++) {
		v[j] = (b[4 + j] & 15) * d + m;
		v[j + 16] = (b[4 + j] >> 4) * d + m;
	}
}
#elif WTYPE == DT_Q5_0 || WTYPE == DT_Q5_1
#if WTYPE == DT_Q5_0
#define WQB DT_Q5_0_BYTES
#define Q5_QH 2
#else
#define WQB DT_Q5_1_BYTES
#define Q5_QH 4
#endif
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);
#if WTYPE == DT_Q5_0
#define Q5_VAL(q) (((q) - 16) * d)
#else
	float m = ld_f16(b + 2);
#define Q5_VAL(q) ((q) * d + m)
#endif
	uint qh = b[Q5_QH] | (uint)b[Q5_QH + 1] << 8 | (uint)b[Q5_QH + 2] << 16 | (uint)b[Q5_QH + 3] << 24;
	cbytes *qs = b + Q5_QH + 4;

	for (int j = 0; j < 16; j++) {
		int h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;

		v[j] = Q5_VAL((qs[j] & 15) | h0);
		v[j + 16] = Q5_VAL((qs[j] >> 4) | h1);
	}
}
#elif WTYPE == DT_Q8_0
#define WQB DT_Q8_0_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);

	for (int j = 0; j < 32; j++)
		v[j] = (char)b[2 + j] * d;
}
#elif WTYPE == DT_IQ4_NL
#define WQB DT_IQ4_NL_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);

	for (int j = 0; j < 16; j++) {
		v[j] = d * iq4nl_values[b[2 + j] & 15];
		v[j + 16] = d * iq4nl_values[b[2 + j] >> 4];
	}
}
#elif WTYPE == DT_Q2_K
#define WQB DT_Q2_K_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b + 80), dmin = ld_f16(b + 82);
	cbytes *q = b + 16 + 32 * (c / 4);
	int shift = 2 * (c % 4);

	for (int g = 0; g < 2; g++) {
		uchar sc = b[2 * c + g];
		float dl = d * (sc & 15), ml = dmin * (sc >> 4);

		for (int l = 0; l < 16; l++)
			v[16 * g + l] = dl * ((q[l + 16 * g] >> shift) & 3) - ml;
	}
}
#elif WTYPE == DT_Q3_K
#define WQB DT_Q3_K_BYTES
static inline int q3_scale(cbytes *s, int j)
{
	int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
	int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;

	return (lo | hi << 4) - 32;
}

static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b + 108);
	cbytes *hm = b, *q = b + 32 + 32 * (c / 4);
	int shift = 2 * (c % 4);
	uchar m = (uchar)(1 << c);

	for (int g = 0; g < 2; g++) {
		float dl = d * q3_scale(b + 96, 2 * c + g);

		for (int l = 0; l < 16; l++) {
			int o = l + 16 * g;

			v[o] = dl * (((q[o] >> shift) & 3) - ((hm[o] & m) ? 0 : 4));
		}
	}
}
#elif WTYPE == DT_Q4_K || WTYPE == DT_Q5_K
/* scale and min j (0..7): 6 bits each, packed in 12 bytes */
static inline float2 k4_scale_min(cbytes *q, int j)
{
	if (j < 4)
		return (float2)(q[j] & 63, q[j + 4] & 63);
	return (float2)((q[j + 4] & 15) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4));
}

#if WTYPE == DT_Q4_K
#define WQB DT_Q4_K_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float2 sm = k4_scale_min(b + 4, c);
	float d = ld_f16(b) * sm.x, m = ld_f16(b + 2) * sm.y;
	cbytes *q = b + 16 + 32 * (c / 2);
	int shift = 4 * (c % 2);

	for (int l = 0; l < 32; l++)
		v[l] = d * ((q[l] >> shift) & 15) - m;
}
#else
#define WQB DT_Q5_K_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float2 sm = k4_scale_min(b + 4, c);
	float d = ld_f16(b) * sm.x, m = ld_f16(b + 2) * sm.y;
	cbytes *qh = b + 16, *q = b + 48 + 32 * (c / 2);
	int shift = 4 * (c % 2);
	uchar u = (uchar)(1 << c);

	for (int l = 0; l < 32; l++)
		v[l] = d * (((q[l] >> shift) & 15) + ((qh[l] & u) ? 16 : 0)) - m;
}
#endif
#elif WTYPE == DT_Q6_K
#define WQB DT_Q6_K_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	int hh = c / 4, k = c % 4;
	float d = ld_f16(b + 208);
	cbytes *ql = b + 64 * hh + 32 * (k % 2), *qh = b + 128 + 32 * hh;
	__global const char *sc = (__global const char *)(b + 192 + 8 * hh);
	int lshift = 4 * (k / 2), hshift = 2 * k;

	for (int l = 0; l < 32; l++) {
		int q = (((ql[l] >> lshift) & 15) | (((qh[l] >> hshift) & 3) << 4)) - 32;

		v[l] = d * sc[l / 16 + 2 * k] * q;
	}
}
#elif WTYPE == DT_Q8_K
#define WQB DT_Q8_K_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = *(__global const float *)b;
	__global const char *q = (__global const char *)(b + 4 + 32 * c);

	for (int l = 0; l < 32; l++)
		v[l] = d * q[l];
}
#elif WTYPE == DT_IQ4_XS
#define WQB DT_IQ4_XS_BYTES
static inline void deq32(cbytes *b, int c, float *v)
{
	int sh = b[2] | b[3] << 8;
	int ls = ((b[4 + c / 2] >> (4 * (c % 2))) & 15) | (((sh >> (2 * c)) & 3) << 4);
	float dl = ld_f16(b) * (ls - 32);
	cbytes *qs = b + 8 + 16 * c;

	for (int j = 0; j < 16; j++) {
		v[j] = dl * iq4nl_values[qs[j] & 15];
		v[j + 16] = dl * iq4nl_values[qs[j] >> 4];
	}
}
#elif WTYPE == DT_IQ2_XXS
#define WQB DT_IQ2_XXS_BYTES
/* d (f16), then 8 bytes per group c: 4 grid indices, then a u32 of 4x7
 * sign-index bits and the 4-bit scale */
static inline void deq32(cbytes *b, int c, float *v)
{
	cbytes *q = b + 2 + 8 * c;
	uint aux = ld_u32(q + 4);
	float db = ld_f16(b) * (0.5f + (aux >> 28)) * 0.25f;

	for (int l = 0; l < 4; l++)
		grid_signed8(v + 8 * l, db, iq2xxs_grid[q[l]], ksigns_iq2xs[(aux >> 7 * l) & 127]);
}
#elif WTYPE == DT_IQ2_XS
#define WQB DT_IQ2_XS_BYTES
/* d (f16), qs: 4 u16 per group c (9-bit grid index, 7-bit sign index) at
 * 2, scales: a byte per group (a 4-bit scale per 16) at 66 */
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);
	uint sc = b[66 + c];

	for (int l = 0; l < 4; l++) {
		uint q = ld_u16(b + 2 + 8 * c + 2 * l);
		float db = d * (0.5f + ((sc >> 4 * (l / 2)) & 15)) * 0.25f;

		grid_signed8(v + 8 * l, db, iq2xs_grid[q & 511], ksigns_iq2xs[q >> 9]);
	}
}
#elif WTYPE == DT_IQ2_S
#define WQB DT_IQ2_S_BYTES
/* d (f16), the low 8 bits of 4 grid indices per group c at 2, their 4 sign
 * bytes at 34, qh (2 high bits per index) at 66, scales (a 4-bit scale per
 * 16) at 74: a byte of each per group */
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);
	cbytes *qs = b + 2 + 4 * c, *signs = qs + 32;
	uint qh = b[66 + c], sc = b[74 + c];

	for (int l = 0; l < 4; l++) {
		float db = d * (0.5f + ((sc >> 4 * (l / 2)) & 15)) * 0.25f;

		grid_signed8(v + 8 * l, db, iq2s_grid[qs[l] | ((qh << (8 - 2 * l)) & 0x300)], signs[l]);
	}
}
#elif WTYPE == DT_IQ3_XXS
#define WQB DT_IQ3_XXS_BYTES
/* d (f16), 8 grid indices (4 values each) per group c at 2, then a u32 per
 * group of 4x7 sign-index bits and the 4-bit scale at 66 */
static inline void deq32(cbytes *b, int c, float *v)
{
	cbytes *q = b + 2 + 8 * c;
	uint aux = ld_u32(b + 66 + 4 * c);
	float db = ld_f16(b) * (0.5f + (aux >> 28)) * 0.5f;

	for (int l = 0; l < 4; l++) {
		ulong g = GRID64(iq3xxs_grid[q[2 * l]], iq3xxs_grid[q[2 * l + 1]]);

		grid_signed8(v + 8 * l, db, g, ksigns_iq2xs[(aux >> 7 * l) & 127]);
	}
}
#elif WTYPE == DT_IQ3_S
#define WQB DT_IQ3_S_BYTES
/* d (f16), the low 8 bits of 8 grid indices per group c at 2, their 9th
 * bits (a byte per group) at 66, 4 sign bytes per group at 74, a 4-bit
 * scale per group (two per byte) at 106 */
static inline void deq32(cbytes *b, int c, float *v)
{
	cbytes *qs = b + 2 + 8 * c, *signs = b + 74 + 4 * c;
	uint qh = b[66 + c];
	float db = ld_f16(b) * (1 + 2 * ((b[106 + c / 2] >> 4 * (c % 2)) & 15));

	for (int l = 0; l < 4; l++) {
		uint lo = iq3s_grid[qs[2 * l] | ((qh << (8 - 2 * l)) & 256)];
		uint hi = iq3s_grid[qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256)];

		grid_signed8(v + 8 * l, db, GRID64(lo, hi), signs[l]);
	}
}
#elif WTYPE == DT_IQ1_S || WTYPE == DT_IQ1_M
#define IQ1_DELTA ((float)GLLMK_IQ1_DELTA)

#if WTYPE == DT_IQ1_S
#define WQB DT_IQ1_S_BYTES
/* d (f16), the low 8 bits of 4 grid indices per group c at 2, a u16 per
 * group at 34: 4x3 high index bits, a 3-bit scale, the delta's sign */
static inline void deq32(cbytes *b, int c, float *v)
{
	cbytes *qs = b + 2 + 4 * c;
	uint qh = ld_u16(b + 34 + 2 * c);
	float dl = ld_f16(b) * (2 * ((qh >> 12) & 7) + 1);
	float delta = qh & 0x8000 ? -IQ1_DELTA : IQ1_DELTA;

	for (int l = 0; l < 4; l++)
		grid_delta8(v + 8 * l, dl, iq1s_grid[qs[l] | (((qh >> 3 * l) & 7) << 8)], delta);
}
#else
#define WQB DT_IQ1_M_BYTES
/* The low 8 bits of 4 grid indices per group c at 0, qh (a nibble per
 * index: 3 high bits, the delta's sign) at 32, 4 u16 of scales at 48. No d
 * field: its f16 bits are the top nibbles of the 4 u16 of scales. */
static inline float iq1m_d(cbytes *b)
{
	ushort bits = (ushort)((ld_u16(b + 48) >> 12) | ((ld_u16(b + 50) >> 8) & 0x00f0) |
			       ((ld_u16(b + 52) >> 4) & 0x0f00) | (ld_u16(b + 54) & 0xf000));

	return vload_half(0, (const half *)&bits);
}

/* group c: a 3-bit scale per 16, in u16 c / 2 of scales */
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = iq1m_d(b);
	cbytes *qs = b + 4 * c, *qh = b + 32 + 2 * c;
	uint sc = ld_u16(b + 48 + 2 * (c / 2)) >> 6 * (c % 2);

	for (int l = 0; l < 4; l++) {
		uint h = qh[l / 2] >> 4 * (l % 2);
		float dl = d * (2 * ((sc >> 3 * (l / 2)) & 7) + 1);

		grid_delta8(v + 8 * l, dl, iq1s_grid[qs[l] | ((h & 7) << 8)], h & 8 ? -IQ1_DELTA : IQ1_DELTA);
	}
}
#endif
#elif WTYPE == DT_TQ1_0
#define WQB DT_TQ1_0_BYTES
/* Element e's trit: 5 trits per byte in qs (bytes 0..47), 4 in qh (48..51);
 * d (f16) at 52. Bytes 0..31 give elements 0..159 (trit n of byte m is
 * element 32n + m), bytes 32..47 elements 160..239 (16n + m), qh 240..255
 * (4n + m). Trit n of a byte is the top trit of byte * 3^n (mod 256), read
 * as (q * 3) >> 8. */
static __constant uchar tq1_pow3[5] = { 1, 3, 9, 27, 81 };

static inline int tq1_trit(cbytes *b, int e)
{
	int byte, n;

	if (e < 160) {
		byte = e % 32;
		n = e / 32;
	} else if (e < 240) {
		byte = 32 + (e - 160) % 16;
		n = (e - 160) / 16;
	} else {
		byte = 48 + (e - 240) % 4;
		n = (e - 240) / 4;
	}
	uint q = (b[byte] * (uint)tq1_pow3[n]) & 255;

	return (int)((q * 3) >> 8) - 1;
}

static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b + 52);

	for (int j = 0; j < 32; j++)
		v[j] = (float)tq1_trit(b, 32 * c + j) * d;
}
#elif WTYPE == DT_TQ2_0
#define WQB DT_TQ2_0_BYTES
/* qs: 2 bits per element (value + 1) at 0, byte m of each 32 holding
 * elements m, m + 32, m + 64, m + 96 of its 128; d (f16) at 64 */
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b + 64);
	cbytes *q = b + 32 * (c / 4);
	int shift = 2 * (c % 4);

	for (int j = 0; j < 32; j++)
		v[j] = (float)((int)((q[j] >> shift) & 3) - 1) * d;
}
#elif WTYPE == DT_MXFP4
#define WQB DT_MXFP4_BYTES
/* e (E8M0), then 16 bytes of E2M1 codes: low nibbles elements 0..15 */
/* E8M0 scale e, halved because the E2M1 values are stored doubled: 2^(e - 128),
 * a subnormal for e < 2 (ggml's GGML_E8M0_TO_FP32_HALF) */
static inline float e8m0_half(uint e)
{
	return as_float(e < 2 ? 0x00200000u << e : (e - 1) << 23);
}

static inline void deq32(cbytes *b, int c, float *v)
{
	float d = e8m0_half(b[0]);

	for (int j = 0; j < 16; j++) {
		v[j] = kvalues_mxfp4[b[1 + j] & 15] * d;
		v[j + 16] = kvalues_mxfp4[b[1 + j] >> 4] * d;
	}
}
#else
#error "decode.h: unknown WTYPE"
#endif
#endif /* block dtypes */

#endif
