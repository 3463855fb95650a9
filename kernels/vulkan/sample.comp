/* Temperature + top-k + top-p sampling, one workgroup per row, following
 * SPEC/OPERATORS.md step by step without sorting the row: every "prefix of
 * the sorted order" is found by a radix descent over an order-preserving
 * 32-bit key of z (4 bits a pass), summing counts (top-k) or probability
 * mass (top-p, the final walk) per digit; ties on the key are then ordered by
 * index. The host dispatches argmax instead when temperature <= 0.
 *
 * Loops over the row are unrolled by 8: llvmpipe (lavapipe) ends any
 * invocation's loops after 65535 iterations in all, and this kernel walks
 * the row about 35 times (rows up to ~1.5M logits stay under that).
 * Bindings: 0 ids (i32), 1 logits, 2 uniforms (f32 [R]). */
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define WG 128u
layout(local_size_x = 128) in;
#include "reduce.glsl"

layout(push_constant) uniform Push {
	uint n, rows, yo, xo, xs0, uo;
	int top_k;
	float top_p, inv_temp;
} p;

const uint ALL = 0xFFFFFFFFu;
#define UNROLL 8u

/* BODY for every element j of the row this invocation visits (strided). */
#define FOR_ROW(j, BODY)                                                              \
	for (uint j##_0 = gl_LocalInvocationID.x; j##_0 < p.n; j##_0 += WG * UNROLL) { \
		[[unroll]] for (uint j##_q = 0u; j##_q < UNROLL; j##_q++) {             \
			uint j = j##_0 + j##_q * WG;                                    \
			if (j < p.n) {                                                  \
				BODY                                                    \
			}                                                               \
		}                                                                       \
	}

shared float hist[16][WG];
shared uint scan[WG];
shared uint s_pick;
shared uint s_key;
shared uint s_idx;

uint xrow;
float zmax, inv_zsum;

/* z = logit / temperature as logit * (1 / temperature), so that every pass
 * computes bit-identical keys wherever the compiler places the code. */
float zval(uint j)
{
	return LDF(b1, xrow + 4u * j) * p.inv_temp;
}

uint keyof(float z)
{
	uint u = floatBitsToUint(z);
	return (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u;
}

float zof(uint key)
{
	return uintBitsToFloat((key & 0x80000000u) != 0u ? key & 0x7FFFFFFFu : ~key);
}

/* A cut keeps a prefix of the sorted order (z descending, index
 * ascending): key > cut.x, or key == cut.x and index <= cut.y. (0, ALL)
 * keeps everything. Top-p's prefix lies inside top-k's, so one cut is
 * enough at every step. */
bool kept(uint k, uint j, uvec2 cut)
{
	return k > cut.x || (k == cut.x && j <= cut.y);
}

float mass(float z, bool count)
{
	return count ? 1.0 : exp(z - zmax) * inv_zsum;
}

bool reaches(float v, float target, bool strict)
{
	return strict ? v > target : v >= target;
}

/* The key at which the cumulative mass of the kept elements, in sorted
 * order, first reaches target; before = the mass of kept keys above it.
 * Returns false when rounding leaves the total short of target. */
bool radix_select(float target, bool strict, bool count, uvec2 cut, out uint key, out float before)
{
	uint t = gl_LocalInvocationID.x;
	uint prefix = 0u;
	before = 0.0;
	key = 0u;
	for (int shift = 28; shift >= 0; shift -= 4) {
		uint hi_shift = uint(shift + 4);
		[[unroll]] for (uint b = 0u; b < 16u; b++)
			hist[b][t] = 0.0;
		FOR_ROW(j,
			float z = zval(j);
			uint k = keyof(z);
			if (kept(k, j, cut) && (shift == 28 || (k >> hi_shift) == (prefix >> hi_shift)))
				hist[(k >> uint(shift)) & 15u][t] += mass(z, count);
		)
		barrier();
		if (t < 16u) {
			float s = 0.0;
			for (uint i = 0u; i < WG; i += 8u) {
				[[unroll]] for (uint q = 0u; q < 8u; q++)
					s += hist[t][i + q];
			}
			hist[t][0] = s;
		}
		barrier();
		float acc = before;
		int chosen = -1;
		[[unroll]] for (int b = 15; b >= 0; b--) {
			float nb = acc + hist[b][0];
			if (chosen < 0) {
				if (reaches(nb, target, strict))
					chosen = b;
				else
					acc = nb;
			}
		}
		barrier();
		if (chosen < 0)
			return false;
		before = acc;
		prefix |= uint(chosen) << uint(shift);
	}
	key = prefix;
	return true;
}

/* Index of the c-th (1-based; the last one if fewer) kept element whose key
 * is exactly key, in index order. Each invocation scans a contiguous chunk. */
uint nth_tie(uint key, uint c, uvec2 cut)
{
	uint t = gl_LocalInvocationID.x;
	uint chunk = (p.n + WG - 1u) / WG;
	uint lo = min(p.n, t * chunk), hi = min(p.n, lo + chunk);
	uint cnt = 0u;
	for (uint j0 = lo; j0 < hi; j0 += UNROLL) {
		[[unroll]] for (uint q = 0u; q < UNROLL; q++) {
			uint j = j0 + q;
			if (j < hi && keyof(zval(j)) == key && kept(key, j, cut))
				cnt++;
		}
	}
	scan[t] = cnt;
	barrier();
	if (t == 0u) {
		uint run = 0u;
		for (uint i = 0u; i < WG; i++) {
			uint v = scan[i];
			scan[i] = run;
			run += v;
		}
		s_pick = min(c, run);
	}
	barrier();
	uint want = s_pick;
	uint seen = scan[t];
	barrier();
	if (seen < want && seen + cnt >= want) {
		uint found = ALL;
		for (uint j0 = lo; j0 < hi && found == ALL; j0 += UNROLL) {
			[[unroll]] for (uint q = 0u; q < UNROLL; q++) {
				uint j = j0 + q;
				if (found == ALL && j < hi && keyof(zval(j)) == key && kept(key, j, cut)) {
					seen++;
					if (seen == want)
						found = j;
				}
			}
		}
		s_pick = found;
	}
	barrier();
	uint r = s_pick;
	barrier();
	return r;
}

/* After radix_select: how many ties of mass m complete the prefix. */
uint ties_needed(float before, float m, float target, bool strict)
{
	if (!(m > 0.0))
		return 1u;
	float need = ceil((target - before) / m);
	uint c = need > 1.0 ? uint(min(need, 16777216.0)) : 1u;
	if (c > 1u && reaches(before + float(c - 1u) * m, target, strict))
		c--;
	else if (!reaches(before + float(c) * m, target, strict))
		c++;
	return c;
}

/* The cut that keeps the prefix of the kept elements reaching target. */
bool prefix_cut(float target, bool strict, bool count, uvec2 in_cut, out uvec2 cut)
{
	uint key;
	float before;
	cut = uvec2(0u, ALL);
	if (!radix_select(target, strict, count, in_cut, key, before))
		return false;
	uint c = ties_needed(before, mass(zof(key), count), target, strict);
	cut = uvec2(key, nth_tie(key, c, in_cut));
	return true;
}

/* The last kept element of the sorted order: smallest key, then the
 * largest index. */
uint last_kept(uvec2 cut)
{
	uint t = gl_LocalInvocationID.x;
	if (t == 0u) {
		s_key = ALL;
		s_idx = 0u;
	}
	barrier();
	FOR_ROW(j,
		uint k = keyof(zval(j));
		if (kept(k, j, cut))
			atomicMin(s_key, k);
	)
	barrier();
	uint kmin = s_key;
	FOR_ROW(j,
		uint k = keyof(zval(j));
		if (k == kmin && kept(k, j, cut))
			atomicMax(s_idx, j);
	)
	barrier();
	return s_idx;
}

void main()
{
	uint r = wg_linear();
	if (r >= p.rows)
		return;
	uint t = gl_LocalInvocationID.x;
	xrow = p.xo + r * p.xs0;
	uvec2 cut = uvec2(0u, ALL);
	uvec2 next;

	float mx = NEG_INF;
	FOR_ROW(j, mx = max(mx, zval(j));)
	zmax = wg_max(mx);

	if (p.top_k > 0 && uint(p.top_k) < p.n && prefix_cut(float(p.top_k), false, true, cut, next))
		cut = next;
	float s = 0.0;
	FOR_ROW(j,
		float z = zval(j);
		if (kept(keyof(z), j, cut))
			s += exp(z - zmax);
	)
	inv_zsum = 1.0 / wg_sum(s);

	if (p.top_p < 1.0 && prefix_cut(p.top_p, false, false, cut, next))
		cut = next;
	s = 0.0;
	FOR_ROW(j,
		float z = zval(j);
		if (kept(keyof(z), j, cut))
			s += mass(z, false);
	)
	float total = wg_sum(s);
	float u = LDF(b2, p.uo + 4u * r);

	uint pick;
	if (prefix_cut(u * total, true, false, cut, next))
		pick = next.y;
	else
		pick = last_kept(cut);
	if (t == 0u)
		b0.d[(p.yo >> 2) + r] = pick;
}
