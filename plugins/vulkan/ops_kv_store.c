/* kv_store (kernels/vulkan/kv_store.comp): slots the host can read without
 * waiting are checked first (vk_find_bad_index_in, as get_rows' ids), so a
 * bad slot is GLLMK_E_BOUNDS from the call itself and nothing is recorded;
 * others (a discrete GPU's device-local slots) the shader checks: a bad
 * slot's row is skipped and the next sync returns GLLMK_E_BOUNDS. */
#include "vk_plugin.h"

struct kv_store_push {
	uint32_t units, heads, d, total;
	uint32_t xo, xs0, xs1;
	uint32_t so;
	uint32_t co, cs_blk, cs_row, cs_head, page, cap;
};

/* Units of a row: elements, element pairs (16-bit dtypes) or 32-blocks. */
static uint32_t row_units(gllmk_dtype dt, int64_t d)
{
	if (dt == GLLMK_F16 || dt == GLLMK_BF16)
		return (uint32_t)((d + 1) / 2);
	if (dt == GLLMK_Q8_0 || dt == GLLMK_Q4_0)
		return (uint32_t)(d / 32);
	return (uint32_t)d;
}

gllmk_status vk_kv_store(void *st, gllmk_t cache, gllmk_t x, gllmk_t slots)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	int paged = cache->ndim == 4;
	int64_t tokens = x->shape[0], cap = cache->shape[0] * (paged ? cache->shape[1] : 1);
	struct kv_store_push p = {
		.units = row_units(cache->dtype, x->shape[2]),
		.heads = (uint32_t)x->shape[1],
		.d = (uint32_t)x->shape[2],
		.xs0 = (uint32_t)x->stride[0],
		.xs1 = (uint32_t)x->stride[1],
		.cs_blk = paged ? (uint32_t)cache->stride[0] : 0,
		.cs_row = (uint32_t)cache->stride[paged ? 1 : 0],
		.cs_head = (uint32_t)cache->stride[paged ? 2 : 1],
		.page = (uint32_t)(paged ? cache->shape[1] : cap),
		.cap = (uint32_t)cap,
	};
	int32_t value;
	int64_t bad = vk_find_bad_index_in(c, slots, (uint64_t)tokens, -1, cap, &value);

	if (bad >= 0)
		return c->host->set_error(GLLMK_E_BOUNDS,
					  "gllmk_kv_store: slots[%lld] = %d, cache has %lld slots (-1 skips a row)",
					  (long long)bad, value, (long long)cap);
	p.total = (uint32_t)tokens * p.heads * p.units;
	p.co = vk_bind(c, &call, 0, cache, true);
	p.xo = vk_bind(c, &call, 1, x, false);
	p.so = vk_bind(c, &call, 2, slots, false);
	return vk_dispatch(c, vk_kv_kernels[cache->dtype].kv_store, &call, &p, sizeof(p), vk_groups(p.total, 256));
}
