/* rope over x, y f32 [T, H, D], pos i32 [T]: normal (default) or -DNEOX,
 * with ggml's rope_ext extensions (SPEC/OPERATORS.md "rope_ext"): optional
 * freq_factors divide pair i's speed; YaRN (ext_factor != 0) mixes the
 * interpolated and extrapolated speeds over the correction dims
 * [corr_lo, corr_hi] formed on the host; mscale scales cos and sin.
 * gllmk_rope runs here with the defaults. One work-item per rotated pair
 * (i < n_rot/2) or copied element (>= n_rot), so in place is safe: each
 * item reads exactly what it writes. */
#include "common.h"

/* YaRN's extrapolation share of pair i: ggml's rope_yarn_ramp · ext_factor. */
static inline float yarn_mix(int i, float ext_factor, float lo, float hi)
{
	if (ext_factor == 0.0f)
		return 0.0f;
	return (1.0f - clamp(((float)i - lo) / fmax(0.001f, hi - lo), 0.0f, 1.0f)) * ext_factor;
}

__kernel void KNAME(gbytes *yb, ulong y_off, long y_s0, long y_s1, cbytes *xb, ulong x_off, long x_s0, long x_s1,
		    cbytes *pb, ulong p_off, cbytes *fb, ulong f_off, int has_ff, int n_rot, float theta_base,
		    float freq_scale, float ext_factor, float corr_lo, float corr_hi, float mscale, long H, long D,
		    long total)
{
	long g = get_global_id(0);
	long units = n_rot / 2 + (D - n_rot);

	if (g >= total)
		return;
	long u = g % units, row = g / units, t = row / H, h = row % H;
	__global const float *x = (__global const float *)(xb + x_off + t * x_s0 + h * x_s1);
	__global float *y = (__global float *)(yb + y_off + t * y_s0 + h * y_s1);

	if (u >= n_rot / 2) {
		long j = n_rot + (u - n_rot / 2);

		y[j] = x[j];
		return;
	}
	int i = (int)u;
	float inv_freq = pow(theta_base, -2.0f * i / n_rot);
	if (has_ff)
		inv_freq /= ((__global const float *)(fb + f_off))[i];
	float mix = yarn_mix(i, ext_factor, corr_lo, corr_hi);
	float theta = (float)((__global const int *)(pb + p_off))[t] * (inv_freq * (freq_scale * (1.0f - mix) + mix));
	float c = cos(theta) * mscale, s = sin(theta) * mscale;
#ifdef NEOX
	long ia = i, ib = i + n_rot / 2;
#else
	long ia = 2 * i, ib = 2 * i + 1;
#endif
	float a = x[ia], b = x[ib];

	y[ia] = a * c - b * s;
	y[ib] = a * s + b * c;
}
