/* add, mul, scale, the activations, swiglu and glu, clamp, softcap
 * (kernels/vulkan/elementwise.comp) and convert (convert.comp). */
#include "vk_plugin.h"
#include "../glu_views.h"

struct ew_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, a, b;
	uint32_t b_step;
	float s, t;
};

/* s, t: the op's scalars (elementwise.comp says which). */
static gllmk_status ew_run2(struct vk_ctx *c, enum vk_kernel k, gllmk_t y, gllmk_t a, gllmk_t b, float s, float t)
{
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows_of(a);
	struct ew_push p = {
		.n = r.n,
		.d1 = r.d1,
		.d2 = r.d2,
		.rows = r.rows,
		.s = s,
		.t = t,
	};

	p.y = vk_view_of(c, &call, 0, y, true);
	p.a = vk_view_of(c, &call, 1, a, false);
	if (b) {
		p.b = vk_view_of(c, &call, 2, b, false);
		p.b_step = b->shape[b->ndim - 1] == 1 ? 0 : 4;
	}
	return vk_dispatch(c, k, &call, &p, sizeof(p), vk_groups((uint64_t)r.n * r.rows, 256));
}

static gllmk_status ew_run(struct vk_ctx *c, enum vk_kernel k, gllmk_t y, gllmk_t a, gllmk_t b, float s)
{
	return ew_run2(c, k, y, a, b, s, 0.0f);
}

#define VK_UNARY_OP(name, KERNEL)                                  \
	gllmk_status vk_##name(void *st, gllmk_t y, gllmk_t x)     \
	{                                                          \
		return ew_run(st, KERNEL, y, x, NULL, 0.0f);       \
	}
#define VK_BINARY_OP(name, KERNEL)                                       \
	gllmk_status vk_##name(void *st, gllmk_t y, gllmk_t a, gllmk_t b) \
	{                                                                \
		return ew_run(st, KERNEL, y, a, b, 0.0f);                \
	}

VK_UNARY_OP(silu, VK_KERNEL_EW_SILU)
VK_UNARY_OP(gelu_tanh, VK_KERNEL_EW_GELU_TANH)
VK_UNARY_OP(gelu_erf, VK_KERNEL_EW_GELU_ERF)
VK_UNARY_OP(relu, VK_KERNEL_EW_RELU)
VK_UNARY_OP(tanh, VK_KERNEL_EW_TANH)
VK_UNARY_OP(exp, VK_KERNEL_EW_EXP)
VK_UNARY_OP(sigmoid, VK_KERNEL_EW_SIGMOID)
VK_BINARY_OP(add, VK_KERNEL_EW_ADD)
VK_BINARY_OP(mul, VK_KERNEL_EW_MUL)
VK_BINARY_OP(swiglu, VK_KERNEL_EW_SWIGLU)

gllmk_status vk_scale(void *st, gllmk_t y, gllmk_t x, float s)
{
	return ew_run(st, VK_KERNEL_EW_SCALE, y, x, NULL, s);
}

gllmk_status vk_clamp(void *st, gllmk_t y, gllmk_t x, float lo, float hi)
{
	return ew_run2(st, VK_KERNEL_EW_CLAMP, y, x, NULL, lo, hi);
}

gllmk_status vk_softcap(void *st, gllmk_t y, gllmk_t x, float c)
{
	return ew_run2(st, VK_KERNEL_EW_SOFTCAP, y, x, NULL, c, 1.0f / c);
}

/* glu: the fused form (up NULL) as two views of gate's rows, y's shape
 * each, the up half N elements after the gate half (before it, swapped). */
gllmk_status vk_glu(void *st, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p)
{
	static const enum vk_kernel kernel[] = {
		[GLLMK_GLU_SILU] = VK_KERNEL_EW_SWIGLU,
		[GLLMK_GLU_GELU_TANH] = VK_KERNEL_EW_GEGLU,
		[GLLMK_GLU_GELU_ERF] = VK_KERNEL_EW_GEGLU_ERF,
		[GLLMK_GLU_RELU] = VK_KERNEL_EW_REGLU,
		[GLLMK_GLU_SWIGLU_OAI] = VK_KERNEL_EW_SWIGLU_OAI,
	};
	gllmk_tensor g, u;

	if (!up) {
		glu_fused_views(y, gate, p->swapped, &g, &u);
		gate = &g;
		up = &u;
	}
	return ew_run2(st, kernel[p->op], y, gate, up, p->alpha, p->limit);
}

/* ------------------------------------------------------------ convert */

struct convert_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, x;
};

static int float_index(int32_t dtype)
{
	return dtype == GLLMK_F32 ? 0 : dtype == GLLMK_F16 ? 1 : 2;
}

static const enum vk_kernel convert_kernel[3][3] = {
	{ VK_KERNEL_CONVERT_F32_F32, VK_KERNEL_CONVERT_F32_F16, VK_KERNEL_CONVERT_F32_BF16 },
	{ VK_KERNEL_CONVERT_F16_F32, VK_KERNEL_CONVERT_F16_F16, VK_KERNEL_CONVERT_F16_BF16 },
	{ VK_KERNEL_CONVERT_BF16_F32, VK_KERNEL_CONVERT_BF16_F16, VK_KERNEL_CONVERT_BF16_BF16 },
};

gllmk_status vk_convert(void *st, gllmk_t y, gllmk_t x)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows_of(x);
	struct convert_push p = { .n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows };
	uint64_t per_row = y->dtype == GLLMK_F32 ? r.n : r.n / 2 + 1;

	p.y = vk_view_of(c, &call, 0, y, true);
	p.x = vk_view_of(c, &call, 1, x, false);
	return vk_dispatch(c, convert_kernel[float_index(x->dtype)][float_index(y->dtype)], &call, &p, sizeof(p),
			   vk_groups(per_row * r.rows, 256));
}
