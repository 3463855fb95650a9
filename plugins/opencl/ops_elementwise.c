/* Elementwise ops and convert: one work-item per element of y. */
#include "ocl_plugin.h"
#include "../glu_views.h"

/* y = op(a, b, s, t); b NULL for unary ops (a stands in, unread). */
static gllmk_status elementwise2(void *st, enum ocl_kernel_id k, const char *op, ocl_t y, ocl_t a, ocl_t b, float s,
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

static gllmk_status elementwise(void *st, enum ocl_kernel_id k, const char *op, ocl_t y, ocl_t a, ocl_t b, float s)
{
	return elementwise2(st, k, op, y, a, b, s, 0.0f);
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
OCL_UNARY(sigmoid)

gllmk_status ocl_scale(void *st, ocl_t y, ocl_t x, float s)
{
	return elementwise(st, OCLK_ew_scale, "gllmk_scale", y, x, NULL, s);
}

gllmk_status ocl_clamp(void *st, ocl_t y, ocl_t x, float lo, float hi)
{
	return elementwise2(st, OCLK_ew_clamp, "gllmk_clamp", y, x, NULL, lo, hi);
}

gllmk_status ocl_softcap(void *st, ocl_t y, ocl_t x, float c)
{
	return elementwise2(st, OCLK_ew_softcap, "gllmk_softcap", y, x, NULL, c, 1.0f / c);
}

/* glu: the fused form (up NULL) as two views of gate's rows, y's shape
 * each, the up half N elements after the gate half (before it, swapped). */
gllmk_status ocl_glu(void *st, ocl_t y, ocl_t gate, ocl_t up, const gllmk_glu_params *p)
{
	static const enum ocl_kernel_id kernel[] = {
		[GLLMK_GLU_SILU] = OCLK_ew_swiglu,
		[GLLMK_GLU_GELU_TANH] = OCLK_ew_geglu,
		[GLLMK_GLU_GELU_ERF] = OCLK_ew_geglu_erf,
		[GLLMK_GLU_RELU] = OCLK_ew_reglu,
		[GLLMK_GLU_SWIGLU_OAI] = OCLK_ew_swiglu_oai,
	};
	gllmk_tensor g, u;

	if (!up) {
		glu_fused_views(y, gate, p->swapped, &g, &u);
		gate = &g;
		up = &u;
	}
	return elementwise2(st, kernel[p->op], "gllmk_glu", y, gate, up, p->alpha, p->limit);
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
