/* rms_norm, layer_norm and softmax (one work-group per row) and rope (one
 * work-item per rotated pair or copied element). */
#include "../rope_yarn.h"
#include "ocl_plugin.h"

static gllmk_status norm(void *st, enum ocl_kernel_id k, const char *op, ocl_t y, ocl_t x, ocl_t w, ocl_t b,
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

gllmk_status ocl_rms_norm(void *st, ocl_t y, ocl_t x, ocl_t w, float eps)
{
	return norm(st, OCLK_rms_norm, "gllmk_rms_norm", y, x, w, NULL, eps);
}

gllmk_status ocl_layer_norm(void *st, ocl_t y, ocl_t x, ocl_t w, ocl_t b, float eps)
{
	return norm(st, OCLK_layer_norm, "gllmk_layer_norm", y, x, w, b, eps);
}

gllmk_status ocl_softmax(void *st, ocl_t y, ocl_t x, ocl_t mask, const gllmk_softmax_params *p)
{
	struct ocl_view vy = ocl_view(y), vx = ocl_view(x);
	struct ocl_args args = ocl_args(st, OCLK_softmax);

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

/* rope and rope_ext: one kernel; YaRN's correction dims and magnitude are
 * formed here in f32 as ggml does (rope_yarn.h). */
gllmk_status ocl_rope_ext(void *st, ocl_t y, ocl_t x, ocl_t pos, ocl_t ff, const gllmk_rope_ext_params *p)
{
	struct ocl_args args = ocl_args(st, p->mode == GLLMK_ROPE_NEOX ? OCLK_rope_neox : OCLK_rope_normal);
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

gllmk_status ocl_rope(void *st, ocl_t y, ocl_t x, ocl_t pos, const gllmk_rope_params *p)
{
	const gllmk_rope_ext_params q = rope_ext_of(p);

	return ocl_rope_ext(st, y, x, pos, NULL, &q);
}
