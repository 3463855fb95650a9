/* Matrix-vector product for small M: y[m, n] = x[m, :] . w[n, :] (+ bias[n]).
 * One workgroup per weight row n: the weight row is decoded once in
 * registers (dtype WTYPE) and dotted with up to MV_M activation rows at a
 * time, then reduced across the workgroup. Bindings: 0 y, 1 w, 2 x, 3 bias. */
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#define QB b1
#include "decode.glsl"

#define WG 64u
#define MV_M 4u
layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
	uint M, N, K, flags;
	uint xo, xs0;
	uint wo, ws0;
	uint yo, ys0;
	uint biaso;
} p;

shared float red[MV_M][WG];

void main()
{
	uint n = wg_linear();
	if (n >= p.N)
		return;
	uint t = gl_LocalInvocationID.x;
	uint w = p.wo + n * p.ws0;

	for (uint m0 = 0u; m0 < p.M; m0 += MV_M) {
		uint mc = min(MV_M, p.M - m0);
		float acc[MV_M];
		[[unroll]] for (uint j = 0u; j < MV_M; j++)
			acc[j] = 0.0;
		for (uint k = t; k < p.K; k += WG) {
			float wv = dq(w, k);
			[[unroll]] for (uint j = 0u; j < MV_M; j++)
				if (j < mc)
					acc[j] += wv * LDF(b2, p.xo + (m0 + j) * p.xs0 + 4u * k);
		}
		[[unroll]] for (uint j = 0u; j < MV_M; j++)
			red[j][t] = acc[j];
		barrier();
		for (uint s = WG / 2u; s > 0u; s >>= 1) {
			if (t < s)
				[[unroll]] for (uint j = 0u; j < MV_M; j++)
					red[j][t] += red[j][t + s];
			barrier();
		}
		if (t < mc) {
			float v = red[t][0];
			if ((p.flags & 1u) != 0u)
				v += LDF(b3, p.biaso + 4u * n);
			STF(b0, p.yo + (m0 + t) * p.ys0 + 4u * n, v);
		}
		barrier();
	}
}
