/* softmax (kernels/vulkan/softmax.comp): one workgroup per row, with an
 * optional mask and causal masking. */
#include "vk_plugin.h"

struct softmax_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, x;
	uint32_t mo, ms0, flags;
	float scale;
};

gllmk_status vk_softmax(void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *sp)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows(x);
	struct softmax_push p = {
		.n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows,
		.flags = sp->causal ? 2 : 0,
		.scale = sp->scale,
	};

	p.y = vk_view(c, &call, 0, y, true);
	p.x = vk_view(c, &call, 1, x, false);
	if (mask) {
		p.mo = vk_bind(c, &call, 2, mask, false);
		p.ms0 = mask->ndim == 2 ? (uint32_t)mask->stride[0] : 0;
		p.flags |= 1;
	}
	return vk_dispatch(c, vk_pick(c, VK_KERNEL_SOFTMAX, VK_KERNEL_SOFTMAX_SG), &call, &p, sizeof(p), r.rows);
}
