/* y = x between f32, f16 and bf16 (-DSRC, -DDST: dtype values), on bit
 * patterns: round to nearest even, NaN stays NaN, overflow to f16 gives inf.
 * A 16-bit destination is written a word at a time; a word shared with the
 * bytes around a row is written with masked atomics. */
#version 450
#include "common.glsl"
#include "dtypes.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint xo, xs0, xs1, xs2;
} p;

uint load_f32_bits(uint xrow, uint c)
{
#if SRC == DT_F32
	return LD32(b1, xrow + 4u * c);
#elif SRC == DT_F16
	return h2f_bits(LD16(b1, xrow + 2u * c));
#else
	return LD16(b1, xrow + 2u * c) << 16;
#endif
}

uint encode(uint f)
{
#if DST == DT_F32
	return f;
#elif DST == DT_F16
	return f2h_bits(f);
#else
	return f2bf_bits(f);
#endif
}

void main()
{
	uint step = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u;
#if DST == DT_F32
	uint per_row = p.n;
#else
	uint per_row = p.n / 2u + 1u; /* words that a 2n-byte row can touch */
#endif
	uint total = per_row * p.rows;

	for (uint e = wg_linear() * 256u + gl_LocalInvocationID.x; e < total; e += step) {
		uint r = e / per_row, u = e % per_row;
		uint xrow = row_addr(r, p.d1, p.d2, p.xo, p.xs0, p.xs1, p.xs2);
		uint yrow = row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2);
#if DST == DT_F32
		b0.d[(yrow >> 2) + u] = encode(load_f32_bits(xrow, u));
#else
		uint wa = (yrow & ~3u) + 4u * u;
		uint end = yrow + 2u * p.n;
		if (wa >= end)
			continue;
		bool lo_in = wa >= yrow;
		bool hi_in = wa + 2u < end;
		uint lo = lo_in ? encode(load_f32_bits(xrow, (wa - yrow) / 2u)) : 0u;
		uint hi = hi_in ? encode(load_f32_bits(xrow, (wa + 2u - yrow) / 2u)) : 0u;
		if (lo_in && hi_in)
			b0.d[wa >> 2] = lo | (hi << 16);
		else if (lo_in)
			st16_shared(wa, lo);
		else
			st16_shared(wa + 2u, hi);
#endif
	}
}
