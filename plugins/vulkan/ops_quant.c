/* dequantize, get_rows (kernels/vulkan/dequant.comp), quantize
 * (quantize.comp) and convert (convert.comp): the dtype changes, as in the
 * CPU framework's ops_quant.c. get_rows' ids are checked on the host before the
 * dispatch (vk_find_bad_index); the shader clamps as well. */
#include "vk_plugin.h"
#include "../gpu_common/gpu_common.h"

struct dequant_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, x;
	uint32_t ido, vocab;
};

gllmk_status vk_dequantize(void *st, gllmk_t y, gllmk_t x)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows(y);
	struct dequant_push p = { .n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows };
	gllmk_status s = vk_bind_codebooks(c, &call);

	if (s)
		return s;
	p.y = vk_view(c, &call, 0, y, true);
	p.x = vk_view(c, &call, 1, x, false);
	return vk_dispatch(c, vk_weight_kernels[x->dtype].dequant, &call, &p, sizeof(p),
			   vk_groups((uint64_t)r.n * r.rows, 256));
}

gllmk_status vk_get_rows(void *st, gllmk_t y, gllmk_t table, gllmk_t ids)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows(y);
	struct dequant_push p = {
		.n = r.n,
		.d1 = r.d1,
		.d2 = r.d2,
		.rows = r.rows,
		.vocab = (uint32_t)table->shape[0],
	};
	int32_t value;
	int64_t bad = vk_find_bad_index(c, ids, (uint64_t)ids->shape[0], table->shape[0], &value);
	gllmk_status s;

	if (bad >= 0)
		return c->host->set_error(GLLMK_E_BOUNDS, "gllmk_get_rows: ids[%lld] = %d, table has %lld rows",
					  (long long)bad, value, (long long)table->shape[0]);
	s = vk_bind_codebooks(c, &call);
	if (s)
		return s;
	p.y = vk_view(c, &call, 0, y, true);
	p.x = vk_view(c, &call, 1, table, false);
	p.ido = vk_bind(c, &call, 2, ids, false);
	return vk_dispatch(c, vk_weight_kernels[table->dtype].get_rows, &call, &p, sizeof(p),
			   vk_groups((uint64_t)r.n * r.rows, 256));
}

struct quantize_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, x;
};

gllmk_status vk_quantize(void *st, gllmk_t y, gllmk_t x)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows(x);
	struct quantize_push p = { .n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows };
	bool q8_0 = y->dtype == GLLMK_Q8_0;
	uint64_t blocks = (uint64_t)(r.n / (q8_0 ? 32 : 256)) * r.rows;

	p.y = vk_view(c, &call, 0, y, true);
	p.x = vk_view(c, &call, 1, x, false);
	return vk_dispatch(c, q8_0 ? VK_KERNEL_QUANTIZE_Q8_0 : VK_KERNEL_QUANTIZE_Q8_K, &call, &p, sizeof(p),
			   (blocks + 63) / 64);
}

/* ------------------------------------------------------------ convert */

struct convert_push {
	uint32_t n, d1, d2, rows;
	struct vk_view y, x;
};

static const enum vk_kernel convert_kernel[3][3] = {
	{ VK_KERNEL_CONVERT_F32_F32, VK_KERNEL_CONVERT_F32_F16, VK_KERNEL_CONVERT_F32_BF16 },
	{ VK_KERNEL_CONVERT_F16_F32, VK_KERNEL_CONVERT_F16_F16, VK_KERNEL_CONVERT_F16_BF16 },
	{ VK_KERNEL_CONVERT_BF16_F32, VK_KERNEL_CONVERT_BF16_F16, VK_KERNEL_CONVERT_BF16_BF16 },
};

gllmk_status vk_convert(void *st, gllmk_t y, gllmk_t x)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	struct vk_rows r = vk_rows(x);
	struct convert_push p = { .n = r.n, .d1 = r.d1, .d2 = r.d2, .rows = r.rows };
	uint64_t per_row = y->dtype == GLLMK_F32 ? r.n : r.n / 2 + 1;

	p.y = vk_view(c, &call, 0, y, true);
	p.x = vk_view(c, &call, 1, x, false);
	return vk_dispatch(c, convert_kernel[gpu_float_slot(x->dtype)][gpu_float_slot(y->dtype)], &call, &p, sizeof(p),
			   vk_groups(per_row * r.rows, 256));
}
