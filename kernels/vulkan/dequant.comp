/* dequantize (y = decode(x), rows of any shape) and, with -DGET_ROWS,
 * get_rows (y[i,:] = decode(table[ids[i],:])). -DWTYPE: the source dtype.
 * Bindings: 0 y (f32), 1 x or table, 2 ids (i32). */
#version 450
#include "common.glsl"
#define QB b1
#include "decode.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint xo, xs0, xs1, xs2;
	uint ido, vocab;
} p;

void main()
{
	uint total = p.n * p.rows;
	uint step = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u;

	for (uint e = wg_linear() * 256u + gl_LocalInvocationID.x; e < total; e += step) {
		uint r = e / p.n, c = e % p.n;
		uint ya = row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2) + 4u * c;
#ifdef GET_ROWS
		int id = int(LD32(b2, p.ido + 4u * r));
		if (id < 0 || uint(id) >= p.vocab) {
			status_raise(STATUS_GET_ROWS, r, uint(id), p.vocab);
			b0.d[ya >> 2] = 0u;
			continue;
		}
		uint xrow = p.xo + uint(id) * p.xs2;
#else
		uint xrow = row_addr(r, p.d1, p.d2, p.xo, p.xs0, p.xs1, p.xs2);
#endif
#if WTYPE == DT_F32
		b0.d[ya >> 2] = LD32(b1, xrow + 4u * c);
#elif WTYPE == DT_BF16
		b0.d[ya >> 2] = LD16(b1, xrow + 2u * c) << 16;
#else
		STF(b0, ya, dq(xrow, c));
#endif
	}
}
