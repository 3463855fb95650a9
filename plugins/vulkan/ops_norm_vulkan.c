/* rms_norm, layer_norm (norm.comp), softmax (softmax.comp) and rope
 * (rope.comp): the row-wise operators. */
#include <math.h>

#include "../rope_yarn.h"
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
	struct vk_rows r = vk_rows_of(x);
	struct norm_push p = { .n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows, .eps = eps };

	p.y = vk_view_of(c, &call, 0, y, true);
	p.x = vk_view_of(c, &call, 1, x, false);
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
	struct vk_rows r = vk_rows_of(x);
	struct softmax_push p = {
		.n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows,
		.flags = sp->causal ? 2 : 0,
		.scale = sp->scale,
	};

	p.y = vk_view_of(c, &call, 0, y, true);
	p.x = vk_view_of(c, &call, 1, x, false);
	if (mask) {
		p.mo = vk_bind(c, &call, 2, mask, false);
		p.ms0 = mask->ndim == 2 ? (uint32_t)mask->stride[0] : 0;
		p.flags |= 1;
	}
	return vk_dispatch(c, vk_pick(c, VK_KERNEL_SOFTMAX, VK_KERNEL_SOFTMAX_SG), &call, &p, sizeof(p), r.rows);
}

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
	struct vk_rows r = vk_rows_of(x);
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

	p.y = vk_view_of(c, &call, 0, y, true);
	p.x = vk_view_of(c, &call, 1, x, false);
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
