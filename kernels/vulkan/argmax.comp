/* ids[r] = index of the largest x[r, :]; ties to the lowest index; NaN never
 * chosen unless the whole row is NaN (then 0). One workgroup per row.
 * Bindings: 0 ids (i32), 1 x. */
#version 450
#include "common.glsl"

#define WG 256u
layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
	uint n, rows, yo, xo, xs0;
} p;

shared float sv[WG];
shared uint si[WG];

const uint NONE = 0xFFFFFFFFu;

void main()
{
	uint r = wg_linear();
	if (r >= p.rows)
		return;
	uint t = gl_LocalInvocationID.x;
	uint x = p.xo + r * p.xs0;
	float bv = 0.0;
	uint bi = NONE;

	for (uint c = t; c < p.n; c += WG) {
		uint bits = LD32(b1, x + 4u * c);
		float v = uintBitsToFloat(bits);
		if (!is_nan_bits(bits) && (bi == NONE || v > bv)) {
			bv = v;
			bi = c;
		}
	}
	sv[t] = bv;
	si[t] = bi;
	barrier();
	for (uint s = WG / 2u; s > 0u; s >>= 1) {
		if (t < s) {
			float ov = sv[t + s];
			uint oi = si[t + s];
			if (oi != NONE && (si[t] == NONE || ov > sv[t] || (ov == sv[t] && oi < si[t]))) {
				sv[t] = ov;
				si[t] = oi;
			}
		}
		barrier();
	}
	if (t == 0u)
		b0.d[(p.yo >> 2) + r] = si[0] == NONE ? 0u : si[0];
}
