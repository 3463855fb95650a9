/* Fused attention with online softmax: no Tq x Tkv scores in memory.
 * One workgroup per (query, head, slice of 256 output dims). Tokens go in
 * chunks of 64, one per thread for the score; each thread then folds the
 * chunk into its 4 output dims. -DKV_F16: k and v are f16.
 * flags: 1 mask, 2 causal, 4 paged (block_table). A block id outside
 * [0, nblk) is clamped to 0 and reported through the status buffer.
 * Inner loops are unrolled by 4/8: llvmpipe stops an invocation after 65535
 * loop iterations in all (about 50k kv tokens at this rate).
 * Bindings: 0 out, 1 q, 2 k, 3 v, 4 mask, 5 block_table. */
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define WG 64u
#define DV_PER 4u
layout(local_size_x = 64) in;
#include "reduce.glsl"

layout(push_constant) uniform Push {
	uint Tq, Hq, D, Dv;
	uint group, kv_len, flags, B;
	uint nblk, slices;
	float scale;
	uint qo, qs0, qs1;
	uint oo, os0, os1;
	uint ko, ks0, ks1, ks2;
	uint vo, vs0, vs1, vs2;
	uint mo, ms0, bto;
} p;


shared float ps[WG];

/* Byte address of token t's row (head kvh) in a k or v tensor. */
uint kv_row(uint t, uint kvh, uint o, uint s0, uint s1, uint s2)
{
	if ((p.flags & 4u) == 0u)
		return o + t * s0 + kvh * s1;
	uint page = t / p.B;
	int blk = int(LD32(b5, p.bto + 4u * page));
	if (blk < 0 || uint(blk) >= p.nblk) {
		status_raise(STATUS_BLOCK_TABLE, page, uint(blk), p.nblk);
		blk = 0;
	}
	return o + uint(blk) * s0 + (t % p.B) * s1 + kvh * s2;
}

#ifdef KV_F16
#define KV_LD(B, row, d) h2f(LD16(B, (row) + 2u * (d)))
#else
#define KV_LD(B, row, d) LDF(B, (row) + 4u * (d))
#endif

void main()
{
	uint wg = wg_linear();
	uint slice = wg % p.slices, qh = wg / p.slices;
	uint i = qh / p.Hq, h = qh % p.Hq;
	if (i >= p.Tq)
		return;
	uint lid = gl_LocalInvocationID.x;
	uint kvh = h / p.group;
	int last = (p.flags & 2u) != 0u ? int(p.kv_len) - int(p.Tq) + int(i) : int(p.kv_len) - 1;
	uint n_t = uint(clamp(last + 1, 0, int(p.kv_len)));
	uint q = p.qo + i * p.qs0 + h * p.qs1;
	uint d0 = slice * WG * DV_PER;
	float acc[DV_PER];
	[[unroll]] for (uint c = 0u; c < DV_PER; c++)
		acc[c] = 0.0;
	float m = NEG_INF, l = 0.0;

	for (uint t0 = 0u; t0 < n_t; t0 += WG) {
		uint t = t0 + lid;
		float s = NEG_INF;
		if (t < n_t) {
			uint k = kv_row(t, kvh, p.ko, p.ks0, p.ks1, p.ks2);
			float dot = 0.0;
			for (uint d0 = 0u; d0 < p.D; d0 += 4u) {
				[[unroll]] for (uint e = 0u; e < 4u; e++) {
					uint d = d0 + e;
					if (d < p.D)
						dot += LDF(b1, q + 4u * d) * KV_LD(b2, k, d);
				}
			}
			s = p.scale * dot;
			if ((p.flags & 1u) != 0u)
				s += LDF(b4, p.mo + i * p.ms0 + 4u * t);
		}
		float mnew = max(m, wg_max(s));
		if (mnew == NEG_INF)
			continue;
		float corr = exp(m - mnew);
		float pj = exp(s - mnew);
		ps[lid] = pj;
		l = l * corr + wg_sum(pj);
		uint cnt = min(WG, n_t - t0);
		[[unroll]] for (uint c = 0u; c < DV_PER; c++) {
			uint d = d0 + lid + WG * c;
			if (d < p.Dv) {
				float a = acc[c] * corr;
				for (uint j0 = 0u; j0 < cnt; j0 += 8u) {
					[[unroll]] for (uint e = 0u; e < 8u; e++) {
						uint j = j0 + e;
						if (j < cnt)
							a += ps[j] * KV_LD(b3, kv_row(t0 + j, kvh, p.vo, p.vs0, p.vs1, p.vs2), d);
					}
				}
				acc[c] = a;
			}
		}
		m = mnew;
		barrier();
	}

	uint o = p.oo + i * p.os0 + h * p.os1;
	[[unroll]] for (uint c = 0u; c < DV_PER; c++) {
		uint d = d0 + lid + WG * c;
		if (d < p.Dv)
			STF(b0, o + 4u * d, l > 0.0 ? acc[c] / l : 0.0);
	}
}
