/* Weight decoding for every dtype matmul, dequantize and get_rows take,
 * selected at build time by -DWTYPE=<gllmk dtype id>. Block layouts are
 * ggml's, bit for bit (SPEC/QUANT.md).
 *
 * Float dtypes (f32, f16, bf16): WBLOCK 0 and wload(row, k) reads element k.
 * Block dtypes: WBLOCK 1, WQK elements in WQB bytes per block, and
 * deq32(block, c, v) decodes elements [32c, 32c + 32) of one block into
 * registers: matmul dots them without writing decoded weights anywhere. */
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

#if WTYPE == DT_IQ4_NL || WTYPE == DT_IQ4_XS
static __constant float iq4nl_values[16] = {
	-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};
#endif

#if WTYPE == DT_Q4_0 || WTYPE == DT_Q4_1 || WTYPE == DT_Q5_0 || WTYPE == DT_Q5_1 || WTYPE == DT_Q8_0 || \
	WTYPE == DT_IQ4_NL
#define WQK 32
#else
#define WQK 256
#endif

#if WTYPE == DT_Q4_0
#define WQB 18
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);

	for (int j = 0; j < 16; j++) {
		v[j] = ((b[2 + j] & 15) - 8) * d;
		v[j + 16] = ((b[2 + j] >> 4) - 8) * d;
	}
}
#elif WTYPE == DT_Q4_1
#define WQB 20
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
#define WQB 22
#define Q5_QH 2
#else
#define WQB 24
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
#define WQB 34
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);

	for (int j = 0; j < 32; j++)
		v[j] = (char)b[2 + j] * d;
}
#elif WTYPE == DT_IQ4_NL
#define WQB 18
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = ld_f16(b);

	for (int j = 0; j < 16; j++) {
		v[j] = d * iq4nl_values[b[2 + j] & 15];
		v[j + 16] = d * iq4nl_values[b[2 + j] >> 4];
	}
}
#elif WTYPE == DT_Q2_K
#define WQB 84
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
#define WQB 110
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
#define WQB 144
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
#define WQB 176
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
#define WQB 210
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
#define WQB 292
static inline void deq32(cbytes *b, int c, float *v)
{
	float d = *(__global const float *)b;
	__global const char *q = (__global const char *)(b + 4 + 32 * c);

	for (int l = 0; l < 32; l++)
		v[l] = d * q[l];
}
#elif WTYPE == DT_IQ4_XS
#define WQB 136
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
#else
#error "decode.h: unknown WTYPE"
#endif
#endif /* block dtypes */

#endif
