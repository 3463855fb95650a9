/* softmax (kernels/opencl/softmax.cl): one work-group per row, with an
 * optional mask and causal masking. */
#include "ocl_plugin.h"

gllmk_status ocl_softmax(void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *p)
{
	struct ocl_view vy = ocl_view(y), vx = ocl_view(x);
	struct ocl_args args = ocl_args(st, OCL_KERNEL_SOFTMAX);

	ocl_arg_tensor(&args, &vy);
	ocl_arg_tensor(&args, &vx);
	ocl_arg_mem(&args, ocl_mem(mask ? mask : x));
	ocl_arg_long(&args, mask ? (int64_t)mask->offset : 0);
	ocl_arg_long(&args, mask && mask->ndim > 1 ? mask->stride[0] : 0);
	ocl_arg_int(&args, mask != NULL);
	ocl_arg_int(&args, p->causal);
	ocl_arg_float(&args, p->scale);
	ocl_arg_long(&args, vy.d[3]);
	ocl_arg_long(&args, vy.d[1]);
	ocl_arg_long(&args, vy.d[2]);
	return ocl_launch_rows(&args, "gllmk_softmax", (uint64_t)ocl_rows(&vy));
}
