/* add, mul, scale, the activations, swiglu and glu, clamp, softcap
 * (kernels/vulkan/elementwise.comp). */
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
	struct vk_rows r = vk_rows(a);
	struct ew_push p = {
		.n = r.n,
		.d1 = r.d1,
		.d2 = r.d2,
		.rows = r.rows,
		.s = s,
		.t = t,
	};

	p.y = vk_view(c, &call, 0, y, true);
	p.a = vk_view(c, &call, 1, a, false);
	if (b) {
		p.b = vk_view(c, &call, 2, b, false);
		p.b_step = b->shape[b->ndim - 1] == 1 ? 0 : 4;
	}
	return vk_dispatch(c, k, &call, &p, sizeof(p), vk_groups((uint64_t)r.n * r.rows, 256));
}

static gllmk_status ew_run(struct vk_ctx *c, enum vk_kernel k, gllmk_t y, gllmk_t a, gllmk_t b, float s)
{
	return ew_run2(c, k, y, a, b, s, 0.0f);
}

/* The macros take the function's full name, so grep finds vk_silu here. */
#define VK_UNARY_OP(fn, KERNEL)                              \
	gllmk_status fn(void *st, gllmk_t y, gllmk_t x)      \
	{                                                    \
		return ew_run(st, KERNEL, y, x, NULL, 0.0f); \
	}
#define VK_BINARY_OP(fn, KERNEL)                                   \
	gllmk_status fn(void *st, gllmk_t y, gllmk_t a, gllmk_t b) \
	{                                                          \
		return ew_run(st, KERNEL, y, a, b, 0.0f);          \
	}

VK_UNARY_OP(vk_silu, VK_KERNEL_EW_SILU)
VK_UNARY_OP(vk_gelu_tanh, VK_KERNEL_EW_GELU_TANH)
VK_UNARY_OP(vk_gelu_erf, VK_KERNEL_EW_GELU_ERF)
VK_UNARY_OP(vk_relu, VK_KERNEL_EW_RELU)
VK_UNARY_OP(vk_tanh, VK_KERNEL_EW_TANH)
VK_UNARY_OP(vk_exp, VK_KERNEL_EW_EXP)
VK_UNARY_OP(vk_sigmoid, VK_KERNEL_EW_SIGMOID)
VK_BINARY_OP(vk_add, VK_KERNEL_EW_ADD)
VK_BINARY_OP(vk_mul, VK_KERNEL_EW_MUL)
VK_BINARY_OP(vk_swiglu, VK_KERNEL_EW_SWIGLU)

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
