/* kv_store: rows of x f32 [T, Hkv, D] encoded into cache slots
 * (SPEC/OPERATORS.md "kv_store"); -DCTYPE is the cache dtype. Token t's row
 * for head h goes to slot s = slots[t] (skipped when -1): row s % page of
 * block s / page, head h (a contiguous cache is one block of `cap` rows).
 * The slots are checked here, not read back by the host: a slot out of
 * range (other than -1) is skipped and raised in the status words. One work-item per element (f32, f16, bf16) or
 * per 32-element block (q8_0, q4_0) of a row. */
#include "common.h"
#include "encode.h"

__kernel void KNAME(gbytes *cb, ulong c_off, long cs_blk, long cs_row, long cs_head, long page, long cap,
		    cbytes *xb, ulong x_off, long x_s0, long x_s1, cbytes *sb, ulong s_off, long heads,
		    long units, long total, __global int *status)
{
	long g = get_global_id(0);

	if (g >= total)
		return;
	long u = g % units, th = g / units, h = th % heads, t = th / heads;
	long s = ((__global const int *)(sb + s_off))[t];

	if (s < 0 || s >= cap) {
		if (s != -1 && u == 0 && h == 0)
			status_raise(status, STATUS_KV_SLOTS, t, 0, s, cap);
		return;
	}
	gbytes *c = cb + c_off + (s / page) * cs_blk + (s % page) * cs_row + h * cs_head;
	__global const float *x = (__global const float *)(xb + x_off + t * x_s0 + h * x_s1);

#if CTYPE == DT_F32
	((__global float *)c)[u] = x[u];
#elif CTYPE == DT_F16
	vstore_half_rte(x[u], u, (__global half *)c);
#elif CTYPE == DT_BF16
	((__global ushort *)c)[u] = f32_to_bf16(x[u]);
#elif CTYPE == DT_Q8_0
	encode_q8_0(x + 32 * u, c + 34 * u);
#elif CTYPE == DT_Q4_0
	encode_q4_0(x + 32 * u, c + 18 * u);
#else
#error "kv_store.cl: unknown CTYPE"
#endif
}
