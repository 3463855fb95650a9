/* Fused attention with online softmax: no Tq x Tkv scores in memory. One
 * source serves gllmk_attention, gllmk_attention_ext and
 * gllmk_attention_varlen: the host describes every call as S sequences
 * (the single-sequence ops have S = 1), so one body handles all of them.
 *
 * One workgroup per (query row, head, slice of 256 output dims[, split of
 * the tokens: decode over long KV, so that enough workgroups run]). The row
 * finds its sequence by a binary search of cu_q. Its visible tokens
 * [t_lo, t_hi] (causal and sliding window) go in chunks of 64, one per
 * thread for the score; each thread then folds the chunk into its 4 output
 * dims. Per score, in SPEC/OPERATORS.md's order: scale, softcap, + ALiBi,
 * + mask; the causal and window limits are the loop bounds. A sink adds
 * one logit to the denominator: the running (max, sum) start at (sink, 1).
 *
 * -DKV=<dtype id>: k and v are f32, f16, bf16, q8_0 or q4_0 (dtypes.glsl);
 * block types are decoded here, 32 elements along D per block.
 * flags: 1 mask, 2 causal, 4 paged, 8 sinks, 16 ALiBi.
 *
 * Bindings: 0 out, 1 q, 2 k, 3 v, 4 mask, 5 block table(s), 6 the call's
 * index data in 32-bit words, written by the host (ops_attention.c):
 *   [0, S]           cu_q: sequence s owns query rows cu_q[s] .. cu_q[s+1]-1
 *   [S+1, 2S]        kv_len of each sequence
 *   [2S+1, +Hq)      ALiBi slope per head (flag 16)
 *   [2S+1+Hq, +Hq)   sink logit per head (flag 8)
 *   then, when splits > 1, (m, l, acc[Dv]) per (row, head, split): this
 *   pass writes them and the -DMERGE pass combines them into out.
 * The host checked cu_q, kv_len and the block ids before recording the
 * dispatch; a block id outside [0, nblk) is still clamped to 0 here and
 * reported through the status buffer, so nothing reads outside k and v.
 *
 * Inner loops are unrolled by 4/8: llvmpipe stops an invocation after 65535
 * loop iterations in all (about 50k kv tokens at this rate). */
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "dtypes.glsl"

#define WG 64u
#define DV_PER 4u
layout(local_size_x = 64) in;
#include "reduce.glsl"
#include "math.glsl"

#define F_MASK 1u
#define F_CAUSAL 2u
#define F_PAGED 4u
#define F_SINKS 8u
#define F_ALIBI 16u

/* 32 words: the most push constants every device takes (VK_PUSH_BYTES). */
layout(push_constant) uniform Push {
	uint rows, Hq, D, Dv;   /* rows: query rows of all sequences */
	uint group, S, flags, B;
	uint nblk;
	float scale, softcap;   /* softcap <= 0: off */
	uint window;            /* 0: off */
	uint qo, qs0, qs1;
	uint oo, os0, os1;
	uint ko, ks0, ks1, ks2; /* contiguous: token, head; paged: block, slot, head */
	uint vo, vs0, vs1, vs2;
	uint mo, ms0, msh;      /* mask row and head strides (msh 0: shared by the heads) */
	uint bto, bts;          /* block table and its stride per sequence */
	uint splits;            /* > 1: the tokens split over workgroups, then -DMERGE */
} p;

shared float ps[WG];   /* the chunk's softmax numerators */
shared uint vrows[WG]; /* and its v rows, looked up once per token */

#define IDX(w) LD32(b6, 4u * (w))

/* ------------------------------------------------------------ k and v rows */

/* Byte address of token t's row (head kvh) in a k or v tensor; bt is the
 * byte address of the sequence's block table. */
uint kv_row(uint t, uint kvh, uint bt, uint s, uint o, uint s0, uint s1, uint s2)
{
	if ((p.flags & F_PAGED) == 0u)
		return o + t * s0 + kvh * s1;
	uint page = t / p.B;
	int blk = int(LD32(b5, bt + 4u * page));
	if (blk < 0 || uint(blk) >= p.nblk) {
		if (p.S == 1u)
			status_raise(STATUS_BLOCK_TABLE, page, uint(blk), p.nblk);
		else
			status_raise(STATUS_BLOCK_TABLES, s, uint(blk), p.nblk);
		blk = 0;
	}
	return o + uint(blk) * s0 + (t % p.B) * s1 + kvh * s2;
}

/* Element e of the row at byte `row` of buffer BUF, decoded to f32. Not
 * decode.glsl's dq(): that one reads one fixed buffer, and attention reads
 * two (k and v) of the same dtype. */
#if KV == DT_F32
#define KV_ELEM(BUF, row, e) LDF(BUF, (row) + 4u * (e))
#elif KV == DT_F16
#define KV_ELEM(BUF, row, e) h2f(LD16(BUF, (row) + 2u * (e)))
#elif KV == DT_BF16
#define KV_ELEM(BUF, row, e) uintBitsToFloat(LD16(BUF, (row) + 2u * (e)) << 16)
#elif KV == DT_Q8_0
/* block: f16 d, 32 x int8; x = q * d */
#define KV_BLK(row, e) ((row) + 34u * ((e) / 32u))
#define KV_ELEM(BUF, row, e) \
	(float(bitfieldExtract(int(LD8(BUF, KV_BLK(row, e) + 2u + (e) % 32u)), 0, 8)) * h2f(LD16(BUF, KV_BLK(row, e))))
#elif KV == DT_Q4_0
/* block: f16 d, 16 bytes; element j < 16 in the low nibble of byte j,
 * element j + 16 in its high nibble; x = (q - 8) * d */
#define KV_BLK(row, e) ((row) + 18u * ((e) / 32u))
#define KV_ELEM(BUF, row, e) \
	(float(int((LD8(BUF, KV_BLK(row, e) + 2u + ((e) & 15u)) >> ((e) & 16u) / 4u) & 15u) - 8) * h2f(LD16(BUF, KV_BLK(row, e))))
#else
#error "attention.comp: KV must be f32, f16, bf16, q8_0 or q4_0"
#endif

/* q · k for the k row at byte k (buffer b2) and the q row at byte q (b1).
 * Block types decode a whole block per step: its scale once, its quants
 * as 32-bit words. */
float qk_dot(uint q, uint k)
{
	float dot = 0.0;
#if KV == DT_Q8_0 || KV == DT_Q4_0
#if KV == DT_Q8_0
	const uint bytes = 34u;
#else
	const uint bytes = 18u;
#endif
	for (uint b = 0u; b < p.D / 32u; b++) {
		uint blk = k + b * bytes;
		uint qb = q + 128u * b;
		float part = 0.0;
#if KV == DT_Q8_0
		[[unroll]] for (uint w = 0u; w < 8u; w++) {
			int word = int(LD32H(b2, blk + 2u + 4u * w));
			[[unroll]] for (uint j = 0u; j < 4u; j++)
				part += LDF(b1, qb + 4u * (4u * w + j)) * float(bitfieldExtract(word, int(8u * j), 8));
		}
#else
		[[unroll]] for (uint w = 0u; w < 4u; w++) {
			uint word = LD32H(b2, blk + 2u + 4u * w);
			[[unroll]] for (uint j = 0u; j < 4u; j++) {
				uint e = 4u * w + j;
				part += LDF(b1, qb + 4u * e) * float(int(bitfieldExtract(word, int(8u * j), 4)) - 8);
				part += LDF(b1, qb + 4u * (e + 16u)) * float(int(bitfieldExtract(word, int(8u * j + 4u), 4)) - 8);
			}
		}
#endif
		dot += part * h2f(LD16(b2, blk));
	}
#else
	for (uint d0 = 0u; d0 < p.D; d0 += 4u) {
		[[unroll]] for (uint e = 0u; e < 4u; e++) {
			uint d = d0 + e;
			if (d < p.D)
				dot += LDF(b1, q + 4u * d) * KV_ELEM(b2, k, d);
		}
	}
#endif
	return dot;
}

/* ------------------------------------------------------------ the row */

/* The sequence that owns query row r: the last s with cu_q[s] <= r (a
 * sequence with no rows is skipped, as cu_q[s] = cu_q[s+1]). */
uint find_sequence(uint r)
{
	uint lo = 0u, hi = p.S - 1u;
	while (lo < hi) {
		uint mid = (lo + hi + 1u) / 2u;
		if (IDX(mid) <= r)
			lo = mid;
		else
			hi = mid - 1u;
	}
	return lo;
}

/* The score's additive terms in SPEC/OPERATORS.md's order: + ALiBi's
 * -slope·|pos - t|, then + the mask. */
float add_bias(float sc, uint h, int pos, uint t, uint mrow)
{
	if ((p.flags & F_ALIBI) != 0u)
		sc += -uintBitsToFloat(IDX(2u * p.S + 1u + h)) * float(abs(pos - int(t)));
	if ((p.flags & F_MASK) != 0u)
		sc += LDF(b4, mrow + 4u * t);
	return sc;
}

/* Word index of the partial results of split `sp` of (row r, head h):
 * m, l, then Dv accumulator values. */
uint partial_at(uint r, uint h, uint sp)
{
	uint base = 2u * p.S + 1u + p.Hq + ((p.flags & F_SINKS) != 0u ? p.Hq : 0u);
	return base + ((r * p.Hq + h) * p.splits + sp) * (p.Dv + 2u);
}

#ifndef MERGE
void main()
{
	uint slices = (p.Dv + WG * DV_PER - 1u) / (WG * DV_PER);
	uint wg = wg_linear();
	uint sp = wg % p.splits;
	wg /= p.splits;
	uint slice = wg % slices, rh = wg / slices;
	uint r = rh / p.Hq, h = rh % p.Hq;
	if (r >= p.rows)
		return;
	uint lid = gl_LocalInvocationID.x;
	uint kvh = h / p.group;

	uint s = find_sequence(r);
	uint row0 = IDX(s), tq = IDX(s + 1u) - row0;
	int kv_len = int(IDX(p.S + 1u + s));
	int pos = kv_len - int(tq) + int(r - row0); /* the query's position */
	int hi = (p.flags & F_CAUSAL) != 0u ? min(pos, kv_len - 1) : kv_len - 1;
	int lo = p.window > 0u ? max(pos - int(p.window) + 1, 0) : 0;
	uint t_lo = uint(lo), n_t = uint(max(hi + 1, lo)); /* tokens [t_lo, n_t) */
	if (p.splits > 1u) {
		/* this split's share, whole chunks of WG tokens */
		uint per = ((n_t - t_lo + p.splits - 1u) / p.splits + WG - 1u) / WG * WG;
		t_lo = min(n_t, t_lo + sp * per);
		n_t = min(n_t, t_lo + per);
	}

	uint bt = p.bto + s * p.bts;
	uint q = p.qo + r * p.qs0 + h * p.qs1;
	uint mrow = p.mo + r * p.ms0 + h * p.msh;
	uint d0 = slice * WG * DV_PER;
	float acc[DV_PER];
	[[unroll]] for (uint c = 0u; c < DV_PER; c++)
		acc[c] = 0.0;
	float m = NEG_INF, l = 0.0;
	if ((p.flags & F_SINKS) != 0u && p.splits == 1u) { /* split: the merge adds it */
		m = uintBitsToFloat(IDX(2u * p.S + 1u + p.Hq + h));
		l = m == NEG_INF ? 0.0 : 1.0;
	}

	for (uint t0 = t_lo; t0 < n_t; t0 += WG) {
		uint t = t0 + lid;
		float sc = NEG_INF;
		if (t < n_t) {
			vrows[lid] = kv_row(t, kvh, bt, s, p.vo, p.vs0, p.vs1, p.vs2);
			sc = p.scale * qk_dot(q, kv_row(t, kvh, bt, s, p.ko, p.ks0, p.ks1, p.ks2));
			if (p.softcap > 0.0)
				sc = p.softcap * tanh_acc(sc / p.softcap);
			sc = add_bias(sc, h, pos, t, mrow);
		}
		float mnew = max(m, wg_max(sc));
		if (mnew == NEG_INF)
			continue; /* uniform: wg_max gives every thread the same */
		float corr = exp(m - mnew);
		float pj = exp(sc - mnew);
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
							a += ps[j] * KV_ELEM(b3, vrows[j], d);
					}
				}
				acc[c] = a;
			}
		}
		m = mnew;
		barrier();
	}

	if (p.splits > 1u) {
		uint at = partial_at(r, h, sp);
		if (slice == 0u && lid == 0u) {
			STF(b6, 4u * at, m);
			STF(b6, 4u * (at + 1u), l);
		}
		[[unroll]] for (uint c = 0u; c < DV_PER; c++) {
			uint d = d0 + lid + WG * c;
			if (d < p.Dv)
				STF(b6, 4u * (at + 2u + d), acc[c]);
		}
		return;
	}
	uint o = p.oo + r * p.os0 + h * p.os1;
	[[unroll]] for (uint c = 0u; c < DV_PER; c++) {
		uint d = d0 + lid + WG * c;
		if (d < p.Dv)
			STF(b0, o + 4u * d, l > 0.0 ? acc[c] / l : 0.0);
	}
}
#else
/* -DMERGE: the second pass of a split call, one workgroup per (row,
 * head): the splits' (m, l, acc) combined as one online softmax would,
 * with the sink's logit added to the denominator here. */
void main()
{
	uint rh = wg_linear();
	uint r = rh / p.Hq, h = rh % p.Hq;
	if (r >= p.rows)
		return;
	float mx = NEG_INF;
	if ((p.flags & F_SINKS) != 0u)
		mx = uintBitsToFloat(IDX(2u * p.S + 1u + p.Hq + h));
	for (uint sp = 0u; sp < p.splits; sp++)
		mx = max(mx, LDF(b6, 4u * partial_at(r, h, sp)));
	float l = 0.0;
	if (mx != NEG_INF) {
		if ((p.flags & F_SINKS) != 0u)
			l = exp(uintBitsToFloat(IDX(2u * p.S + 1u + p.Hq + h)) - mx);
		for (uint sp = 0u; sp < p.splits; sp++) {
			uint at = partial_at(r, h, sp);
			l += LDF(b6, 4u * (at + 1u)) * exp(LDF(b6, 4u * at) - mx);
		}
	}
	uint o = p.oo + r * p.os0 + h * p.os1;
	for (uint d = gl_LocalInvocationID.x; d < p.Dv; d += WG) {
		float a = 0.0;
		if (l > 0.0) {
			for (uint sp = 0u; sp < p.splits; sp++) {
				uint at = partial_at(r, h, sp);
				a += LDF(b6, 4u * (at + 2u + d)) * exp(LDF(b6, 4u * at) - mx);
			}
			a /= l;
		}
		STF(b0, o + 4u * d, a);
	}
}
#endif
