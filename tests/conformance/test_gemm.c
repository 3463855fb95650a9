/* gemm: BLAS sgemm, row-major, c = alpha·op(a)·op(b) + beta·c, against a
 * double-precision product. All four transpose combinations; beta = 0 on a
 * NaN-poisoned c (c must not be read), beta = 1 accumulation, general
 * alpha/beta, alpha = 0; lengths 1, 7, 33, 257 and one product past the L2 (512³,
 * quick: 128³); blocking remainders (K = 1030, N = 1100, M = 8209); strided
 * a, b and c.
 *
 * Tolerance (SPEC/TOLERANCES.md): each element within
 * 1e-5·(|alpha|·Σ_k |a_ik·b_kj| + |beta·c_ij|) of the double result.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"

struct gemm_case {
	int64_t m, n, k;
	float alpha, beta;
	int strided; /* a, b padded rows; c padded rows */
	int big;     /* quick mode: 128 instead */
};

static const struct gemm_case gemm_cases[] = {
	{ 1, 1, 1, 1.0f, 0.0f, 0, 0 },
	{ 7, 33, 1, -1.5f, 0.25f, 0, 0 },
	{ 33, 7, 257, 0.5f, 1.0f, 0, 0 },
	{ 257, 33, 7, 1.0f, 0.0f, 0, 0 },
	{ 1, 257, 33, 2.0f, 0.0f, 0, 0 },
	{ 33, 1, 7, 1.0f, 1.0f, 1, 0 },
	{ 33, 33, 33, 0.75f, -0.5f, 1, 0 },
	{ 130, 67, 300, 1.0f, 0.0f, 1, 0 },
	{ 7, 33, 7, 0.0f, 0.5f, 1, 0 },  /* alpha = 0: c = beta·c, a and b not needed */
	{ 33, 7, 7, 0.0f, 0.0f, 0, 0 },  /* alpha = beta = 0: zeros over NaN */
	{ 512, 512, 512, 1.0f, 0.0f, 0, 1 },
	{ 512, 512, 512, -0.5f, 1.0f, 0, 1 },
	/* the GEMM framework's block remainders on every CPU plugin: several
	 * depth blocks (kc ≤ 512) and column blocks (nc ≤ 512 per thread)
	 * with a short last one, then rows past one A block (4096 a thread) */
	{ 30, 1100, 1030, 1.0f, 0.5f, 1, 0 },
	{ 8209, 33, 40, 1.0f, 0.0f, 0, 0 },
};

/* op(x) as a contiguous double matrix [rows, cols]: x is [rows, cols], or
 * [cols, rows] when transposed. */
static double *op_matrix(const float *x, int trans, int64_t rows, int64_t cols)
{
	double *o = conf_xmalloc(sizeof(double) * (size_t)(rows * cols));

	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < cols; j++)
			o[i * cols + j] = trans ? x[j * rows + i] : x[i * cols + j];
	return o;
}

/* want = alpha·A·B + beta·c0 (c0 not read when beta = 0), with each
 * element's bound. A is op(a) [m,k]; Bt is op(b)ᵀ [n,k]. */
static void ref_gemm(const struct gemm_case *c, int64_t m, int64_t n, int64_t k, const double *A, const double *Bt,
		     const float *c0, double *want, double *bound)
{
	for (int64_t i = 0; i < m; i++) {
		for (int64_t j = 0; j < n; j++) {
			double dot = 0.0, abs_sum = 0.0;

			for (int64_t l = 0; l < k; l++) {
				double p = A[i * k + l] * Bt[j * k + l];

				dot += p;
				abs_sum += fabs(p);
			}
			double acc = (double)c->alpha * dot, mag = fabs((double)c->alpha) * abs_sum;

			if (c->beta != 0.0f) {
				acc += (double)c->beta * c0[i * n + j];
				mag += fabs((double)c->beta * c0[i * n + j]);
			}
			want[i * n + j] = acc;
			bound[i * n + j] = 1e-5 * mag;
		}
	}
}

/* c's initial contents: poison (beta = 0: NaN must not propagate) or c0,
 * written row by row so a padded c keeps its poisoned gaps. */
static struct conf_tensor make_c(const struct gemm_case *c, const int64_t *shape, const float *c0)
{
	struct conf_tensor t = c->strided ? conf_output_padded(GLLMK_F32, 2, shape, 20)
					  : conf_output(GLLMK_F32, 2, shape);

	if (c->beta == 0.0f)
		return t;
	for (int64_t i = 0; i < shape[0]; i++)
		conf_ok(gllmk_buffer_write(t.buf, t.t.offset + (uint64_t)(i * t.t.stride[0]), c0 + i * shape[1],
					   sizeof(float) * (uint64_t)shape[1]));
	return t;
}

static struct conf_tensor upload_operand(const struct gemm_case *c, const int64_t *shape, const float *host)
{
	return c->strided ? conf_upload_strided(GLLMK_F32, 2, shape, host, 4, 4 * 5)
			  : conf_upload(GLLMK_F32, 2, shape, host);
}

static void gemm_one(int trans_a, int trans_b, const struct gemm_case *c)
{
	int64_t m = c->big && conf.quick ? 128 : c->m;
	int64_t n = c->big && conf.quick ? 128 : c->n;
	int64_t k = c->big && conf.quick ? 128 : c->k;
	gllmk_gemm_params p = { .trans_a = trans_a, .trans_b = trans_b, .alpha = c->alpha, .beta = c->beta };
	struct conf_rng r;
	char what[128];

	snprintf(what, sizeof(what), "gemm %c%c M=%lld N=%lld K=%lld alpha=%g beta=%g%s", trans_a ? 'T' : 'N',
		 trans_b ? 'T' : 'N', (long long)m, (long long)n, (long long)k, c->alpha, c->beta,
		 c->strided ? " strided" : "");
	conf_rng_init(&r, what);

	float *a = conf_xmalloc(sizeof(float) * (size_t)(m * k));
	float *b = conf_xmalloc(sizeof(float) * (size_t)(k * n));
	float *c0 = conf_xmalloc(sizeof(float) * (size_t)(m * n));
	float *got = conf_xmalloc(sizeof(float) * (size_t)(m * n));
	double *want = conf_xmalloc(sizeof(double) * (size_t)(m * n));
	double *bound = conf_xmalloc(sizeof(double) * (size_t)(m * n));

	conf_fill_uniform(&r, a, (size_t)(m * k), -1.0, 1.0);
	conf_fill_uniform(&r, b, (size_t)(k * n), -1.0, 1.0);
	conf_fill_uniform(&r, c0, (size_t)(m * n), -2.0, 2.0);

	double *A = op_matrix(a, trans_a, m, k);  /* a is [k,m] when transposed */
	double *Bt = op_matrix(b, !trans_b, n, k); /* op(b)ᵀ: b is [n,k] when transposed */

	ref_gemm(c, m, n, k, A, Bt, c0, want, bound);

	int64_t a_shape[2] = { trans_a ? k : m, trans_a ? m : k };
	int64_t b_shape[2] = { trans_b ? n : k, trans_b ? k : n };
	int64_t c_shape[2] = { m, n };
	struct conf_tensor at = upload_operand(c, a_shape, a);
	struct conf_tensor bt = upload_operand(c, b_shape, b);
	struct conf_tensor ct = make_c(c, c_shape, c0);

	conf_ok(gllmk_gemm(conf.ctx, &ct.t, &at.t, &bt.t, &p));
	conf_download(&ct, got);
	conf_check_within(what, got, want, bound, (size_t)(m * n));
	if (c->strided)
		conf_check_padding(&ct);

	conf_free(&at);
	conf_free(&bt);
	conf_free(&ct);
	free(A);
	free(Bt);
	free(a);
	free(b);
	free(c0);
	free(got);
	free(want);
	free(bound);
}

static void gemm_trans(int trans_a, int trans_b)
{
	conf_begin("gemm");
	for (size_t i = 0; i < sizeof(gemm_cases) / sizeof(gemm_cases[0]); i++)
		gemm_one(trans_a, trans_b, &gemm_cases[i]);
	conf_covered("gemm");
}

#define GEMM_TRANS(X) X(nn, 0, 0) X(nt, 0, 1) X(tn, 1, 0) X(tt, 1, 1)

#define GEMM_TEST(name, ta, tb)                 \
	static void gemm_##name(void **state)   \
	{                                       \
		(void)state;                    \
		gemm_trans(ta, tb);             \
	}
GEMM_TRANS(GEMM_TEST)

#define GEMM_ENTRY(name, ta, tb) cmocka_unit_test(gemm_##name),

CONF_GROUP(gemm) = {
	GEMM_TRANS(GEMM_ENTRY)
};
CONF_GROUP_END(gemm);
