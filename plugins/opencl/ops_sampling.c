/* argmax (one work-group per row) and sample (one work-item per row, on
 * the device: the candidates are ordered in a scratch buffer released
 * once the kernel is done; uniform[] travels to the device with the call). */
#include "ocl_plugin.h"

static void logits_args(struct ocl_args *args, gllmk_t ids, gllmk_t x, int64_t *rows, int64_t *n)
{
	*rows = x->ndim == 1 ? 1 : x->shape[0];
	*n = x->shape[x->ndim - 1];
	ocl_arg_mem(args, ocl_mem(ids));
	ocl_arg_long(args, (int64_t)ids->offset);
	ocl_arg_mem(args, ocl_mem(x));
	ocl_arg_long(args, (int64_t)x->offset);
	ocl_arg_long(args, x->ndim == 1 ? 0 : x->stride[0]);
}

gllmk_status ocl_argmax(void *st, gllmk_t ids, gllmk_t x)
{
	struct ocl_args args = ocl_args(st, OCL_KERNEL_ARGMAX);
	int64_t rows, n;

	logits_args(&args, ids, x, &rows, &n);
	ocl_arg_long(&args, n);
	return ocl_launch_rows(&args, "gllmk_argmax", (uint64_t)rows);
}

gllmk_status ocl_sample(void *st, gllmk_t ids, gllmk_t logits, const float *uniform, const gllmk_sample_params *p)
{
	struct ocl_ctx *s = st;
	struct ocl_args args = ocl_args(s, OCL_KERNEL_SAMPLE);
	int64_t rows = logits->ndim == 1 ? 1 : logits->shape[0], n = logits->shape[logits->ndim - 1];
	cl_int err;
	/* both released now; OpenCL keeps them until the kernel is done */
	cl_mem order = s->api.clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, (size_t)(rows * n) * sizeof(int32_t), NULL,
					     &err);
	cl_mem u;
	gllmk_status rc;

	if (err != CL_SUCCESS)
		return ocl_fail(s, "gllmk_sample", "clCreateBuffer", err);
	u = s->api.clCreateBuffer(s->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)rows * sizeof(float),
				  (void *)uniform, &err);
	if (err != CL_SUCCESS) {
		s->api.clReleaseMemObject(order);
		return ocl_fail(s, "gllmk_sample", "clCreateBuffer", err);
	}
	logits_args(&args, ids, logits, &rows, &n);
	ocl_arg_mem(&args, order);
	ocl_arg_mem(&args, u);
	ocl_arg_float(&args, p->temperature);
	ocl_arg_int(&args, p->top_k);
	ocl_arg_float(&args, p->top_p);
	ocl_arg_long(&args, n);
	ocl_arg_long(&args, rows);
	rc = ocl_launch(&args, "gllmk_sample", (uint64_t)rows);
	s->api.clReleaseMemObject(order);
	s->api.clReleaseMemObject(u);
	return rc;
}
