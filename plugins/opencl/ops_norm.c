/* rms_norm and layer_norm (kernels/opencl/norm.cl): one work-group per
 * row. */
#include "ocl_plugin.h"

static gllmk_status norm(void *st, enum ocl_kernel k, const char *op, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b,
			 float eps)
{
	struct ocl_view vy = ocl_view(y), vx = ocl_view(x);
	struct ocl_args args = ocl_args(st, k);

	ocl_arg_tensor(&args, &vy);
	ocl_arg_tensor(&args, &vx);
	ocl_arg_mem(&args, ocl_mem(w ? w : x)); /* unread when absent */
	ocl_arg_long(&args, w ? (int64_t)w->offset : 0);
	ocl_arg_int(&args, w != NULL);
	ocl_arg_mem(&args, ocl_mem(b ? b : x));
	ocl_arg_long(&args, b ? (int64_t)b->offset : 0);
	ocl_arg_int(&args, b != NULL);
	ocl_arg_float(&args, eps);
	ocl_arg_long(&args, vy.d[3]);
	ocl_arg_long(&args, vy.d[1]);
	ocl_arg_long(&args, vy.d[2]);
	return ocl_launch_rows(&args, op, (uint64_t)ocl_rows(&vy));
}

gllmk_status ocl_rms_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps)
{
	return norm(st, OCL_KERNEL_RMS_NORM, "gllmk_rms_norm", y, x, w, NULL, eps);
}

gllmk_status ocl_layer_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps)
{
	return norm(st, OCL_KERNEL_LAYER_NORM, "gllmk_layer_norm", y, x, w, b, eps);
}
