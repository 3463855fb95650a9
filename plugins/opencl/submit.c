/* Kernel launches shared by every op: arguments set in order, one 1-D
 * NDRange with a fixed group size (so the driver specialises each kernel
 * once). */
#include "ocl_plugin.h"

struct ocl_args ocl_args(struct ocl_ctx *s, enum ocl_kernel k)
{
	return (struct ocl_args){ .s = s, .k = s->kernels[k] };
}

static void set(struct ocl_args *a, size_t size, const void *value)
{
	cl_int err;

	if (a->err != CL_SUCCESS)
		return;
	err = a->s->api.clSetKernelArg(a->k, a->n++, size, value);
	if (err != CL_SUCCESS) {
		a->err = err;
		a->what = "clSetKernelArg";
	}
}

void ocl_arg_mem(struct ocl_args *a, cl_mem m)
{
	set(a, sizeof(m), &m);
}

void ocl_arg_long(struct ocl_args *a, int64_t v)
{
	cl_long x = v;

	set(a, sizeof(x), &x);
}

void ocl_arg_int(struct ocl_args *a, int32_t v)
{
	cl_int x = v;

	set(a, sizeof(x), &x);
}

void ocl_arg_float(struct ocl_args *a, float v)
{
	cl_float x = v;

	set(a, sizeof(x), &x);
}

void ocl_arg_tensor(struct ocl_args *a, const struct ocl_view *v)
{
	ocl_arg_mem(a, v->mem);
	ocl_arg_long(a, (int64_t)v->off);
	for (int d = 0; d < 3; d++)
		ocl_arg_long(a, v->s[d]);
}

static gllmk_status enqueue(struct ocl_args *a, const char *op, size_t global)
{
	size_t local = OCL_WG;
	cl_int err;

	if (a->err != CL_SUCCESS)
		return ocl_fail(a->s, op, a->what, a->err);
	err = a->s->api.clEnqueueNDRangeKernel(a->s->queue, a->k, 1, NULL, &global, &local, 0, NULL, NULL);
	return err == CL_SUCCESS ? GLLMK_OK : ocl_fail(a->s, op, "clEnqueueNDRangeKernel", err);
}

gllmk_status ocl_launch(struct ocl_args *a, const char *op, uint64_t items)
{
	return enqueue(a, op, (size_t)((items + OCL_WG - 1) / OCL_WG * OCL_WG));
}

gllmk_status ocl_launch_rows(struct ocl_args *a, const char *op, uint64_t rows)
{
	return enqueue(a, op, (size_t)(rows * OCL_WG));
}
