/* top_k (kernels/vulkan/top_k.comp) and moe_route (moe_route.comp): one
 * workgroup per row or token, k selection passes each. */
#include "vk_plugin.h"

struct top_k_push {
	uint32_t n, rows, j0, j1, has_values;
	uint32_t xo, xs0, io, is0, vo, vs0;
};

/* Selection passes of top_k.comp per dispatch: lavapipe ends an invocation
 * after 65535 loop iterations in all its loops together (SPEC/VULKAN.md),
 * and each pass iterates ceil(N / 256) times over the row, 8 times in the
 * workgroup's reduction tree and once in the pass loop. */
#define TOP_K_LOOP_BUDGET 49152u
#define TOP_K_PASS_OVERHEAD 9u


struct moe_push {
	uint32_t e, tokens, k, has_bias;
	uint32_t lo, ls0, io, is0, wo, ws0, bo;
	int32_t gating, n_group, topk_group, norm;
	float scale;
};

/* The byte stride between rows of a 2-D view (0 for one row). */
static uint32_t row_stride(gllmk_t t)
{
	return t->shape[0] > 1 ? (uint32_t)t->stride[0] : 0;
}

gllmk_status vk_top_k(void *st, gllmk_t values, gllmk_t ids, gllmk_t x)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct top_k_push p = {
		.n = (uint32_t)x->shape[1],
		.rows = (uint32_t)x->shape[0],
		.has_values = values != NULL,
		.xs0 = row_stride(x),
		.is0 = row_stride(ids),
	};

	p.io = vk_bind(c, &call, 0, ids, true);
	p.xo = vk_bind(c, &call, 1, x, false);
	if (values) {
		p.vo = vk_bind(c, &call, 2, values, true);
		p.vs0 = row_stride(values);
	}
	uint32_t k = (uint32_t)ids->shape[1], per_pass = (p.n + 255u) / 256u + TOP_K_PASS_OVERHEAD;
	uint32_t passes = TOP_K_LOOP_BUDGET / per_pass ? TOP_K_LOOP_BUDGET / per_pass : 1u;
	gllmk_status s = GLLMK_OK;

	for (p.j0 = 0; p.j0 < k && s == GLLMK_OK; p.j0 = p.j1) {
		p.j1 = k - p.j0 < passes ? k : p.j0 + passes;
		s = vk_dispatch(c, VK_KERNEL_TOP_K, &call, &p, sizeof(p), p.rows);
	}
	return s;
}

gllmk_status vk_moe_route(void *st, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,
			  const gllmk_moe_route_params *mp)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct moe_push p = {
		.e = (uint32_t)logits->shape[1],
		.tokens = (uint32_t)logits->shape[0],
		.k = (uint32_t)ids->shape[1],
		.has_bias = bias != NULL,
		.ls0 = row_stride(logits),
		.is0 = row_stride(ids),
		.ws0 = row_stride(weights),
		.gating = mp->gating,
		.n_group = mp->n_group,
		.topk_group = mp->topk_group,
		.norm = mp->norm,
		.scale = mp->scale,
	};

	p.io = vk_bind(c, &call, 0, ids, true);
	p.lo = vk_bind(c, &call, 1, logits, false);
	p.wo = vk_bind(c, &call, 2, weights, true);
	if (bias)
		p.bo = vk_bind(c, &call, 3, bias, false);
	return vk_dispatch(c, VK_KERNEL_MOE_ROUTE, &call, &p, sizeof(p), p.tokens);
}
