/* Fused attention (attention.comp): online softmax, GQA/MQA, contiguous or
 * paged KV, additive mask, causal.
 *
 * Block-table bounds are checked on the host before the dispatch
 * (vk_find_bad_index); the shader clamps a bad id to 0 and flags it too. */
#include <math.h>

#include "vk_plugin.h"

#define VK_ATTN_DV_SLICE 256 /* output dims per workgroup (64 threads x 4) */

struct attention_push {
	uint32_t Tq, Hq, D, Dv;
	uint32_t group, kv_len, flags, B;
	uint32_t nblk, slices;
	float scale;
	uint32_t qo, qs0, qs1;
	uint32_t oo, os0, os1;
	uint32_t ko, ks0, ks1, ks2;
	uint32_t vo, vs0, vs1, vs2;
	uint32_t mo, ms0, bto;
};
_Static_assert(sizeof(struct attention_push) <= VK_PUSH_BYTES, "push constants");

gllmk_status vk_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t bt,
			  const gllmk_attention_params *ap)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	bool paged = bt != NULL;
	uint32_t Hkv = (uint32_t)k->shape[paged ? 2 : 1];
	struct attention_push p = {
		.Tq = (uint32_t)q->shape[0],
		.Hq = (uint32_t)q->shape[1],
		.D = (uint32_t)q->shape[2],
		.Dv = (uint32_t)out->shape[2],
		.flags = (mask ? 1 : 0) | (ap->causal ? 2 : 0) | (paged ? 4 : 0),
		.B = paged ? (uint32_t)k->shape[1] : 0,
		.nblk = paged ? (uint32_t)k->shape[0] : 0,
		.kv_len = ap->kv_len ? (uint32_t)ap->kv_len : (uint32_t)k->shape[0],
		.scale = ap->scale != 0.0f ? ap->scale : (float)(1.0 / sqrt((double)q->shape[2])),
	};
	p.group = p.Hq / Hkv;
	p.slices = (p.Dv + VK_ATTN_DV_SLICE - 1) / VK_ATTN_DV_SLICE;
	if (paged) {
		int64_t bad;
		int32_t value;
		gllmk_status s = vk_find_bad_index(c, bt, (p.kv_len + p.B - 1) / p.B, p.nblk, &bad, &value);
		if (s)
			return s;
		if (bad >= 0)
			return c->host->set_error(GLLMK_E_BOUNDS,
						  "gllmk_attention: block_table[%lld] = %d, k has %u blocks",
						  (long long)bad, value, p.nblk);
	}

	p.oo = vk_bind(c, &call, 0, out, true);
	p.os0 = (uint32_t)out->stride[0];
	p.os1 = (uint32_t)out->stride[1];
	p.qo = vk_bind(c, &call, 1, q, false);
	p.qs0 = (uint32_t)q->stride[0];
	p.qs1 = (uint32_t)q->stride[1];
	p.ko = vk_bind(c, &call, 2, k, false);
	p.ks0 = (uint32_t)k->stride[0];
	p.ks1 = (uint32_t)k->stride[1];
	p.ks2 = paged ? (uint32_t)k->stride[2] : 0;
	p.vo = vk_bind(c, &call, 3, v, false);
	p.vs0 = (uint32_t)v->stride[0];
	p.vs1 = (uint32_t)v->stride[1];
	p.vs2 = paged ? (uint32_t)v->stride[2] : 0;
	if (mask) {
		p.mo = vk_bind(c, &call, 4, mask, false);
		p.ms0 = (uint32_t)mask->stride[0];
	}
	if (paged)
		p.bto = vk_bind(c, &call, 5, bt, false);
	enum vk_kernel kern = k->dtype == GLLMK_F16 ? vk_pick(c, VK_KERNEL_ATTENTION_F16, VK_KERNEL_ATTENTION_SG_F16)
						    : vk_pick(c, VK_KERNEL_ATTENTION_F32, VK_KERNEL_ATTENTION_SG_F32);
	return vk_dispatch(c, kern, &call, &p, sizeof(p), (uint64_t)p.Tq * p.Hq * p.slices);
}
