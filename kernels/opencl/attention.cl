/* Fused attention with online softmax: no Tq×Tkv scores in memory. One
 * work-item per (query i, head h); out's row is the running accumulator
 * (out never overlaps an input), rescaled when the running max grows.
 * k, v f32 (default) or f16 (-DKV_F16).
 *
 * Token t of kv head hk lives at k_off + blk·k_sb + slot·k_st + hk·k_sh with
 *   contiguous: blk = 0, slot = t (page = kv_len, no table),
 *   paged:      blk = table[t / page], slot = t % page.
 * The table was checked on the host before this was enqueued
 * (SPEC/OPENCL.md); the clamp keeps a stray entry inside k and v. */
#include "common.h"

#ifdef KV_F16
#define KV_LOAD(p, d) vload_half((d), (__global const half *)(p))
#else
#define KV_LOAD(p, d) (((__global const float *)(p))[d])
#endif

__kernel void KNAME(gbytes *ob, ulong o_off, long o_s0, long o_s1, cbytes *qb, ulong q_off, long q_s0, long q_s1,
		    cbytes *kb, ulong k_off, long k_sb, long k_st, long k_sh, cbytes *vb, ulong v_off, long v_sb,
		    long v_st, long v_sh, cbytes *mb, ulong m_off, long m_s0, int has_mask,
		    cbytes *tb, ulong t_off, int paged, long page, long nblk, long Tq, long Hq, long group, long D,
		    long Dv, long kv_len, int causal, float scale)
{
	long g = get_global_id(0);

	if (g >= Tq * Hq)
		return;
	long i = g / Hq, h = g % Hq, hk = h / group;
	__global const float *q = (__global const float *)(qb + q_off + i * q_s0 + h * q_s1);
	__global float *out = (__global float *)(ob + o_off + i * o_s0 + h * o_s1);
	__global const float *mask = (__global const float *)(mb + m_off + i * m_s0);
	long last = causal ? min(kv_len - 1, kv_len - Tq + i) : kv_len - 1;
	float mx = -INFINITY, sum = 0.0f;

	for (long d = 0; d < Dv; d++)
		out[d] = 0.0f;
	for (long t = 0; t <= last; t++) {
		long blk = paged ? clamp((long)((__global const int *)(tb + t_off))[t / page], 0L, nblk - 1) : 0, slot = paged ? t % page : t;
		cbytes *k = kb + k_off + blk * k_sb + slot * k_st + hk * k_sh;
		cbytes *v = vb + v_off + blk * v_sb + slot * v_st + hk * v_sh;
		float s = 0.0f;

		for (long d = 0; d < D; d++)
			s = fma(q[d], KV_LOAD(k, d), s);
		s = scale * s + (has_mask ? mask[t] : 0.0f);
		if (s == -INFINITY)
			continue;
		if (s > mx) {
			float c = exp(mx - s);

			sum *= c;
			for (long d = 0; d < Dv; d++)
				out[d] *= c;
			mx = s;
		}
		float p = exp(s - mx);

		sum += p;
		for (long d = 0; d < Dv; d++)
			out[d] = fma(p, KV_LOAD(v, d), out[d]);
	}
	float inv = sum > 0.0f ? 1.0f / sum : 0.0f;

	for (long d = 0; d < Dv; d++)
		out[d] *= inv;
}
