/* kv_store: rows of x f32 [T, Hkv, D] encoded into cache slots
 * (SPEC/OPERATORS.md "kv_store"); -DCTYPE is the cache dtype. Token t's
 * row for head h goes to slot s = slots[t] (skipped when -1): row
 * s % page of block s / page, head h (a contiguous cache is one block of
 * `cap` rows). Where the host could read the slots without waiting it
 * checked them before recording this (plugins/vulkan/ops_common.c); here a
 * slot out of range is skipped and raised (STATUS_KV_SLOTS), which the next
 * sync reports.
 * One invocation per unit of a row: an element (f32), a pair of elements
 * (f16, bf16: one 32-bit word where the row is 4-aligned) or a 32-element
 * block (q8_0, q4_0). Cache rows are only 2-aligned, so words shared with
 * a neighbouring row are written with masked atomics.
 * Bindings: 0 cache, 1 x, 2 slots. */
#version 450
#include "common.glsl"
#include "dtypes.glsl"
#include "encode.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
	uint units, heads, d, total;   /* units per row; total = T · Hkv · units */
	uint xo, xs0, xs1;             /* x: byte offset, token and head strides */
	uint so;                       /* slots: byte offset (1-D: contiguous) */
	uint co, cs_blk, cs_row, cs_head, page, cap;
} p;

#if CTYPE == DT_F16 || CTYPE == DT_BF16
uint encode16(uint f)
{
#if CTYPE == DT_F16
	return f2h_bits(f);
#else
	return f2bf_bits(f);
#endif
}
#endif

void main()
{
	uint step = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u;

	for (uint e = wg_linear() * 256u + gl_LocalInvocationID.x; e < p.total; e += step) {
		uint u = e % p.units, th = e / p.units;
		uint h = th % p.heads, t = th / p.heads;
		int s = int(LD32(b2, p.so + 4u * t));
		if (s < 0 || uint(s) >= p.cap) {
			if (s != -1 && u == 0u && h == 0u)
				status_raise(STATUS_KV_SLOTS, t, uint(s), p.cap);
			continue;
		}
		uint crow = p.co + (uint(s) / p.page) * p.cs_blk + (uint(s) % p.page) * p.cs_row + h * p.cs_head;
		uint xrow = p.xo + t * p.xs0 + h * p.xs1;
#if CTYPE == DT_F32
		b0.d[(crow >> 2) + u] = LD32(b1, xrow + 4u * u);
#elif CTYPE == DT_F16 || CTYPE == DT_BF16
		uint a = crow + 4u * u;
		uint lo = encode16(LD32(b1, xrow + 8u * u));
		if (2u * u + 1u < p.d) {
			uint hi = encode16(LD32(b1, xrow + 8u * u + 4u));
			if ((a & 3u) == 0u) {
				b0.d[a >> 2] = lo | (hi << 16);
			} else {
				st16_shared(a, lo);
				st16_shared(a + 2u, hi);
			}
		} else {
			st16_shared(a, lo);
		}
#elif CTYPE == DT_Q8_0
		uint hv[17];
		encode_q8_0(xrow + 128u * u, hv);
		store_halves(crow + 34u * u, hv, Q8_0_HALVES);
#else
		uint hv[17];
		encode_q4_0(xrow + 128u * u, hv);
		store_halves(crow + 18u * u, hv, Q4_0_HALVES);
#endif
	}
}
