/* Elementwise ops: one work-item per element of y. */
#include "ocl_plugin.h"
#include "../glu_views.h"

/* y = op(a, b, s, t); b NULL for unary ops (a stands in, unread). */
static gllmk_status elementwise2(void *st, enum ocl_kernel k, const char *op, gllmk_t y, gllmk_t a, gllmk_t b, float s,
				 float t)
{
	struct ocl_view vy = ocl_view(y), va = ocl_view(a), vb = ocl_view(b ? b : a);
	struct ocl_args args = ocl_args(st, k);
	int64_t total = ocl_rows(&vy) * vy.d[3];

	ocl_arg_tensor(&args, &vy);
	ocl_arg_tensor(&args, &va);
	ocl_arg_tensor(&args, &vb);
	ocl_arg_long(&args, vb.d[3] == 1 ? 0 : 1);
	ocl_arg_float(&args, s);
	ocl_arg_float(&args, t);
	ocl_arg_long(&args, vy.d[3]);
	ocl_arg_long(&args, vy.d[1]);
	ocl_arg_long(&args, vy.d[2]);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, op, (uint64_t)total);
}

static gllmk_status elementwise(void *st, enum ocl_kernel k, const char *op, gllmk_t y, gllmk_t a, gllmk_t b, float s)
{
	return elementwise2(st, k, op, y, a, b, s, 0.0f);
}

/* The macros take the function's full name, so grep finds ocl_silu here. */
#define OCL_BINARY(fn, kernel, op)                                 \
	gllmk_status fn(void *st, gllmk_t y, gllmk_t a, gllmk_t b) \
	{                                                          \
		return elementwise(st, kernel, op, y, a, b, 0.0f); \
	}
#define OCL_UNARY(fn, kernel, op)                                     \
	gllmk_status fn(void *st, gllmk_t y, gllmk_t x)               \
	{                                                             \
		return elementwise(st, kernel, op, y, x, NULL, 0.0f); \
	}

OCL_BINARY(ocl_add, OCL_KERNEL_EW_ADD, "gllmk_add")
OCL_BINARY(ocl_mul, OCL_KERNEL_EW_MUL, "gllmk_mul")
OCL_BINARY(ocl_swiglu, OCL_KERNEL_EW_SWIGLU, "gllmk_swiglu")
OCL_UNARY(ocl_silu, OCL_KERNEL_EW_SILU, "gllmk_silu")
OCL_UNARY(ocl_gelu_tanh, OCL_KERNEL_EW_GELU_TANH, "gllmk_gelu_tanh")
OCL_UNARY(ocl_gelu_erf, OCL_KERNEL_EW_GELU_ERF, "gllmk_gelu_erf")
OCL_UNARY(ocl_relu, OCL_KERNEL_EW_RELU, "gllmk_relu")
OCL_UNARY(ocl_tanh, OCL_KERNEL_EW_TANH, "gllmk_tanh")
OCL_UNARY(ocl_exp, OCL_KERNEL_EW_EXP, "gllmk_exp")
OCL_UNARY(ocl_sigmoid, OCL_KERNEL_EW_SIGMOID, "gllmk_sigmoid")

gllmk_status ocl_scale(void *st, gllmk_t y, gllmk_t x, float s)
{
	return elementwise(st, OCL_KERNEL_EW_SCALE, "gllmk_scale", y, x, NULL, s);
}

gllmk_status ocl_clamp(void *st, gllmk_t y, gllmk_t x, float lo, float hi)
{
	return elementwise2(st, OCL_KERNEL_EW_CLAMP, "gllmk_clamp", y, x, NULL, lo, hi);
}

gllmk_status ocl_softcap(void *st, gllmk_t y, gllmk_t x, float c)
{
	return elementwise2(st, OCL_KERNEL_EW_SOFTCAP, "gllmk_softcap", y, x, NULL, c, 1.0f / c);
}

/* glu: the fused form (up NULL) as two views of gate's rows, y's shape
 * each, the up half N elements after the gate half (before it, swapped). */
gllmk_status ocl_glu(void *st, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p)
{
	static const enum ocl_kernel kernel[] = {
		[GLLMK_GLU_SILU] = OCL_KERNEL_EW_SWIGLU,
		[GLLMK_GLU_GELU_TANH] = OCL_KERNEL_EW_GEGLU,
		[GLLMK_GLU_GELU_ERF] = OCL_KERNEL_EW_GEGLU_ERF,
		[GLLMK_GLU_RELU] = OCL_KERNEL_EW_REGLU,
		[GLLMK_GLU_SWIGLU_OAI] = OCL_KERNEL_EW_SWIGLU_OAI,
	};
	gllmk_tensor g, u;

	if (!up) {
		glu_fused_views(y, gate, p->swapped, &g, &u);
		gate = &g;
		up = &u;
	}
	return elementwise2(st, kernel[p->op], "gllmk_glu", y, gate, up, p->alpha, p->limit);
}
