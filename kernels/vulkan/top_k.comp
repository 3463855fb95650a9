/* Per row of x [R, N]: the k best entries in rank.glsl's order, by k
 * selection passes of one workgroup per row. ids [R, k] (i32), values
 * [R, k] when has_values. Bindings: 0 ids, 1 x, 2 values.
 *
 * One dispatch runs passes j0 .. j1-1 and picks up after ids[j0 - 1]: the
 * host splits long runs of passes because lavapipe (llvmpipe) ends any loop
 * after 65535 iterations in total, counted over every entry into it. */
#version 450
#include "common.glsl"

#define WG 256u
layout(local_size_x = 256) in;

#include "rank.glsl"

layout(push_constant) uniform Push {
	uint n, rows, j0, j1, has_values;
	uint xo, xs0, io, is0, vo, vs0;
} p;

void main()
{
	uint r = wg_linear();
	if (r >= p.rows)
		return;
	uint t = gl_LocalInvocationID.x;
	uint x = p.xo + r * p.xs0;
	uint ids = (p.io + r * p.is0) / 4u;
	uint pi = p.j0 == 0u ? RANK_NONE : b0.d[ids + p.j0 - 1u];
	float pv = p.j0 == 0u ? 0.0 : LDF(b1, x + 4u * pi);

	for (uint j = p.j0; j < p.j1; j++) {
		float bv = 0.0;
		uint bi = RANK_NONE;

		for (uint c = t; c < p.n; c += WG) {
			float v = LDF(b1, x + 4u * c);
			/* only what ranks after the previous pick */
			if ((pi == RANK_NONE || ranks_before(pv, pi, v, c)) && rank_better(v, c, bv, bi)) {
				bv = v;
				bi = c;
			}
		}
		rank_reduce(bv, bi);
		if (t == 0u) {
			b0.d[ids + j] = bi;
			if (p.has_values != 0u)
				STF(b2, p.vo + r * p.vs0 + 4u * j, bv);
		}
		pv = bv;
		pi = bi;
	}
}
