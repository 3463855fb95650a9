/* rms_norm and layer_norm (kernels/vulkan/norm.comp): one workgroup per
 * row. */
#include "vk_plugin.h"

struct norm_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, x;
	uint32_t wo, bo, flags;
	float eps;
};

static gllmk_status norm_run(struct vk_ctx *c, enum vk_kernel k, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b,
			     float eps)
{
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows(x);
	struct norm_push p = { .n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows, .eps = eps };

	p.y = vk_view(c, &call, 0, y, true);
	p.x = vk_view(c, &call, 1, x, false);
	if (w) {
		p.wo = vk_bind(c, &call, 2, w, false);
		p.flags |= 1;
	}
	if (b) {
		p.bo = vk_bind(c, &call, 3, b, false);
		p.flags |= 2;
	}
	return vk_dispatch(c, k, &call, &p, sizeof(p), r.rows);
}

gllmk_status vk_rms_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps)
{
	return norm_run(st, vk_pick(st, VK_KERNEL_RMS_NORM, VK_KERNEL_RMS_NORM_SG), y, x, w, NULL, eps);
}

gllmk_status vk_layer_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps)
{
	return norm_run(st, vk_pick(st, VK_KERNEL_LAYER_NORM, VK_KERNEL_LAYER_NORM_SG), y, x, w, b, eps);
}
