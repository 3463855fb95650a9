/* Elementwise ops and convert: one work-item per element of y. */
#include "ocl_plugin.h"

/* y = op(a, b, s); b NULL for unary ops (a stands in, unread). */
static gllmk_status elementwise(void *st, enum ocl_kernel_id k, const char *op, ocl_t y, ocl_t a, ocl_t b, float s)
{
	struct ocl_view vy = ocl_view(y), va = ocl_view(a), vb = ocl_view(b ? b : a);
	struct ocl_args args = ocl_args(st, k);
	int64_t total = ocl_rows(&vy) * vy.d[3];

	ocl_arg_tensor(&args, &vy);
	ocl_arg_tensor(&args, &va);
	ocl_arg_tensor(&args, &vb);
	ocl_arg_long(&args, vb.d[3] == 1 ? 0 : 1);
	ocl_arg_float(&args, s);
	ocl_arg_long(&args, vy.d[3]);
	ocl_arg_long(&args, vy.d[1]);
	ocl_arg_long(&args, vy.d[2]);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, op, (uint64_t)total);
}

#define OCL_BINARY(name)                                                                \
	gllmk_status ocl_##name(void *st, ocl_t y, ocl_t a, ocl_t b)                    \
	{                                                                               \
		return elementwise(st, OCLK_ew_##name, "gllmk_" #name, y, a, b, 0.0f);  \
	}
#define OCL_UNARY(name)                                                                 \
	gllmk_status ocl_##name(void *st, ocl_t y, ocl_t x)                             \
	{                                                                               \
		return elementwise(st, OCLK_ew_##name, "gllmk_" #name, y, x, NULL, 0.0f); \
	}

OCL_BINARY(add)
OCL_BINARY(mul)
OCL_BINARY(swiglu)
OCL_UNARY(silu)
OCL_UNARY(gelu_tanh)
OCL_UNARY(gelu_erf)
OCL_UNARY(relu)
OCL_UNARY(tanh)
OCL_UNARY(exp)

gllmk_status ocl_scale(void *st, ocl_t y, ocl_t x, float s)
{
	return elementwise(st, OCLK_ew_scale, "gllmk_scale", y, x, NULL, s);
}

/* convert_<src>_<dst> for the three float dtypes */
static int float_slot(int32_t dt)
{
	return dt == GLLMK_F32 ? 0 : dt == GLLMK_F16 ? 1 : 2;
}

static const enum ocl_kernel_id convert_kernels[3][3] = {
	{ OCLK_convert_f32_f32, OCLK_convert_f32_f16, OCLK_convert_f32_bf16 },
	{ OCLK_convert_f16_f32, OCLK_convert_f16_f16, OCLK_convert_f16_bf16 },
	{ OCLK_convert_bf16_f32, OCLK_convert_bf16_f16, OCLK_convert_bf16_bf16 },
};

gllmk_status ocl_convert(void *st, ocl_t y, ocl_t x)
{
	struct ocl_view vy = ocl_view(y), vx = ocl_view(x);
	struct ocl_args args = ocl_args(st, convert_kernels[float_slot(x->dtype)][float_slot(y->dtype)]);
	int64_t total = ocl_rows(&vy) * vy.d[3];

	ocl_arg_tensor(&args, &vy);
	ocl_arg_tensor(&args, &vx);
	ocl_arg_long(&args, vy.d[3]);
	ocl_arg_long(&args, vy.d[1]);
	ocl_arg_long(&args, vy.d[2]);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, "gllmk_convert", (uint64_t)total);
}
