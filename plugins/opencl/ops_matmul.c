/* matmul (any weight dtype, decoded in registers) and gemm (f32 sgemm). */
#include "ocl_wtypes.h"

#define MATMUL_SLOT(dt, name) [dt] = OCLK_matmul_##name,
#define MATVEC_SLOT(dt, name) [dt] = OCLK_matvec_##name,
static const enum ocl_kernel_id matmul_kernels[GLLMK_DTYPE_LIMIT] = { OCL_WTYPES(MATMUL_SLOT) };
static const enum ocl_kernel_id matvec_kernels[GLLMK_DTYPE_LIMIT] = { OCL_WTYPES(MATVEC_SLOT) };

/* MT in kernels/opencl/matmul.cl: rows of x per work-item. Below 4 rows
 * the matvec variant (one row per item) wastes no work on absent rows. */
#define MATMUL_ROWS 4

/* rows and row stride of a 1-D or 2-D f32 tensor */
static void rows_of(ocl_t t, int64_t *rows, int64_t *stride)
{
	*rows = t->ndim == 1 ? 1 : t->shape[0];
	*stride = t->ndim == 1 ? 0 : t->stride[0];
}

gllmk_status ocl_matmul(void *st, ocl_t y, ocl_t x, ocl_t w, ocl_t bias)
{
	int64_t m, x_s0, y_s0 = y->ndim == 1 ? 0 : y->stride[0], n = w->shape[0], k = w->shape[1], per_item;
	struct ocl_args args;
	int64_t total;

	rows_of(x, &m, &x_s0);
	per_item = m < MATMUL_ROWS ? 1 : MATMUL_ROWS;
	args = ocl_args(st, per_item == 1 ? matvec_kernels[w->dtype] : matmul_kernels[w->dtype]);
	total = n * ((m + per_item - 1) / per_item);
	ocl_arg_mem(&args, ocl_mem(y));
	ocl_arg_long(&args, (int64_t)y->offset);
	ocl_arg_long(&args, y_s0);
	ocl_arg_mem(&args, ocl_mem(x));
	ocl_arg_long(&args, (int64_t)x->offset);
	ocl_arg_long(&args, x_s0);
	ocl_arg_mem(&args, ocl_mem(w));
	ocl_arg_long(&args, (int64_t)w->offset);
	ocl_arg_long(&args, w->stride[0]);
	ocl_arg_mem(&args, ocl_mem(bias ? bias : y)); /* unread without a bias */
	ocl_arg_long(&args, bias ? (int64_t)bias->offset : 0);
	ocl_arg_int(&args, bias != NULL);
	ocl_arg_long(&args, m);
	ocl_arg_long(&args, n);
	ocl_arg_long(&args, k);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, "gllmk_matmul", (uint64_t)total);
}

gllmk_status ocl_gemm(void *st, ocl_t c, ocl_t a, ocl_t b, const gllmk_gemm_params *p)
{
	struct ocl_args args = ocl_args(st, OCLK_gemm);
	int64_t m = c->shape[0], n = c->shape[1], k = p->trans_a ? a->shape[0] : a->shape[1];

	ocl_arg_mem(&args, ocl_mem(c));
	ocl_arg_long(&args, (int64_t)c->offset);
	ocl_arg_long(&args, c->stride[0]);
	ocl_arg_mem(&args, ocl_mem(a));
	ocl_arg_long(&args, (int64_t)a->offset);
	ocl_arg_long(&args, a->stride[0]);
	ocl_arg_mem(&args, ocl_mem(b));
	ocl_arg_long(&args, (int64_t)b->offset);
	ocl_arg_long(&args, b->stride[0]);
	ocl_arg_int(&args, p->trans_a);
	ocl_arg_int(&args, p->trans_b);
	ocl_arg_float(&args, p->alpha);
	ocl_arg_float(&args, p->beta);
	ocl_arg_long(&args, m);
	ocl_arg_long(&args, n);
	ocl_arg_long(&args, k);
	ocl_arg_long(&args, m * n);
	return ocl_launch(&args, "gllmk_gemm", (uint64_t)(m * n));
}
