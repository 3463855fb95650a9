/* y (q8_0 or q8_K, -DQTYPE) = x (f32) quantized with ggml's reference
 * encoders (SPEC/OPERATORS.md). One invocation per block. q8_0 blocks are
 * only 2-byte aligned: words shared with a neighbour block or with bytes
 * around the row are written with masked atomics. */
#version 450
#include "common.glsl"
#include "dtypes.glsl"
#include "encode.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint xo, xs0, xs1, xs2;
} p;

#if QTYPE == DT_Q8_0
#define QK 32u
#define BLOCK_BYTES 34u
#else
#define QK 256u
#define BLOCK_BYTES 292u
#endif

void main()
{
	uint nb = p.n / QK;
	uint blk = wg_linear() * 64u + gl_LocalInvocationID.x;
	if (blk >= nb * p.rows)
		return;
	uint r = blk / nb, ib = blk % nb;
	uint x = row_addr(r, p.d1, p.d2, p.xo, p.xs0, p.xs1, p.xs2) + ib * QK * 4u;
	uint y = row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2) + ib * BLOCK_BYTES;

#if QTYPE == DT_Q8_0
	uint h[17];
	encode_q8_0(x, h);
	store_halves(y, h, Q8_0_HALVES);
#else
	float amax = 0.0, vmax = 0.0;
	for (uint j = 0u; j < QK; j++) {
		float v = LDF(b1, x + 4u * j);
		if (abs(v) > amax) {
			amax = abs(v);
			vmax = v;
		}
	}
	float iscale = amax != 0.0 ? div_rn(-127.0, vmax) : 0.0;
	float d = amax != 0.0 ? div_rn(1.0, iscale) : 0.0;
	b0.d[y >> 2] = floatBitsToUint(d);
	for (uint g = 0u; g < 16u; g++) {
		int sum = 0;
		for (uint w = 0u; w < 4u; w++) {
			uint word = 0u;
			for (uint k = 0u; k < 4u; k++) {
				precise float v = LDF(b1, x + 4u * (g * 16u + w * 4u + k)) * iscale;
				int q = min(127, int(roundEven(v)));
				sum += q;
				word |= (uint(q) & 0xFFu) << (8u * k);
			}
			b0.d[(y >> 2) + 1u + g * 4u + w] = word;
		}
		uint bs = y + 260u + 2u * g;
		if ((g & 1u) == 0u)
			b0.d[bs >> 2] = uint(sum) & 0xFFFFu;
		else
			b0.d[bs >> 2] |= (uint(sum) & 0xFFFFu) << 16;
	}
#endif
}
