/* Matrix-vector product for small M: y[m, n] = x[m, :] . w[n, :] (+ bias[n]).
 * One workgroup per weight row n (and batch b, matmul_batched: x, w and y
 * offset by b times their batch strides); the row is decoded once and dotted with
 * up to MV_M activation rows, then reduced across the workgroup.
 *
 * Q8_0, Q4_0, Q4_K, Q6_K and the formats of ABI 1.1 (MV_UNITS): the row is
 * cut into 32-element units (a block of Q8_0/Q4_0/MXFP4, a sub-block of
 * Q4_K/Q6_K, four 8-element groups of the i-quants and TQ1_0/TQ2_0:
 * dq_group()) and each unit into parts of 4 (dq_group: 8) elements decoded
 * in registers from one 32-bit word of packed quants; invocation t takes
 * parts t, t + WG, ... (unit_part).
 * Each element is decoded with dq()'s formula and order, so results match
 * the element path. Other dtypes decode element by element through dq()
 * (decode.glsl). The i-quants' codebook is copied to shared memory when
 * the workgroup starts (codebook_load, CODEBOOK_SHARED).
 *
 * x is read four elements a load where the host says it is 16-byte aligned
 * (flags & 4, load_x4).
 *
 * -DSUBGROUP: the reduction uses subgroupAdd (Vulkan 1.1 subgroup
 * arithmetic), then one shared slot per subgroup; without it, a shared
 * memory tree. The host picks the variant from the device's subgroup
 * properties. Fixed-size loops are [[unroll]]ed: llvmpipe stops an
 * invocation after 65535 loop iterations in all.
 *
 * -DIDS: matmul_id (expert matmul). One workgroup per (weight row n, token
 * t); it walks the token's k slots, reading each slot's expert id on the
 * device (so a decode loop never reads ids back), and dots row n of that
 * expert's matrix with the slot's x row: the same decode and reduction as
 * above with one activation row. Without slot weights each slot's result
 * goes to y[t, j, n]; with them y[t, n] = sum_j weight[t, j] · result. An id
 * outside [0, E) is clamped to 0 and raised in the status buffer.
 * Bindings: 0 y, 1 w, 2 x, 3 bias; IDS: 4 ids, 5 slot weights. */
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#define QB b1
#define CODEBOOK_SHARED
#include "decode.glsl"

#define WG 64u
#define MV_M 4u
layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
	uint M, N, K, flags;       /* flags: 1 bias, 2 slot weights (IDS), 4 x 16-byte aligned */
	uint xo, xs0;
	uint wo, ws0;
	uint yo, ys0;
	uint biaso;
	/* The outer index's byte strides: matmul_batched's batch (x, w, y), or
	 * with IDS a slot of x, an expert of w, a slot of y; B: batches (1 for
	 * matmul). IDS only below: M above is T, the tokens. */
	uint xs1, wse, ys1, B;
	uint biase;                /* bias's expert stride */
	uint ido, ids0;            /* ids [T, k] */
	uint swo, sws0;            /* slot weights [T, k]; flags & 2: present */
	uint k, E;
} p;

#if WTYPE == DT_Q8_0 || WTYPE == DT_Q4_0 || WTYPE == DT_Q4_K || WTYPE == DT_Q6_K || defined(DQ_GROUPS)
#define MV_UNITS
#endif

/* Partial sums: [j][subgroup] with SUBGROUP (at most WG subgroups), else
 * [j][invocation]. */
shared float red[MV_M][WG];

/* The invocation's state for the current pass over activation rows
 * m0 .. m0 + mc - 1 (private to each invocation, not shared). */
float acc[MV_M];
uint m0, mc;
uint xbase;    /* byte address of activation row 0 of the pass */
uint biasbase; /* byte address of the bias row */

/* x 16-byte aligned (flags & 4: its offset and row stride are multiples of
 * 16): four elements in one load instead of four. */
layout(std430, binding = 2) readonly buffer Buf2v { vec4 d[]; } b2v;

/* x[k .. k + 3] at byte xa. */
vec4 load_x4(uint xa)
{
	if ((p.flags & 4u) != 0u)
		return b2v.d[xa >> 4];
	return vec4(LDF(b2, xa), LDF(b2, xa + 4u), LDF(b2, xa + 8u), LDF(b2, xa + 12u));
}

/* acc[j] += v . x[m0 + j, k .. k + 3] for the rows present. */
void fma4(vec4 v, uint k)
{
	[[unroll]] for (uint j = 0u; j < MV_M; j++) {
		if (j < mc) {
			vec4 xv = load_x4(xbase + (m0 + j) * p.xs0 + 4u * k);
			acc[j] += v.x * xv.x;
			acc[j] += v.y * xv.y;
			acc[j] += v.z * xv.z;
			acc[j] += v.w * xv.w;
		}
	}
}

#ifdef MV_UNITS
#define UNITS_PER_BLOCK (QK / 32u)
/* A unit is split into parts of 4 elements (8 elements for dq_group's
 * formats), part pp covering elements 32 u + 4 pp (+ 8 pp): a workgroup's
 * neighbouring invocations then read neighbouring words of the weights and
 * of x. With one whole unit an invocation, neighbours were 128 bytes of x
 * apart and every load of a subgroup touched 32 cache lines (NVIDIA H200:
 * 108 GB/s for q4_K at M = 1). */
#ifdef DQ_GROUPS
#define UNIT_PARTS 4u
#else
#define UNIT_PARTS 8u
#endif

/* Part pp of unit u (32 elements, from element 32 u) of the row at byte w. */
void unit_part(uint w, uint u, uint pp)
{
	uint b = w + (u / UNITS_PER_BLOCK) * BLOCK_BYTES;
	uint k = 32u * u;
#if WTYPE == DT_Q8_0
	float d = h2f(LD16(QB, b));
	uvec4 q = bytes4(LD32H(QB, b + 2u + 4u * pp));
	fma4(vec4(sext8(q.x), sext8(q.y), sext8(q.z), sext8(q.w)) * d, k + 4u * pp);
#elif WTYPE == DT_Q4_0
	float d = h2f(LD16(QB, b));
	uvec4 q = bytes4(LD32H(QB, b + 2u + 4u * (pp % 4u)));
	q = pp >= 4u ? q >> 4 : q & 0xFu;
	fma4((vec4(q) - 8.0) * d, k + 4u * pp);
#elif WTYPE == DT_Q4_K
	uint s = u % 8u, g = s / 2u, sub = s % 2u;
	float dd = h2f(LD16(QB, b));
	float dmin = h2f(LD16(QB, b + 2u));
	uint sc, mn;
	scale_min_k4(b + 4u, s, sc, mn);
	float d1 = dd * float(sc);
	float m1 = dmin * float(mn);
	uvec4 q = bytes4(LD32H(QB, b + 16u + g * 32u + 4u * pp));
	q = sub != 0u ? q >> 4 : q & 0xFu;
	precise vec4 v = d1 * vec4(q) - m1;
	fma4(v, k + 4u * pp);
#elif WTYPE == DT_Q6_K
	uint s = u % 8u, n = s / 4u, qt = s % 4u;
	uint half_ = pp / 4u, l = 4u * pp;
	float dd = h2f(LD16(QB, b + 208u));
	float sc = float(sext8(LD8(QB, b + 192u + n * 8u + half_ + 2u * qt)));
	uvec4 ql = bytes4(LD32H(QB, b + n * 64u + l + (qt & 1u) * 32u));
	ql = qt >= 2u ? ql >> 4 : ql & 0xFu;
	uvec4 qh = (bytes4(LD32H(QB, b + 128u + n * 32u + l)) >> (2u * qt)) & 3u;
	vec4 q = vec4(ivec4(ql | (qh << 4)) - 32);
	precise vec4 v = dd * sc * q;
	fma4(v, k + l);
#elif defined(DQ_GROUPS)
	float d;
	vec4 lo, hi;
	dq_group(b, 4u * (u % UNITS_PER_BLOCK) + pp, d, lo, hi);
	fma4(d * lo, k + 8u * pp);
	fma4(d * hi, k + 8u * pp + 4u);
#endif
}
#endif

/* Sums acc[j] over the workgroup into the shared partial sums; then
 * reduced(j) is row m0 + j's dot product. */
uint reduce_parts(uint t)
{
#ifdef SUBGROUP
	[[unroll]] for (uint j = 0u; j < MV_M; j++) {
		float s = subgroupAdd(acc[j]);
		if (subgroupElect())
			red[j][gl_SubgroupID] = s;
	}
	barrier();
	return gl_NumSubgroups;
#else
	[[unroll]] for (uint j = 0u; j < MV_M; j++)
		red[j][t] = acc[j];
	barrier();
	for (uint s = WG / 2u; s > 0u; s >>= 1) {
		if (t < s)
			[[unroll]] for (uint j = 0u; j < MV_M; j++)
				red[j][t] += red[j][t + s];
		barrier();
	}
	return 1u;
#endif
}

float reduced(uint j, uint parts, uint n)
{
	float v = 0.0;
	for (uint g = 0u; g < parts; g++)
		v += red[j][g];
	if ((p.flags & 1u) != 0u)
		v += LDF(b3, biasbase + 4u * n);
	return v;
}

/* Dots weight row w with activation rows m0 .. m0 + mc - 1 into acc. */
void dot_rows(uint w, uint t)
{
	[[unroll]] for (uint j = 0u; j < MV_M; j++)
		acc[j] = 0.0;
#ifdef MV_UNITS
	for (uint v = t; v < p.K / 32u * UNIT_PARTS; v += WG)
		unit_part(w, v / UNIT_PARTS, v % UNIT_PARTS);
#else
	for (uint k = t; k < p.K; k += WG) {
		float wv = dq(w, k);
		[[unroll]] for (uint j = 0u; j < MV_M; j++)
			if (j < mc)
				acc[j] += wv * LDF(b2, xbase + (m0 + j) * p.xs0 + 4u * k);
	}
#endif
}

#ifndef IDS
void main()
{
	uint t = gl_LocalInvocationID.x;
	codebook_load(t, WG);
	uint g = wg_linear();
	uint n = g % p.N, b = g / p.N; /* row n of batch b */
	if (b >= p.B)
		return;
	uint w = p.wo + b * p.wse + n * p.ws0;

	xbase = p.xo + b * p.xs1;
	biasbase = p.biaso;
	for (m0 = 0u; m0 < p.M; m0 += MV_M) {
		mc = min(MV_M, p.M - m0);
		dot_rows(w, t);
		uint parts = reduce_parts(t);
		if (t < mc)
			STF(b0, p.yo + b * p.ys1 + (m0 + t) * p.ys0 + 4u * n, reduced(t, parts, n));
		barrier();
	}
}
#else
void main()
{
	uint t = gl_LocalInvocationID.x;
	codebook_load(t, WG);
	uint g = wg_linear();
	if (g >= p.N * p.M)
		return;
	uint n = g % p.N, tok = g / p.N;
	float sum = 0.0;

	m0 = 0u;
	mc = 1u;
	for (uint j = 0u; j < p.k; j++) {
		int id = int(LD32(b4, p.ido + tok * p.ids0 + 4u * j));
		if (id < 0 || uint(id) >= p.E) {
			if (n == 0u && t == 0u)
				status_raise_slot(STATUS_EXPERT_IDS, tok, j, uint(id), p.E);
			id = 0;
		}
		xbase = p.xo + tok * p.xs0 + j * p.xs1;
		biasbase = p.biaso + uint(id) * p.biase;
		dot_rows(p.wo + uint(id) * p.wse + n * p.ws0, t);
		uint parts = reduce_parts(t);
		if (t == 0u) {
			float v = reduced(0u, parts, n);
			if ((p.flags & 2u) != 0u)
				sum += LDF(b5, p.swo + tok * p.sws0 + 4u * j) * v;
			else
				STF(b0, p.yo + tok * p.ys0 + j * p.ys1 + 4u * n, v);
		}
		barrier();
	}
	if (t == 0u && (p.flags & 2u) != 0u)
		STF(b0, p.yo + tok * p.ys0 + 4u * n, sum);
}
#endif
