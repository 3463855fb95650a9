/* rope and rope_ext (kernels/vulkan/rope.comp). */
#include <math.h>

#include "../rope_yarn.h"
#include "vk_plugin.h"

struct rope_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, x;
	uint32_t po, n_rot;
	float freq_scale, log2_base;
	uint32_t fo, flags;
	float ext_factor, corr_lo, corr_hi, mscale;
};

/* rope and rope_ext: one shader; YaRN's correction dims and magnitude are
 * formed here in f32 as ggml does (rope_yarn.h). */
gllmk_status vk_rope_ext(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t ff, const gllmk_rope_ext_params *rp)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows(x);
	uint32_t n_rot = rp->n_rot ? (uint32_t)rp->n_rot : r.n;
	struct rope_yarn yarn = rope_yarn_of(rp, (int)n_rot);
	struct rope_push p = {
		.n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows,
		.n_rot = n_rot,
		.freq_scale = rp->freq_scale,
		.log2_base = (float)log2((double)rp->theta_base),
		.ext_factor = yarn.ext_factor,
		.corr_lo = yarn.lo,
		.corr_hi = yarn.hi,
		.mscale = yarn.mscale,
	};

	p.y = vk_view(c, &call, 0, y, true);
	p.x = vk_view(c, &call, 1, x, false);
	p.po = vk_bind(c, &call, 2, pos, false);
	if (ff) {
		p.fo = vk_bind(c, &call, 3, ff, false);
		p.flags |= 1;
	}
	return vk_dispatch(c, rp->mode == GLLMK_ROPE_NEOX ? VK_KERNEL_ROPE_NEOX : VK_KERNEL_ROPE_NORMAL, &call, &p,
			   sizeof(p), vk_groups((uint64_t)r.n * r.rows, 256));
}

gllmk_status vk_rope(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *rp)
{
	const gllmk_rope_ext_params q = rope_ext_of(rp);

	return vk_rope_ext(st, y, x, pos, NULL, &q);
}
