/* Quantization family.
 *  -DWTYPE=t            dequantize: y (f32) = decode(x), same shape
 *  -DWTYPE=t -DGET_ROWS get_rows:   y[i,:] = decode(table[ids[i],:])
 *  -DQTYPE=8 | 15       quantize:   y (q8_0 | q8_K) = encode(x (f32)),
 *                       ggml's reference encoders (SPEC/OPERATORS.md)
 * Decoding: one work-item per element (float dtypes) or per 32 elements
 * (block dtypes). Encoding: one work-item per block. */
#include "common.h"

#ifdef WTYPE
#include "decode.h"

/* Elements [32c, 32c+32) of a row (block dtypes) or element c (floats). */
static inline void decode_item(cbytes *src, __global float *dst, long c)
{
#if WBLOCK
	float v[32];

	deq32(src + (c * 32 / WQK) * WQB, (int)(c % (WQK / 32)), v);
	for (int l = 0; l < 32; l++)
		dst[c * 32 + l] = v[l];
#else
	dst[c] = wload(src, c);
#endif
}

#if WBLOCK
#define PER_ITEM 32
#else
#define PER_ITEM 1
#endif

#ifndef GET_ROWS
__kernel void KNAME(gbytes *yb, TENSOR(y), cbytes *xb, TENSOR(x), long n, long d1, long d2, long total)
{
	long g = get_global_id(0), per_row = n / PER_ITEM;

	if (g >= total)
		return;
	long r = g / per_row;

	decode_item(xb + ROW(x, r), (__global float *)(yb + ROW(y, r)), g % per_row);
}
#else
/* ids are checked here, not read back by the host (a decode step's token
 * id, made by argmax on the device): a bad one is clamped into the table
 * and raised in the status words (SPEC/OPENCL.md). */
__kernel void KNAME(gbytes *yb, ulong y_off, long y_s0, cbytes *tb, ulong t_off, long t_s0, cbytes *idb,
		    ulong id_off, long v_rows, long n, long total, __global int *status)
{
	long g = get_global_id(0), per_row = n / PER_ITEM;

	if (g >= total)
		return;
	long i = g / per_row, raw = ((__global const int *)(idb + id_off))[i], id = clamp(raw, 0L, v_rows - 1);

	if (id != raw && g % per_row == 0)
		status_raise(status, STATUS_GET_ROWS, i, 0, raw, v_rows);

	decode_item(tb + t_off + id * t_s0, (__global float *)(yb + y_off + i * y_s0), g % per_row);
}
#endif
#endif /* WTYPE */

#ifdef QTYPE
#if QTYPE == DT_Q8_0
#define QK 32
#define QB 34
#include "encode.h"
#define encode encode_q8_0
#elif QTYPE == DT_Q8_K
#define QK 256
#define QB 292
static inline void encode(__global const float *x, gbytes *b)
{
	float amax = 0.0f, max = 0.0f;
	__global char *q = (__global char *)(b + 4);
	__global short *bsums = (__global short *)(b + 4 + QK);

	for (int j = 0; j < QK; j++) {
		if (fabs(x[j]) > amax) {
			amax = fabs(x[j]);
			max = x[j];
		}
	}
	if (amax == 0.0f) {
		*(__global float *)b = 0.0f;
		for (int j = 0; j < QK; j++)
			q[j] = 0;
		for (int g = 0; g < QK / 16; g++)
			bsums[g] = 0;
		return;
	}
	float iscale = -127.0f / max;

	for (int g = 0; g < QK / 16; g++) {
		int sum = 0;

		for (int j = 16 * g; j < 16 * g + 16; j++) {
			int v = min((int)rint(iscale * x[j]), 127);

			q[j] = (char)v;
			sum += v;
		}
		bsums[g] = (short)sum;
	}
	*(__global float *)b = 1.0f / iscale;
}
#else
#error "quant.cl: unknown QTYPE"
#endif

__kernel void KNAME(gbytes *yb, TENSOR(y), cbytes *xb, TENSOR(x), long n, long d1, long d2, long total)
{
	long g = get_global_id(0), per_row = n / QK;

	if (g >= total)
		return;
	long r = g / per_row, blk = g % per_row;

	encode((__global const float *)(xb + ROW(x, r)) + blk * QK, yb + ROW(y, r) + blk * QB);
}
#endif /* QTYPE */
