/* Matrix family.
 *  -DWTYPE=t  matmul: y[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N]), w of dtype t.
 *             One work-item per output column n and MT rows of x: each
 *             32-element piece of w's row is decoded once into registers
 *             and dotted with MT rows of x (x stays f32: no activation
 *             quantization, so results are as close to exact as f32 gets).
 *  -DIDS      (with -DWTYPE, -DMT=1) matmul_id: the same dot with the
 *             expert's row chosen by the ids on the device.
 *  -DGEMM     BLAS sgemm, row-major: c = alpha·op(a)·op(b) + beta·c; one
 *             work-item per element of c. */
#include "common.h"

/* rows of x per work-item: 4 for matmul (each decoded piece serves 4 rows),
 * -DMT=1 for the matvec variant (M < 4: a decode loop's GEMV) */
#ifndef MT
#define MT 4
#endif

#ifdef WTYPE
#include "decode.h"

/* acc[i] = w's row (K elements from w) · x[i] for the MT rows of x. */
static void dot_rows(cbytes *w, __global const float *const *x, long K, float *acc)
{
	for (int i = 0; i < MT; i++)
		acc[i] = 0.0f;
#if WBLOCK
	for (long k0 = 0; k0 < K; k0 += 32) {
		float v[32];

		deq32(w + (k0 / WQK) * WQB, (int)(k0 % WQK / 32), v);
		for (int i = 0; i < MT; i++) {
			float s = 0.0f;

			for (int l = 0; l < 32; l++)
				s = fma(v[l], x[i][k0 + l], s);
			acc[i] += s;
		}
	}
#else
	for (long k0 = 0; k0 < K; k0 += 32) {
		float part[MT];
		int len = (int)min(32L, K - k0);

		for (int i = 0; i < MT; i++)
			part[i] = 0.0f;
		for (int l = 0; l < len; l++) {
			float v = wload(w, k0 + l);

			for (int i = 0; i < MT; i++)
				part[i] = fma(v, x[i][k0 + l], part[i]);
		}
		for (int i = 0; i < MT; i++)
			acc[i] += part[i];
	}
#endif
}

#ifndef IDS
/* matmul, and matmul_batched with the batch as the outer work-item index:
 * y, x and w offset by the batch times y_sb, x_sb, w_sb (w_sb 0: one w
 * for every batch). */
__kernel void KNAME(gbytes *yb, ulong y_off, long y_s0, cbytes *xb, ulong x_off, long x_s0, cbytes *wb, ulong w_off,
		    long w_s0, cbytes *bb, ulong b_off, int has_bias, long M, long N, long K, long y_sb, long x_sb,
		    long w_sb, long total)
{
	long g = get_global_id(0);

	if (g >= total)
		return;
	long per_batch = N * ((M + MT - 1) / MT), b = g / per_batch;

	g %= per_batch;
	y_off += b * y_sb;
	x_off += b * x_sb;
	w_off += b * w_sb;
	long n = g % N, m0 = g / N * MT;
	int rows = (int)min((long)MT, M - m0);
	cbytes *w = wb + w_off + n * w_s0;
	__global const float *x[MT];
	float acc[MT];

	for (int i = 0; i < MT; i++)
		x[i] = (__global const float *)(xb + x_off + (m0 + min(i, rows - 1)) * x_s0);
	dot_rows(w, x, K, acc);
	float bias = has_bias ? ((__global const float *)(bb + b_off))[n] : 0.0f;

	for (int i = 0; i < rows; i++)
		((__global float *)(yb + y_off + (m0 + i) * y_s0))[n] = acc[i] + bias;
}
#else
/* -DIDS (with MT=1): matmul_id. One work-item per (row n, token t), over
 * the token's k slots: slot j's expert id is read on the device (a bad one
 * is clamped to 0 and raised in the status words, which the host reports
 * at the next sync: status_raise, row the token), and w's row n
 * of that expert is dotted with the slot's x row (x_s1 = 0: the token's
 * row serves every slot). Without slot weights slot j's result goes to
 * y[t, j, n]; with them y[t, n] = sum_j weight[t, j] · result. */
__kernel void KNAME(gbytes *yb, ulong y_off, long y_s0, long y_s1, cbytes *xb, ulong x_off, long x_s0, long x_s1,
		    cbytes *wb, ulong w_off, long w_s0, long w_se, cbytes *bb, ulong b_off, long b_se, int has_bias,
		    cbytes *ib, ulong i_off, long i_s0, cbytes *sb, ulong s_off, long s_s0, int weighted, long N,
		    long K, long k, long E, __global int *status, long total)
{
	long g = get_global_id(0);

	if (g >= total)
		return;
	long n = g % N, t = g / N;
	__global const int *ids = (__global const int *)(ib + i_off + t * i_s0);
	float sum = 0.0f;

	for (long j = 0; j < k; j++) {
		int id = ids[j];
		__global const float *x[1] = { (__global const float *)(xb + x_off + t * x_s0 + j * x_s1) };
		float acc[1];

		if (id < 0 || id >= E) {
			if (n == 0)
				status_raise(status, STATUS_EXPERT_IDS, t, j, id, E);
			id = 0;
		}
		dot_rows(wb + w_off + id * w_se + n * w_s0, x, K, acc);
		float v = acc[0] + (has_bias ? ((__global const float *)(bb + b_off + id * b_se))[n] : 0.0f);

		if (weighted)
			sum += ((__global const float *)(sb + s_off + t * s_s0))[j] * v;
		else
			((__global float *)(yb + y_off + t * y_s0 + j * y_s1))[n] = v;
	}
	if (weighted)
		((__global float *)(yb + y_off + t * y_s0))[n] = sum;
}
#endif /* IDS */
#endif /* WTYPE */

#ifdef GEMM
__kernel void KNAME(gbytes *cb, ulong c_off, long c_s0, cbytes *ab, ulong a_off, long a_s0, cbytes *bb, ulong b_off,
		    long b_s0, int trans_a, int trans_b, float alpha, float beta, long M, long N, long K, long total)
{
	long g = get_global_id(0);

	if (g >= total)
		return;
	long m = g / N, n = g % N;
	/* element steps of op(a) along k and of op(b) along k */
	__global const float *a = (__global const float *)(ab + a_off + (trans_a ? 0 : m * a_s0)) + (trans_a ? m : 0);
	__global const float *b = (__global const float *)(bb + b_off + (trans_b ? n * b_s0 : 0)) + (trans_b ? 0 : n);
	long ak = trans_a ? a_s0 / 4 : 1, bk = trans_b ? 1 : b_s0 / 4;
	float acc = 0.0f;

	for (long k0 = 0; k0 < K; k0 += 32) {
		float part = 0.0f;

		for (long k = k0; k < min(K, k0 + 32); k++)
			part = fma(a[k * ak], b[k * bk], part);
		acc += part;
	}
	__global float *c = (__global float *)(cb + c_off + m * c_s0) + n;

	*c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
#endif
