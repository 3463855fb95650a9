/* rms_norm (default) and layer_norm (-DLAYER) over the innermost dim.
 * One work-group of WG items per row; two passes for layer_norm's variance
 * (mean first), so large offsets do not cancel. w, b optional (has_w, has_b). */
#include "common.h"

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
KNAME(gbytes *yb, TENSOR(y), cbytes *xb, TENSOR(x), cbytes *wb, ulong w_off, int has_w, cbytes *bb, ulong b_off,
      int has_b, float eps, long n, long d1, long d2)
{
	__local float tmp[WG];
	long r = get_group_id(0);
	int l = get_local_id(0);
	__global const float *x = (__global const float *)(xb + ROW(x, r));
	__global float *y = (__global float *)(yb + ROW(y, r));
	__global const float *w = (__global const float *)(wb + w_off);
	__global const float *b = (__global const float *)(bb + b_off);
	float s = 0.0f, mean = 0.0f;

#ifdef LAYER
	for (long j = l; j < n; j += WG)
		s += x[j];
	mean = wg_sum(s, tmp) / n;
	s = 0.0f;
#endif
	for (long j = l; j < n; j += WG) {
		float d = x[j] - mean;

		s = fma(d, d, s);
	}
	float inv = 1.0f / sqrt(wg_sum(s, tmp) / n + eps);

	for (long j = l; j < n; j += WG) {
		float v = (x[j] - mean) * inv;

		if (has_w)
			v *= w[j];
		if (has_b)
			v += b[j];
		y[j] = v;
	}
}
