/* rms_norm and (-DLAYER) layer_norm over each row; one workgroup per row.
 * flags: 1 weight given, 2 bias given. Bindings: 0 y, 1 x, 2 w, 3 b. */
#version 450
#include "common.glsl"

#define WG 256u
layout(local_size_x = 256) in;
#include "reduce.glsl"

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint xo, xs0, xs1, xs2;
	uint wo, bo, flags;
	float eps;
} p;

void main()
{
	uint r = wg_linear();
	if (r >= p.rows)
		return;
	uint t = gl_LocalInvocationID.x;
	uint x = row_addr(r, p.d1, p.d2, p.xo, p.xs0, p.xs1, p.xs2);
	uint y = row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2);
	float acc = 0.0;

#ifdef LAYER
	for (uint c = t; c < p.n; c += WG)
		acc += LDF(b1, x + 4u * c);
	float mean = wg_sum(acc) / float(p.n);
	acc = 0.0;
	for (uint c = t; c < p.n; c += WG) {
		float v = LDF(b1, x + 4u * c) - mean;
		acc += v * v;
	}
#else
	float mean = 0.0;
	for (uint c = t; c < p.n; c += WG) {
		float v = LDF(b1, x + 4u * c);
		acc += v * v;
	}
#endif
	float scale = 1.0 / sqrt(wg_sum(acc) / float(p.n) + p.eps);
	for (uint c = t; c < p.n; c += WG) {
		float v = (LDF(b1, x + 4u * c) - mean) * scale;
		if ((p.flags & 1u) != 0u)
			v *= LDF(b2, p.wo + 4u * c);
		if ((p.flags & 2u) != 0u)
			v += LDF(b3, p.bo + 4u * c);
		STF(b0, y + 4u * c, v);
	}
}
