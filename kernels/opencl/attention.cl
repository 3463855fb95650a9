/* Fused attention with online softmax: no Tq×Tkv scores in memory. One
 * kernel serves gllmk_attention, gllmk_attention_ext and
 * gllmk_attention_varlen. One work-item per (query row r, head h); out's
 * row is the running accumulator (out never overlaps an input), rescaled
 * when the running max grows.
 *
 * Sequences: varlen finds r's sequence s by a binary search of cu_q and
 * reads its kv_len and block table row; the single-sequence ops pass
 * varlen = 0 with their Tq and kv_len as arguments.
 * Query r's position is p = kv_len - Tq + (r - cu_q[s]). Per score, in
 * SPEC/OPERATORS.md's order: scale, softcap, + ALiBi (-slope_h·|p - t|),
 * + mask; causal (t <= p) and the window (t > p - window) are the loop's
 * bounds. A sink adds one logit to the denominator: the running (max, sum)
 * start at (sink, 1).
 *
 * Split KV (decode over long KV, so that enough work-items run): with
 * splits > 1 each (row, head) has `splits` work-items, each over a share of
 * the tokens, accumulating into its partial record (m, l, acc[Dv]) in pb
 * instead of out; the -DMERGE kernel combines them and adds the sink.
 *
 * k, v: -DWTYPE=<dtype> (f32, f16, bf16, q8_0 or q4_0), decoded by
 * decode.h: element by element for the float types, 32 at a time into
 * registers for the blocks.
 *
 * Token t of kv head hk lives at k_off + blk·k_sb + slot·k_st + hk·k_sh with
 *   contiguous: blk = 0, slot = t (page = kv_len, no table),
 *   paged:      blk = table[t / page], slot = t % page.
 * cu_q, kv_len and the table were checked on the host before this was
 * enqueued (SPEC/OPENCL.md); the clamps keep a stray entry inside k and v. */
#include "decode.h"

#ifndef MERGE

/* q · k over D */
static float qk_dot(__global const float *q, cbytes *k, long D)
{
	float s = 0.0f;
#if WBLOCK
	for (long c = 0; c < D / 32; c++) {
		float w[32], part = 0.0f;

		deq32(k + c * WQB, 0, w);
		for (int j = 0; j < 32; j++)
			part = fma(q[32 * c + j], w[j], part);
		s += part;
	}
#else
	for (long d = 0; d < D; d++)
		s = fma(q[d], wload(k, d), s);
#endif
	return s;
}

/* out += p · v over Dv */
static void add_v(__global float *out, float p, cbytes *v, long Dv)
{
#if WBLOCK
	for (long c = 0; c < Dv / 32; c++) {
		float w[32];

		deq32(v + c * WQB, 0, w);
		for (int j = 0; j < 32; j++)
			out[32 * c + j] = fma(p, w[j], out[32 * c + j]);
	}
#else
	for (long d = 0; d < Dv; d++)
		out[d] = fma(p, wload(v, d), out[d]);
#endif
}

/* The sequence owning row r: the last s with cu_q[s] <= r. */
static long find_sequence(__global const int *cu_q, long S, long r)
{
	long lo = 0, hi = S - 1;

	while (lo < hi) {
		long mid = (lo + hi + 1) / 2;

		if (cu_q[mid] <= r)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* ggml's ALiBi slope of head h */
static float alibi_slope(long h, long n_head_log2, float m0, float m1)
{
	return h < n_head_log2 ? pown(m0, (int)(h + 1)) : pown(m1, (int)(2 * (h - n_head_log2) + 1));
}

__kernel void KNAME(gbytes *ob, ulong o_off, long o_s0, long o_s1, cbytes *qb, ulong q_off, long q_s0, long q_s1,
		    cbytes *kb, ulong k_off, long k_sb, long k_st, long k_sh, cbytes *vb, ulong v_off, long v_sb,
		    long v_st, long v_sh, cbytes *mb, ulong m_off, long m_s0, long m_sh, int has_mask,
		    cbytes *tb, ulong t_off, long t_s0, int paged, long page, long nblk,
		    cbytes *cb, ulong cu_off, cbytes *lb, ulong len_off, int varlen, long S,
		    cbytes *sb, ulong sink_off, long sink_s0, int has_sinks, gbytes *pb, long splits,
		    long rows, long Hq, long group, long D, long Dv, long Tq, long kv_len_arg, int causal, float scale,
		    float softcap, float m0, float m1, long n_head_log2, int alibi, long window)
{
	long g = get_global_id(0);

	if (g >= rows * Hq * splits)
		return;
	long sp = g % splits, rh = g / splits;
	long r = rh / Hq, h = rh % Hq, hk = h / group;
	long s = 0, row0 = 0, tq = Tq, kv_len = kv_len_arg;

	if (varlen) {
		__global const int *cu_q = (__global const int *)(cb + cu_off);

		s = find_sequence(cu_q, S, r);
		row0 = cu_q[s];
		tq = cu_q[s + 1] - row0;
		kv_len = ((__global const int *)(lb + len_off))[s];
	}
	long pos = kv_len - tq + (r - row0);
	long hi = causal ? min(kv_len - 1, pos) : kv_len - 1;
	long lo = window > 0 ? max(pos - window + 1, 0L) : 0;

	if (splits > 1 && hi >= lo) { /* this work-item's share */
		long per = (hi - lo + splits) / splits;

		lo += sp * per;
		hi = min(hi, lo + per - 1);
	}
	__global const int *table = (__global const int *)(tb + t_off + s * t_s0);
	__global const float *q = (__global const float *)(qb + q_off + r * q_s0 + h * q_s1);
	/* the accumulator: out's row, or the split's partial record */
	__global float *part = (__global float *)pb + (rh * splits + sp) * (Dv + 2);
	__global float *out = splits > 1 ? part + 2 : (__global float *)(ob + o_off + r * o_s0 + h * o_s1);
	__global const float *mask = (__global const float *)(mb + m_off + r * m_s0 + h * m_sh);
	float slope = alibi ? alibi_slope(h, n_head_log2, m0, m1) : 0.0f;
	float mx = -INFINITY, sum = 0.0f;

	if (has_sinks && splits == 1) { /* split: the merge adds it */
		mx = *(__global const float *)(sb + sink_off + h * sink_s0);
		sum = mx == -INFINITY ? 0.0f : 1.0f;
	}
	for (long d = 0; d < Dv; d++)
		out[d] = 0.0f;
	for (long t = lo; t <= hi; t++) {
		long blk = paged ? clamp((long)table[t / page], 0L, nblk - 1) : 0, slot = paged ? t % page : t;
		cbytes *k = kb + k_off + blk * k_sb + slot * k_st + hk * k_sh;
		cbytes *v = vb + v_off + blk * v_sb + slot * v_st + hk * v_sh;
		float sc = scale * qk_dot(q, k, D);

		if (softcap > 0.0f)
			sc = softcap * tanh(sc / softcap);
		if (alibi)
			sc -= slope * (float)abs(pos - t);
		if (has_mask)
			sc += mask[t];
		if (sc == -INFINITY)
			continue;
		if (sc > mx) {
			float c = exp(mx - sc);

			sum *= c;
			for (long d = 0; d < Dv; d++)
				out[d] *= c;
			mx = sc;
		}
		float p = exp(sc - mx);

		sum += p;
		add_v(out, p, v, Dv);
	}
	if (splits > 1) {
		part[0] = mx;
		part[1] = sum;
		return;
	}
	float inv = sum > 0.0f ? 1.0f / sum : 0.0f;

	for (long d = 0; d < Dv; d++)
		out[d] *= inv;
}
#else
/* One work-item per output element (row, head, d): the splits' partial
 * records rescaled to their common max (with the sink's logit), summed,
 * divided. */
__kernel void KNAME(gbytes *ob, ulong o_off, long o_s0, long o_s1, cbytes *pb, cbytes *sb, ulong sink_off,
		    long sink_s0, int has_sinks, long splits, long rows, long Hq, long Dv)
{
	long g = get_global_id(0);

	if (g >= rows * Hq * Dv)
		return;
	long d = g % Dv, rh = g / Dv, r = rh / Hq, h = rh % Hq;
	__global const float *part = (__global const float *)pb + rh * splits * (Dv + 2);
	float sink = has_sinks ? *(__global const float *)(sb + sink_off + h * sink_s0) : -INFINITY;
	float mx = sink, sum = 0.0f, acc = 0.0f;

	for (long sp = 0; sp < splits; sp++)
		mx = fmax(mx, part[sp * (Dv + 2)]);
	if (mx != -INFINITY) {
		sum = has_sinks ? exp(sink - mx) : 0.0f;
		for (long sp = 0; sp < splits; sp++) {
			__global const float *p = part + sp * (Dv + 2);
			float c = exp(p[0] - mx);

			sum = fma(p[1], c, sum);
			acc = fma(p[2 + d], c, acc);
		}
	}
	*(__global float *)(ob + o_off + r * o_s0 + h * o_s1 + 4 * d) = sum > 0.0f ? acc / sum : 0.0f;
}
#endif
