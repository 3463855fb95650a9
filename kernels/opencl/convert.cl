/* convert between f32, f16 and bf16 (-DSRC, -DDST: gllmk dtype ids),
 * rounding to nearest even; NaN stays NaN, f16 overflow gives inf. One
 * work-item per element. */
#include "common.h"

static inline float load(cbytes *row, long j)
{
#if SRC == DT_F32
	return ((__global const float *)row)[j];
#elif SRC == DT_F16
	return vload_half(j, (__global const half *)row);
#else
	return ld_bf16(row + 2 * j);
#endif
}

static inline void store(gbytes *row, long j, float v)
{
#if DST == DT_F32
	((__global float *)row)[j] = v;
#elif DST == DT_F16
	vstore_half_rte(v, j, (__global half *)row);
#else
	((__global ushort *)row)[j] = f32_to_bf16(v);
#endif
}

__kernel void KNAME(gbytes *yb, TENSOR(y), cbytes *xb, TENSOR(x), long n, long d1, long d2, long total)
{
	long g = get_global_id(0);

	if (g >= total)
		return;
	long r = g / n, j = g % n;

	store(yb + ROW(y, r), j, load(xb + ROW(x, r), j));
}
