/* rope and rope_ext (kernels/opencl/rope.cl): one work-item per rotated
 * pair or copied element. */
#include "../rope_yarn.h"
#include "ocl_plugin.h"

/* rope and rope_ext: one kernel; YaRN's correction dims and magnitude are
 * formed here in f32 as ggml does (rope_yarn.h). */
gllmk_status ocl_rope_ext(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t ff, const gllmk_rope_ext_params *p)
{
	struct ocl_args args = ocl_args(st, p->mode == GLLMK_ROPE_NEOX ? OCL_KERNEL_ROPE_NEOX : OCL_KERNEL_ROPE_NORMAL);
	int64_t t = x->shape[0], h = x->shape[1], d = x->shape[2];
	int32_t n_rot = p->n_rot ? p->n_rot : (int32_t)d;
	int64_t total = t * h * (n_rot / 2 + (d - n_rot));
	struct rope_yarn yarn = rope_yarn_of(p, n_rot);

	ocl_arg_mem(&args, ocl_mem(y));
	ocl_arg_long(&args, (int64_t)y->offset);
	ocl_arg_long(&args, y->stride[0]);
	ocl_arg_long(&args, y->stride[1]);
	ocl_arg_mem(&args, ocl_mem(x));
	ocl_arg_long(&args, (int64_t)x->offset);
	ocl_arg_long(&args, x->stride[0]);
	ocl_arg_long(&args, x->stride[1]);
	ocl_arg_mem(&args, ocl_mem(pos));
	ocl_arg_long(&args, (int64_t)pos->offset);
	ocl_arg_mem(&args, ocl_mem(ff ? ff : pos)); /* unread when absent */
	ocl_arg_long(&args, ff ? (int64_t)ff->offset : 0);
	ocl_arg_int(&args, ff != NULL);
	ocl_arg_int(&args, n_rot);
	ocl_arg_float(&args, p->theta_base);
	ocl_arg_float(&args, p->freq_scale);
	ocl_arg_float(&args, yarn.ext_factor);
	ocl_arg_float(&args, yarn.lo);
	ocl_arg_float(&args, yarn.hi);
	ocl_arg_float(&args, yarn.mscale);
	ocl_arg_long(&args, h);
	ocl_arg_long(&args, d);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, "gllmk_rope", (uint64_t)total);
}

gllmk_status ocl_rope(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p)
{
	const gllmk_rope_ext_params q = rope_ext_of(p);

	return ocl_rope_ext(st, y, x, pos, NULL, &q);
}
