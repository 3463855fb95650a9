/* gllmk_gemm: C = alpha·op(A)·op(B) + beta·C in f32, on the GEMM framework
 * (gemm/sgemm.h), transposes as stride choices. */
#include "gemm/sgemm.h"

/* Elements between rows of a 2-D f32 operand. */
static int64_t ld_of(const gllmk_tensor *t)
{
	return t->ndim >= 2 ? t->stride[t->ndim - 2] / (int64_t)sizeof(float) : 0;
}

gllmk_status cpu_gemm(void *st, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p)
{
	const int64_t lda = ld_of(a), ldb = ld_of(b);
	struct cpu_sgemm g = {
		.m = c->shape[0],
		.n = c->shape[1],
		.k = p->trans_a ? a->shape[0] : a->shape[1],
		.a = gllmk_tensor_host(a),
		.a_rs = p->trans_a ? 1 : lda,
		.a_cs = p->trans_a ? lda : 1,
		.b = gllmk_tensor_host(b),
		.b_rs = p->trans_b ? 1 : ldb,
		.b_cs = p->trans_b ? ldb : 1,
		.c = gllmk_tensor_host(c),
		.ldc = ld_of(c),
		.alpha = p->alpha,
		.beta = p->beta,
	};

	return cpu_sgemm_run(st, &g);
}

