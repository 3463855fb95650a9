/* Shared by every OpenCL kernel of gllmk: tensor addressing, half and bf16
 * loads, work-group reductions. Compiled at build time only (clang -> SPIR
 * 1.2 bitcode and SPIR-V); the plugin never sees this text.
 *
 * Buffers arrive as __global uchar * plus byte offsets: the core hands out
 * views at any offset the dtype's alignment allows, which sub-buffers could
 * not express (CL_DEVICE_MEM_BASE_ADDR_ALIGN).
 *
 * Rows of a tensor: the host folds its outer dims into three (d0, d1, d2),
 * so row r lives at off + i*s0 + j*s1 + l*s2 with (i, j, l) = r in
 * row-major order over (d0, d1, d2). Each op passes d1, d2 once and the
 * offset and strides of each tensor. */
#ifndef GLLMK_OCL_COMMON_H
#define GLLMK_OCL_COMMON_H

/* Work-group size of every kernel that reduces a row (fixed, so each kernel
 * is specialised once by the driver). */
#define WG 64

/* GLLMK dtype ids as DT_<NAME>: generated from abi/gllmk_dtypes.def */
#include "gllmk_dtype_ids.h"

typedef __global uchar gbytes;
typedef __global const uchar cbytes;

/* Index data a kernel checks itself: the first offence goes to the status
 * words (plugins/opencl/ocl_plugin.h), which the host reports at the next
 * sync or read. [0] the op (STATUS_*), [1] row, [2] slot, [3] value, [4]
 * limit. */
#define STATUS_EXPERT_IDS 1 /* matmul_id: row the token */
#define STATUS_GET_ROWS 2
#define STATUS_KV_SLOTS 3   /* kv_store: row the token */
static inline void status_raise(__global int *status, int op, long row, long slot, long value, long limit)
{
	if (atomic_cmpxchg(status, 0, op) == 0) {
		status[1] = (int)row;
		status[2] = (int)slot;
		status[3] = (int)value;
		status[4] = (int)limit;
	}
}

#define TENSOR(t) ulong t##_off, long t##_s0, long t##_s1, long t##_s2

static inline ulong row_at(ulong off, long s0, long s1, long s2, long r, long d1, long d2)
{
	long l = r % d2, j = (r / d2) % d1, i = r / (d1 * d2);

	return off + i * s0 + j * s1 + l * s2;
}

#define ROW(t, r) row_at(t##_off, t##_s0, t##_s1, t##_s2, (r), d1, d2)

static inline float ld_f16(cbytes *p)
{
	return vload_half(0, (__global const half *)p);
}

static inline float ld_bf16(cbytes *p)
{
	return as_float((uint)*(__global const ushort *)p << 16);
}

static inline ushort f32_to_bf16(float f)
{
	uint u = as_uint(f);

	if (isnan(f))
		return (ushort)((u >> 16) | 0x40);
	return (ushort)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* Work-group reductions: every item stores its value, then every item adds
 * the WG values in the same order, so all get the same result with two
 * barriers and no barrier inside a loop. */
static inline float wg_sum(float v, __local float *tmp)
{
	tmp[get_local_id(0)] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	v = 0.0f;
	for (int i = 0; i < WG; i++)
		v += tmp[i];
	barrier(CLK_LOCAL_MEM_FENCE);
	return v;
}

static inline float wg_max(float v, __local float *tmp)
{
	tmp[get_local_id(0)] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	v = -INFINITY;
	for (int i = 0; i < WG; i++)
		v = fmax(v, tmp[i]);
	barrier(CLK_LOCAL_MEM_FENCE);
	return v;
}

#endif
