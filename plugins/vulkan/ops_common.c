/* Tensor views as the shaders take them: rows of a 4-D [d0, d1, d2, n]
 * shape, a byte offset inside the binding and three outer byte strides. */
#include <stdlib.h>

#include "vk_plugin.h"
#include "vulkan/codebooks.h"
#include "../gpu_common/gpu_common.h"


#define VK_WEIGHT_ENTRY(e)                                                                            \
	[e] = { VK_KERNEL_DEQUANT_##e, VK_KERNEL_GET_ROWS_##e, VK_KERNEL_MATMUL_##e, VK_KERNEL_MATVEC_##e, \
		VK_KERNEL_MATVEC_SG_##e, VK_KERNEL_MATVEC_ID_##e, VK_KERNEL_MATVEC_ID_SG_##e, VK_KERNEL_MATMUL_ID_##e },
const struct vk_weight_kernels vk_weight_kernels[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) GPU_IF_##weight(VK_WEIGHT_ENTRY(e))
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

#define VK_KV_ENTRY(e) [e] = { VK_KERNEL_ATTENTION_##e, VK_KERNEL_ATTENTION_SG_##e, VK_KERNEL_KV_STORE_##e },
const struct vk_kv_kernels vk_kv_kernels[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) GPU_IF_##kv(VK_KV_ENTRY(e))
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

struct vk_rows vk_rows(const gllmk_tensor *t)
{
	int64_t d[4] = { 1, 1, 1, 1 };

	for (int i = 0; i < t->ndim; i++)
		d[4 - t->ndim + i] = t->shape[i];
	return (struct vk_rows){
		.n = (uint32_t)d[3],
		.d1 = (uint32_t)d[1],
		.d2 = (uint32_t)d[2],
		.rows = (uint32_t)(d[0] * d[1] * d[2]),
	};
}

struct vk_view vk_view(struct vk_ctx *c, struct vk_call *call, int slot, const gllmk_tensor *t, bool write)
{
	uint32_t s[4] = { 0, 0, 0, 0 };

	for (int i = 0; i < t->ndim - 1; i++)
		s[4 - t->ndim + i] = t->shape[i] == 1 ? 0 : (uint32_t)t->stride[i];
	return (struct vk_view){
		.off = vk_bind(c, call, slot, t, write),
		.s0 = s[0],
		.s1 = s[1],
		.s2 = s[2],
	};
}

uint64_t vk_groups(uint64_t items, uint32_t per_group)
{
	uint64_t g = (items + per_group - 1) / per_group;

	/* the kernels loop grid-stride beyond this */
	return g < 65535 ? g : 65535;
}

/* Index checks on the host, before the op is recorded, where that costs no
 * wait: the indices are in a mapped buffer (lavapipe, integrated GPUs) that
 * no pending operator writes. Then a bad index is GLLMK_E_BOUNDS from the
 * call itself, as SPEC/OPERATORS.md prefers. Otherwise (a discrete GPU's
 * device-local buffer, or ids argmax/sample is still writing) reading them
 * back would drain the stream: a decode step stalled the GPU at every
 * kv_store and get_rows so (33 times a token on a 16-layer model). Those
 * the shaders alone check: they skip or clamp a bad index and flag it, and
 * the next sync returns GLLMK_E_BOUNDS naming it (vk_finish). */
int64_t vk_find_bad_index(struct vk_ctx *c, gllmk_t t, uint64_t count, int64_t limit, int32_t *value)
{
	return vk_find_bad_index_in(c, t, count, 0, limit, value);
}

/* The same for indices allowed in [lo, limit) (kv_store's slots: -1 skips). */
int64_t vk_find_bad_index_in(struct vk_ctx *c, gllmk_t t, uint64_t count, int64_t lo, int64_t limit,
			     int32_t *value)
{
	struct vk_buf *b = t->buf->impl;
	const int32_t *v;

	if (!b->map || vk_buf_pending_write(c, b))
		return -1;
	v = (const int32_t *)(b->map + t->offset);
	if (!b->coherent) {
		const VkMappedMemoryRange r = {
			.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
			.memory = b->mem,
			.size = VK_WHOLE_SIZE,
		};
		c->fn.vkInvalidateMappedMemoryRanges(c->dev, 1, &r);
	}
	for (uint64_t i = 0; i < count; i++) {
		if (v[i] < lo || v[i] >= limit) {
			*value = v[i];
			return (int64_t)i;
		}
	}
	return -1;
}

gllmk_status vk_scratch(struct vk_ctx *c, uint64_t size)
{
	gllmk_status st;

	if (c->scratch && c->scratch->size >= size)
		return GLLMK_OK;
	if (c->scratch) {
		st = vk_drain(c);
		if (st)
			return st;
		vk_buf_destroy(c, c->scratch);
		c->scratch = NULL;
	}
	return vk_buf_create(c, size < 4096 ? 4096 : size, false, &c->scratch);
}

gllmk_status vk_bind_codebooks(struct vk_ctx *c, struct vk_call *call)
{
	static const uint32_t words[] = { VK_CODEBOOK_WORDS };
	_Static_assert(sizeof(words) == 4 * VK_CB_WORDS, "codebooks.h: offsets and contents disagree");

	if (!c->codebooks) {
		gllmk_status st = vk_buf_create(c, sizeof(words), false, &c->codebooks);
		if (!st)
			st = vk_buffer_write(c, c->codebooks, 0, words, sizeof(words));
		if (st) {
			vk_buf_destroy(c, c->codebooks);
			c->codebooks = NULL;
			return st;
		}
	}
	vk_bind_buf(call, VK_CODEBOOK_BINDING, c->codebooks, false);
	return GLLMK_OK;
}
