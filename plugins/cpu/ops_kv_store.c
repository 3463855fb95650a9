/* kv_store: rows of x f32 [T, Hkv, D] encoded into cache slots (SPEC/OPERATORS.md
 * "kv_store"). Every slot is checked before anything is written, then the
 * (token, head) rows are shared out over the pool; each row goes through the
 * kernel table's encoder for the cache dtype (f32 copy, f16/bf16 rounding,
 * ggml's q8_0/q4_0 reference encoders), so the cache holds exactly what
 * gllmk_convert / gllmk_quantize would write.
 */
#include "cpu_plugin.h"
#include "cpu_view.h"

struct kv_store_job {
	cpu_quant_row_fn encode;
	const gllmk_tensor *cache, *x, *slots;
	int64_t heads, d;
	int64_t page;      /* rows per block (paged); the whole cache otherwise */
	int paged;
};

/* slots is 1-D: its only stride is the innermost, contiguous whatever it says. */
static int32_t slot_at(const gllmk_tensor *slots, int64_t t)
{
	return ((const int32_t *)gllmk_tensor_host(slots))[t];
}

/* Head h of cache slot s: paged slot s is block s / B, row s % B. */
static void *cache_row(const struct kv_store_job *j, int32_t s, int64_t h)
{
	const gllmk_tensor *c = j->cache;
	char *p = gllmk_tensor_host(c);

	if (j->paged)
		return p + (s / j->page) * c->stride[0] + (s % j->page) * c->stride[1] + h * c->stride[2];
	return p + (int64_t)s * c->stride[0] + h * c->stride[1];
}

static void kv_store_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct kv_store_job *j = arg;

	(void)tid;
	for (int64_t r = begin; r < end; r++) {
		int64_t t = r / j->heads, h = r % j->heads;
		int32_t s = slot_at(j->slots, t);

		if (s >= 0)
			j->encode(cpu_row(j->x, r), cache_row(j, s, h), j->d);
	}
}

gllmk_status cpu_kv_store(void *st, gllmk_t cache, gllmk_t x, gllmk_t slots)
{
	struct cpu_state *s = st;
	int paged = cache->ndim == 4;
	int64_t tokens = x->shape[0], cap = cache->shape[0] * (paged ? cache->shape[1] : 1);
	struct kv_store_job j = {
		.encode = s->k->quant_row[cache->dtype],
		.cache = cache,
		.x = x,
		.slots = slots,
		.heads = x->shape[1],
		.d = x->shape[2],
		.page = paged ? cache->shape[1] : cap,
		.paged = paged,
	};

	for (int64_t t = 0; t < tokens; t++) {
		int32_t v = slot_at(slots, t);

		if (v < -1 || v >= cap)
			return s->host->set_error(GLLMK_E_BOUNDS,
						  "gllmk_kv_store: slots[%lld] = %d, cache has %lld slots (-1 skips a row)",
						  (long long)t, v, (long long)cap);
	}
	cpu_pool_run(s->pool, tokens * j.heads, cpu_row_grain(tokens * j.heads, j.d), kv_store_rows, &j);
	return GLLMK_OK;
}
