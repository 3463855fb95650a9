/* matmul (any weight dtype, decoded in registers), gemm (f32 sgemm),
 * matmul_id (the matvec kernel with the expert chosen on the device) and
 * matmul_batched (matmul's kernels with the batch as the outer index). */
#include "ocl_dtypes.h"

/* MT in kernels/opencl/matmul.cl: rows of x per work-item. Below 4 rows
 * the matvec variant (one row per item) wastes no work on absent rows. */
#define MATMUL_ROWS 4

/* The dims and strides of a 2-D matrix or a 3-D batch of them, counted
 * from the innermost: d 0 the row length, 1 the rows, 2 the batches. A
 * size-1 dim's stride reads as 0. */
static int64_t dim_from_end(gllmk_t t, int d)
{
	return d < t->ndim ? t->shape[t->ndim - 1 - d] : 1;
}

static int64_t stride_from_end(gllmk_t t, int d)
{
	return d < t->ndim && t->shape[t->ndim - 1 - d] > 1 ? t->stride[t->ndim - 1 - d] : 0;
}

/* y [B, M, N] = x [B, M, K] · w[b]ᵀ (+ bias); 2-D tensors: B = 1 (matmul).
 * One launch: the batch is the outer work-item index. */
static gllmk_status matmul_run(void *st, const char *op, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	const int64_t m = dim_from_end(x, 1), n = dim_from_end(w, 1), k = dim_from_end(w, 0), b = dim_from_end(x, 2);
	const int64_t per_item = m < MATMUL_ROWS ? 1 : MATMUL_ROWS;
	const int64_t total = b * n * ((m + per_item - 1) / per_item);
	struct ocl_args args = ocl_args(st, per_item == 1 ? ocl_weight_kernels[w->dtype].matvec : ocl_weight_kernels[w->dtype].matmul);

	ocl_arg_mem(&args, ocl_mem(y));
	ocl_arg_long(&args, (int64_t)y->offset);
	ocl_arg_long(&args, stride_from_end(y, 1));
	ocl_arg_mem(&args, ocl_mem(x));
	ocl_arg_long(&args, (int64_t)x->offset);
	ocl_arg_long(&args, stride_from_end(x, 1));
	ocl_arg_mem(&args, ocl_mem(w));
	ocl_arg_long(&args, (int64_t)w->offset);
	ocl_arg_long(&args, w->stride[w->ndim - 2]);
	ocl_arg_mem(&args, ocl_mem(bias ? bias : y)); /* unread without a bias */
	ocl_arg_long(&args, bias ? (int64_t)bias->offset : 0);
	ocl_arg_int(&args, bias != NULL);
	ocl_arg_long(&args, m);
	ocl_arg_long(&args, n);
	ocl_arg_long(&args, k);
	ocl_arg_long(&args, stride_from_end(y, 2));
	ocl_arg_long(&args, stride_from_end(x, 2));
	ocl_arg_long(&args, stride_from_end(w, 2));
	ocl_arg_long(&args, total);
	return ocl_launch(&args, op, (uint64_t)total);
}

gllmk_status ocl_matmul(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	return matmul_run(st, "gllmk_matmul", y, x, w, bias);
}

gllmk_status ocl_gemm(void *st, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p)
{
	struct ocl_args args = ocl_args(st, OCL_KERNEL_GEMM);
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

/* ----------------------------------------------------------- matmul_id */

/* The expert ids are not read back: in a MoE layer moe_route has just made
 * them on the device, and a blocking read per call would stall every layer.
 * The kernel checks them, clamps a bad one to 0 and raises the context's
 * status; the next gllmk_sync (or buffer read) returns GLLMK_E_BOUNDS
 * naming token and slot (ocl_check_status, SPEC/OPENCL.md). */
gllmk_status ocl_matmul_id(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias, gllmk_t sw)
{
	const int64_t t = ids->shape[0], n = w->shape[1], total = n * t;
	struct ocl_ctx *s = st;
	struct ocl_args args = ocl_args(s, ocl_weight_kernels[w->dtype].matvec_id);

	s->status_armed = 1;
	ocl_arg_mem(&args, ocl_mem(y));
	ocl_arg_long(&args, (int64_t)y->offset);
	ocl_arg_long(&args, y->stride[0]);
	ocl_arg_long(&args, sw ? 0 : y->stride[1]);
	ocl_arg_mem(&args, ocl_mem(x));
	ocl_arg_long(&args, (int64_t)x->offset);
	ocl_arg_long(&args, x->stride[0]);
	ocl_arg_long(&args, x->ndim == 3 ? x->stride[1] : 0);
	ocl_arg_mem(&args, ocl_mem(w));
	ocl_arg_long(&args, (int64_t)w->offset);
	ocl_arg_long(&args, w->stride[1]);
	ocl_arg_long(&args, w->stride[0]);
	ocl_arg_mem(&args, ocl_mem(bias ? bias : y)); /* unread without a bias */
	ocl_arg_long(&args, bias ? (int64_t)bias->offset : 0);
	ocl_arg_long(&args, bias ? bias->stride[0] : 0);
	ocl_arg_int(&args, bias != NULL);
	ocl_arg_mem(&args, ocl_mem(ids));
	ocl_arg_long(&args, (int64_t)ids->offset);
	ocl_arg_long(&args, ids->stride[0]);
	ocl_arg_mem(&args, ocl_mem(sw ? sw : y)); /* unread without slot weights */
	ocl_arg_long(&args, sw ? (int64_t)sw->offset : 0);
	ocl_arg_long(&args, sw ? sw->stride[0] : 0);
	ocl_arg_int(&args, sw != NULL);
	ocl_arg_long(&args, n);
	ocl_arg_long(&args, w->shape[2]);
	ocl_arg_long(&args, ids->shape[1]);
	ocl_arg_long(&args, w->shape[0]);
	ocl_arg_mem(&args, s->status);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, "gllmk_matmul_id", (uint64_t)total);
}

/* ------------------------------------------------------ matmul_batched */

gllmk_status ocl_matmul_batched(void *st, gllmk_t y, gllmk_t x, gllmk_t w)
{
	return matmul_run(st, "gllmk_matmul_batched", y, x, w, NULL);
}
