/* argmax (argmax.comp) and sample (sample.comp): reduced on the device, so
 * a decode loop reads back only the token ids. sample's uniforms (host
 * memory) reach the device through vkCmdUpdateBuffer into the context's
 * scratch buffer, in stream order. */
#include "vk_plugin.h"

struct argmax_push {
	uint32_t n, rows, yo, xo, xs0;
};

struct sample_push {
	uint32_t n, rows, yo, xo, xs0, uo;
	int32_t top_k;
	float top_p, inv_temp;
};

static void rows_of_logits(gllmk_t x, uint32_t *n, uint32_t *rows, uint32_t *stride)
{
	*n = (uint32_t)x->shape[x->ndim - 1];
	*rows = x->ndim == 2 ? (uint32_t)x->shape[0] : 1;
	*stride = x->ndim == 2 ? (uint32_t)x->stride[0] : 0;
}

gllmk_status vk_argmax(void *st, gllmk_t ids, gllmk_t x)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct argmax_push p;

	rows_of_logits(x, &p.n, &p.rows, &p.xs0);
	p.yo = vk_bind(c, &call, 0, ids, true);
	p.xo = vk_bind(c, &call, 1, x, false);
	return vk_dispatch(c, VK_KERNEL_ARGMAX, &call, &p, sizeof(p), p.rows);
}

static gllmk_status upload_uniforms(struct vk_ctx *c, const float *u, uint32_t rows)
{
	uint64_t bytes = (uint64_t)rows * 4;
	gllmk_status st = vk_scratch(c, bytes);

	for (uint64_t off = 0; !st && off < bytes; off += VK_UPDATE_MAX) {
		uint64_t n = bytes - off < VK_UPDATE_MAX ? bytes - off : VK_UPDATE_MAX;
		st = vk_record_update(c, c->scratch, off, (const char *)u + off, n);
	}
	return st;
}

gllmk_status vk_sample(void *st, gllmk_t ids, gllmk_t logits, const float *uniform, const gllmk_sample_params *sp)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct sample_push p = { .top_k = sp->top_k, .top_p = sp->top_p };
	gllmk_status s;

	if (sp->temperature <= 0.0f)
		return vk_argmax(st, ids, logits);
	p.inv_temp = 1.0f / sp->temperature;
	rows_of_logits(logits, &p.n, &p.rows, &p.xs0);
	s = upload_uniforms(c, uniform, p.rows);
	if (s)
		return s;
	p.yo = vk_bind(c, &call, 0, ids, true);
	p.xo = vk_bind(c, &call, 1, logits, false);
	vk_bind_buf(&call, 2, c->scratch, false);
	p.uo = 0;
	return vk_dispatch(c, VK_KERNEL_SAMPLE, &call, &p, sizeof(p), p.rows);
}
