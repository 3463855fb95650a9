/* rope over x, y f32 [T, H, D], pos i32 [T]: normal (default) or -DNEOX.
 * One work-item per rotated pair (i < n_rot/2) or copied element (>= n_rot),
 * so in place is safe: each item reads exactly what it writes. */
#include "common.h"

__kernel void KNAME(gbytes *yb, ulong y_off, long y_s0, long y_s1, cbytes *xb, ulong x_off, long x_s0, long x_s1,
		    cbytes *pb, ulong p_off, int n_rot, float theta_base, float freq_scale, long H, long D, long total)
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
	float theta = (float)((__global const int *)(pb + p_off))[t] * freq_scale * pow(theta_base, -2.0f * i / n_rot);
	float c = cos(theta), s = sin(theta);
#ifdef NEOX
	long ia = i, ib = i + n_rot / 2;
#else
	long ia = 2 * i, ib = 2 * i + 1;
#endif
	float a = x[ia], b = x[ib];

	y[ia] = a * c - b * s;
	y[ib] = a * s + b * c;
}
