/* Sampling family (SPEC/OPERATORS.md "Sampling").
 *  -DARGMAX  one work-group per row: the largest value, ties to the lowest
 *            index, NaN never chosen unless the row is all NaN (then 0).
 *  -DSAMPLE  one work-item per row, following the SPEC's procedure step by
 *            step: candidates ordered by logit descending, ties by index
 *            (a heap sort into the scratch rows `order`; dividing by a
 *            positive temperature keeps that order), top-k, softmax over
 *            the kept ones, top-p prefix, then the walk with uniform[r]. */
#include "common.h"

/* (v, i) better than (bv, bi)? NaN loses to everything. */
static inline int better(float v, int i, float bv, int bi)
{
	if (isnan(v))
		return 0;
	if (isnan(bv))
		return 1;
	return v > bv || (v == bv && i < bi);
}

#ifdef ARGMAX
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
KNAME(gbytes *ib, ulong i_off, cbytes *xb, ulong x_off, long x_s0, long n)
{
	__local float tv[WG];
	__local int ti[WG];
	long r = get_group_id(0);
	int l = get_local_id(0);
	__global const float *x = (__global const float *)(xb + x_off + r * x_s0);
	float bv = NAN;
	int bi = 0;

	for (long j = l; j < n; j += WG) {
		if (better(x[j], (int)j, bv, bi)) {
			bv = x[j];
			bi = (int)j;
		}
	}
	tv[l] = bv;
	ti[l] = bi;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (l == 0) {
		for (int i = 1; i < WG; i++) {
			if (better(tv[i], ti[i], bv, bi)) {
				bv = tv[i];
				bi = ti[i];
			}
		}
		((__global int *)(ib + i_off))[r] = isnan(bv) ? 0 : bi;
	}
}
#endif

#ifdef SAMPLE
/* candidate a comes before candidate b */
static inline int before(__global const float *x, int a, int b)
{
	return x[a] > x[b] || (x[a] == x[b] && a < b);
}

/* Heap sort of order[0..n) so that order[k] is the k-th candidate: a
 * min-heap of "before", so the last candidate is popped to the end first. */
static void sift(__global const float *x, __global int *o, long root, long n)
{
	for (long c; (c = 2 * root + 1) < n; root = c) {
		if (c + 1 < n && before(x, o[c], o[c + 1]))
			c++;
		if (!before(x, o[root], o[c]))
			return;
		int t = o[root];

		o[root] = o[c];
		o[c] = t;
	}
}

static void sort_candidates(__global const float *x, __global int *o, long n)
{
	for (long j = 0; j < n; j++)
		o[j] = (int)j;
	/* a max-heap under "after": the root is the candidate that comes last */
	for (long j = n / 2 - 1; j >= 0; j--)
		sift(x, o, j, n);
	for (long end = n - 1; end > 0; end--) {
		int t = o[0];

		o[0] = o[end];
		o[end] = t;
		sift(x, o, 0, end);
	}
}

__kernel void KNAME(gbytes *ib, ulong i_off, cbytes *xb, ulong x_off, long x_s0, __global int *order,
		    __global const float *uniform, float temperature, int top_k, float top_p, long n, long rows)
{
	long r = get_global_id(0);

	if (r >= rows)
		return;
	__global const float *x = (__global const float *)(xb + x_off + r * x_s0);
	__global int *o = order + r * n;
	__global int *ids = (__global int *)(ib + i_off);

	if (temperature <= 0.0f) {
		float bv = NAN;
		int bi = 0;

		for (long j = 0; j < n; j++) {
			if (better(x[j], (int)j, bv, bi)) {
				bv = x[j];
				bi = (int)j;
			}
		}
		ids[r] = bi;
		return;
	}
	sort_candidates(x, o, n);
	long kept = top_k > 0 && top_k < n ? top_k : n;
	float zmax = x[o[0]] / temperature, total = 0.0f;

	for (long k = 0; k < kept; k++)
		total += exp(x[o[k]] / temperature - zmax);
	if (top_p < 1.0f) {
		float cum = 0.0f, target = top_p * total;
		long k = 0;

		while (k < kept) {
			cum += exp(x[o[k]] / temperature - zmax);
			k++;
			if (cum >= target)
				break;
		}
		kept = k;
		total = cum;
	}
	float target = uniform[r] * total, cum = 0.0f;

	for (long k = 0; k < kept; k++) {
		cum += exp(x[o[k]] / temperature - zmax);
		if (cum > target) {
			ids[r] = o[k];
			return;
		}
	}
	ids[r] = o[kept - 1];
}
#endif
