/* softmax(scale·x + mask) over the innermost dim, stable (row max first).
 * One work-group per row. The row's index i along dim ndim-2 is r % d2
 * (R = d2); causal hides columns j > i + (n - R). A row with nothing
 * visible gives zeros. */
#include "common.h"

static inline float logit(__global const float *x, __global const float *mask, int has_mask, int causal, float scale,
			  long i, long j, long n, long rr)
{
	if (causal && j > i + (n - rr))
		return -INFINITY;
	return scale * x[j] + (has_mask ? mask[j] : 0.0f);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
KNAME(gbytes *yb, TENSOR(y), cbytes *xb, TENSOR(x), cbytes *mb, ulong m_off, long m_s0, int has_mask, int causal,
      float scale, long n, long d1, long d2)
{
	__local float tmp[WG];
	long r = get_group_id(0), i = r % d2;
	int l = get_local_id(0);
	__global const float *x = (__global const float *)(xb + ROW(x, r));
	__global float *y = (__global float *)(yb + ROW(y, r));
	__global const float *mask = (__global const float *)(mb + m_off + i * m_s0);
	float mx = -INFINITY, s = 0.0f;

	for (long j = l; j < n; j += WG)
		mx = fmax(mx, logit(x, mask, has_mask, causal, scale, i, j, n, d2));
	mx = wg_max(mx, tmp);
	/* nothing visible: zeros (no early return: every item reaches the barriers) */
	int none = mx == -INFINITY;

	for (long j = l; j < n && !none; j += WG)
		s += exp(logit(x, mask, has_mask, causal, scale, i, j, n, d2) - mx);
	s = wg_sum(s, tmp);
	s = none ? 0.0f : 1.0f / s;
	for (long j = l; j < n; j += WG)
		y[j] = none ? 0.0f : exp(logit(x, mask, has_mask, causal, scale, i, j, n, d2) - mx) * s;
}
