/* top_k and moe_route (kernels/opencl/routing.cl): one work-item per row or
 * token, the best k kept as a heap in the output row itself. */
#include "ocl_plugin.h"

/* The byte stride between rows of a 2-D view (0 for one row). */
static int64_t row_stride(gllmk_t t)
{
	return t->shape[0] > 1 ? t->stride[0] : 0;
}

static void arg_row_tensor(struct ocl_args *a, gllmk_t t)
{
	ocl_arg_mem(a, ocl_mem(t));
	ocl_arg_long(a, (int64_t)t->offset);
	ocl_arg_long(a, row_stride(t));
}

gllmk_status ocl_top_k(void *st, gllmk_t values, gllmk_t ids, gllmk_t x)
{
	struct ocl_args args = ocl_args(st, OCL_KERNEL_TOP_K);

	arg_row_tensor(&args, ids);
	arg_row_tensor(&args, values ? values : ids); /* unwritten without values */
	ocl_arg_int(&args, values != NULL);
	arg_row_tensor(&args, x);
	ocl_arg_int(&args, (int32_t)x->shape[1]);
	ocl_arg_int(&args, (int32_t)ids->shape[1]);
	ocl_arg_long(&args, x->shape[0]);
	return ocl_launch(&args, "gllmk_top_k", (uint64_t)x->shape[0]);
}

gllmk_status ocl_moe_route(void *st, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,
			   const gllmk_moe_route_params *p)
{
	struct ocl_args args = ocl_args(st, OCL_KERNEL_MOE_ROUTE);

	arg_row_tensor(&args, ids);
	arg_row_tensor(&args, weights);
	arg_row_tensor(&args, logits);
	ocl_arg_mem(&args, ocl_mem(bias ? bias : logits)); /* unread without bias */
	ocl_arg_long(&args, bias ? (int64_t)bias->offset : 0);
	ocl_arg_int(&args, bias != NULL);
	ocl_arg_int(&args, (int32_t)logits->shape[1]);
	ocl_arg_int(&args, (int32_t)ids->shape[1]);
	ocl_arg_int(&args, p->gating);
	ocl_arg_int(&args, p->n_group);
	ocl_arg_int(&args, p->topk_group);
	ocl_arg_int(&args, p->norm);
	ocl_arg_float(&args, p->scale);
	ocl_arg_long(&args, logits->shape[0]);
	return ocl_launch(&args, "gllmk_moe_route", (uint64_t)logits->shape[0]);
}
