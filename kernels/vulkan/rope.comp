/* Rotary position embedding on x [T, H, D] (padded [1, T, H, D]); pos i32
 * [T]; with ggml's rope_ext extensions (SPEC/OPERATORS.md "rope_ext"):
 * freq_factors (binding 3, flag 1) divide pair i's speed, YaRN mixes the
 * interpolated and extrapolated speeds over the correction dims [lo, hi]
 * (ext_factor != 0), and mscale scales cos and sin. gllmk_rope runs here
 * with the defaults. -DNEOX picks the neox pairing. One invocation per
 * element; the one holding a pair's first element rotates the pair, so in
 * place is safe. Bindings: 0 y, 1 x, 2 pos, 3 freq_factors. */
#version 450
#include "common.glsl"
#include "math.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint xo, xs0, xs1, xs2;
	uint po, n_rot;
	float freq_scale, log2_base;
	uint fo, flags;       /* freq_factors: byte offset (1-D: contiguous); flags 1: present */
	float ext_factor, corr_lo, corr_hi, mscale;
} p;

/* YaRN's extrapolation share of pair i: ggml's rope_yarn_ramp · ext_factor. */
float yarn_mix(uint i)
{
	if (p.ext_factor == 0.0)
		return 0.0;
	float r = (float(i) - p.corr_lo) / max(0.001, p.corr_hi - p.corr_lo);
	return (1.0 - clamp(r, 0.0, 1.0)) * p.ext_factor;
}

void main()
{
	uint total = p.n * p.rows;
	uint step = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u;

	for (uint e = wg_linear() * 256u + gl_LocalInvocationID.x; e < total; e += step) {
		uint r = e / p.n, c = e % p.n;
		uint x = row_addr(r, p.d1, p.d2, p.xo, p.xs0, p.xs1, p.xs2);
		uint y = row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2);
		if (c >= p.n_rot) {
			b0.d[(y >> 2) + c] = LD32(b1, x + 4u * c);
			continue;
		}
#ifdef NEOX
		uint half_ = p.n_rot / 2u;
		if (c >= half_)
			continue;
		uint i = c, c2 = c + half_;
#else
		if ((c & 1u) != 0u)
			continue;
		uint i = c / 2u, c2 = c + 1u;
#endif
		int pos = int(LD32(b2, p.po + 4u * (r / p.d2)));
		float inv_freq = exp2(-(2.0 * float(i) / float(p.n_rot)) * p.log2_base);
		if ((p.flags & 1u) != 0u)
			inv_freq /= LDF(b3, p.fo + 4u * i);
		float mix = yarn_mix(i);
		float s, co;
		sincos_acc(float(pos) * inv_freq * (p.freq_scale * (1.0 - mix) + mix), s, co);
		s *= p.mscale;
		co *= p.mscale;
		float a = LDF(b1, x + 4u * c);
		float b = LDF(b1, x + 4u * c2);
		STF(b0, y + 4u * c, a * co - b * s);
		STF(b0, y + 4u * c2, a * s + b * co);
	}
}
