/* The f32 GEMM below the register block (M <= SMALL_M_MAX): dots or
 * axpys over B, which is read once. */
#include <string.h>

#include "gemm/sgemm_internal.h"

#define AXPY_COLS 512           /* columns of C a task accumulates at a time */
/* Up to this M the dots/axpys beat a padded register block: each axpy
 * loads and stores its accumulators, so at M = 8 the microkernel, even
 * 8/14 full, was faster (gllmk-bench, M = 1..8, N = K = 4096). */
#define SMALL_M_MAX 4

static void axpy_f32(const struct cpu_cntx *k, float *y, float a, const float *x, int64_t n)
{
	if (k->axpy_f32) {
		k->axpy_f32(y, a, x, n);
		return;
	}
	for (int64_t i = 0; i < n; i++)
		y[i] += a * x[i];
}

struct small_m_job {
	const struct cpu_sgemm *g;
	const struct cpu_cntx *k;
};

static void store_c(const struct cpu_sgemm *g, float *c, float v)
{
	*c = g->beta == 0.0f ? g->alpha * v : g->alpha * v + g->beta * *c;
}

/* B's columns are contiguous (trans_b): one dot per element of C, B read once. */
static void dot_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct small_m_job *s = arg;
	const struct cpu_sgemm *g = s->g;

	(void)tid;
	for (int64_t j = begin; j < end; j++)
		for (int64_t i = 0; i < g->m; i++)
			store_c(g, g->c + i * g->ldc + j,
				s->k->dot_f32(g->k, g->a + i * g->a_rs, (const float *)g->b + j * g->b_cs));
}

/* B's rows are contiguous: C's row i is Σ_p A(i, p)·B(p, :), AXPY_COLS
 * columns at a time so the M accumulators and the B row piece stay in L1. */
static void axpy_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct small_m_job *s = arg;
	const struct cpu_sgemm *g = s->g;
	float acc[SMALL_M_MAX * AXPY_COLS];

	(void)tid;
	for (int64_t c0 = begin; c0 < end; c0++) {
		const int64_t j0 = c0 * AXPY_COLS, cols = min64(g->n - j0, AXPY_COLS);

		memset(acc, 0, (size_t)(g->m * AXPY_COLS) * sizeof(float));
		for (int64_t p = 0; p < g->k; p++) {
			const float *brow = (const float *)g->b + p * g->b_rs + j0;

			for (int64_t i = 0; i < g->m; i++)
				axpy_f32(s->k, acc + i * AXPY_COLS, g->a[i * g->a_rs + p * g->a_cs], brow, cols);
		}
		for (int64_t i = 0; i < g->m; i++)
			for (int64_t j = 0; j < cols; j++)
				store_c(g, g->c + i * g->ldc + j0 + j, acc[i * AXPY_COLS + j]);
	}
}

/* M <= SMALL_M_MAX (and < mr): a register block would be mostly padding,
 * and B is read once anyway; dots or axpys stream it at memory speed.
 * Returns 0 when the layout has no such path (then the GEMM runs). */
int sgemm_small_m(struct cpu_state *s, const struct cpu_sgemm *g)
{
	struct small_m_job job = { .g = g, .k = s->k };

	if (g->m > SMALL_M_MAX || g->m >= s->k->mr || g->b_dequant)
		return 0;
	if (g->b_rs == 1 && g->a_cs == 1) {
		cpu_pool_run(s->pool, g->n, 1 + (1 << 16) / (g->k * g->m), dot_task, &job);
		return 1;
	}
	if (g->b_cs == 1) {
		cpu_pool_run(s->pool, ceil_div(g->n, AXPY_COLS), 1 + (1 << 16) / (g->k * AXPY_COLS), axpy_task, &job);
		return 1;
	}
	return 0;
}
