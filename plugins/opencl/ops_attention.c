/* Fused attention, contiguous or paged KV. The block table's pages that
 * kv_len uses are checked on the host first (a blocking read of
 * ceil(kv_len / B) i32, SPEC/OPENCL.md), so a bad block id is
 * GLLMK_E_BOUNDS from the call itself. */
#include <math.h>
#include <stdlib.h>

#include "ocl_plugin.h"

static gllmk_status check_table(struct ocl_state *s, ocl_t table, int64_t pages, int64_t nblk)
{
	int32_t *ids = malloc((size_t)pages * sizeof(int32_t));
	gllmk_status st;

	if (!ids)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_attention: no host memory for the block table");
	st = ocl_read_i32(s, "gllmk_attention", table, pages, ids);
	for (int64_t i = 0; st == GLLMK_OK && i < pages; i++)
		if (ids[i] < 0 || ids[i] >= nblk)
			st = s->host->set_error(GLLMK_E_BOUNDS,
						"gllmk_attention: block_table[%lld] = %d, k and v have %lld blocks",
						(long long)i, ids[i], (long long)nblk);
	free(ids);
	return st;
}

/* Byte strides of a k or v tensor: per block, per token slot, per head. */
static void kv_strides(ocl_t t, int paged, struct ocl_args *args)
{
	ocl_arg_mem(args, ocl_mem(t));
	ocl_arg_long(args, (int64_t)t->offset);
	ocl_arg_long(args, paged ? t->stride[0] : 0);
	ocl_arg_long(args, t->stride[paged ? 1 : 0]);
	ocl_arg_long(args, t->stride[paged ? 2 : 1]);
}

gllmk_status ocl_attention(void *st, ocl_t out, ocl_t q, ocl_t k, ocl_t v, ocl_t mask, ocl_t block_table,
			   const gllmk_attention_params *p)
{
	struct ocl_state *s = st;
	int paged = block_table != NULL;
	int64_t tq = q->shape[0], hq = q->shape[1], d = q->shape[2], dv = out->shape[2];
	int64_t hkv = k->shape[paged ? 2 : 1], page = paged ? k->shape[1] : 1, nblk = paged ? k->shape[0] : 1;
	int64_t kv_len = p->kv_len ? p->kv_len : k->shape[0];
	float scale = p->scale != 0.0f ? p->scale : (float)(1.0 / sqrt((double)d));
	struct ocl_args args = ocl_args(s, k->dtype == GLLMK_F16 ? OCLK_attention_f16 : OCLK_attention_f32);

	if (paged) {
		gllmk_status rc = check_table(s, block_table, (kv_len + page - 1) / page, nblk);

		if (rc != GLLMK_OK)
			return rc;
	}
	ocl_arg_mem(&args, ocl_mem(out));
	ocl_arg_long(&args, (int64_t)out->offset);
	ocl_arg_long(&args, out->stride[0]);
	ocl_arg_long(&args, out->stride[1]);
	ocl_arg_mem(&args, ocl_mem(q));
	ocl_arg_long(&args, (int64_t)q->offset);
	ocl_arg_long(&args, q->stride[0]);
	ocl_arg_long(&args, q->stride[1]);
	kv_strides(k, paged, &args);
	kv_strides(v, paged, &args);
	ocl_arg_mem(&args, ocl_mem(mask ? mask : q)); /* unread when absent */
	ocl_arg_long(&args, mask ? (int64_t)mask->offset : 0);
	ocl_arg_long(&args, mask && mask->ndim > 1 ? mask->stride[0] : 0);
	ocl_arg_int(&args, mask != NULL);
	ocl_arg_mem(&args, ocl_mem(paged ? block_table : q));
	ocl_arg_long(&args, paged ? (int64_t)block_table->offset : 0);
	ocl_arg_int(&args, paged);
	ocl_arg_long(&args, page);
	ocl_arg_long(&args, nblk);
	ocl_arg_long(&args, tq);
	ocl_arg_long(&args, hq);
	ocl_arg_long(&args, hq / hkv);
	ocl_arg_long(&args, d);
	ocl_arg_long(&args, dv);
	ocl_arg_long(&args, kv_len);
	ocl_arg_int(&args, p->causal);
	ocl_arg_float(&args, scale);
	return ocl_launch(&args, "gllmk_attention", (uint64_t)(tq * hq));
}
