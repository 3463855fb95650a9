/* y = softmax(scale*x + mask) over each row, stable; one workgroup per row.
 * The row's index along dim ndim-2 is r % d2 (R = d2). flags: 1 mask given,
 * 2 causal. A row with nothing visible gives zeros. Bindings: 0 y, 1 x, 2 mask. */
#version 450
#include "common.glsl"

#define WG 256u
layout(local_size_x = 256) in;
#include "reduce.glsl"

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint xo, xs0, xs1, xs2;
	uint mo, ms0, flags;
	float scale;
} p;


float score(uint x, uint m, int limit, uint c)
{
	if ((p.flags & 2u) != 0u && int(c) > limit)
		return NEG_INF;
	float v = p.scale * LDF(b1, x + 4u * c);
	if ((p.flags & 1u) != 0u)
		v += LDF(b2, m + 4u * c);
	return v;
}

void main()
{
	uint r = wg_linear();
	if (r >= p.rows)
		return;
	uint t = gl_LocalInvocationID.x;
	uint i = r % p.d2;
	int limit = int(i) + int(p.n) - int(p.d2);
	uint x = row_addr(r, p.d1, p.d2, p.xo, p.xs0, p.xs1, p.xs2);
	uint y = row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2);
	uint m = p.mo + i * p.ms0;

	float mx = NEG_INF;
	for (uint c = t; c < p.n; c += WG)
		mx = max(mx, score(x, m, limit, c));
	mx = wg_max(mx);
	if (mx == NEG_INF) {
		for (uint c = t; c < p.n; c += WG)
			b0.d[(y >> 2) + c] = 0u;
		return;
	}
	float sum = 0.0;
	for (uint c = t; c < p.n; c += WG)
		sum += exp(score(x, m, limit, c) - mx);
	float inv = 1.0 / wg_sum(sum);
	for (uint c = t; c < p.n; c += WG)
		STF(b0, y + 4u * c, exp(score(x, m, limit, c) - mx) * inv);
}
