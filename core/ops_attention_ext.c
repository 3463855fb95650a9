/* gllmk_attention_ext and gllmk_attention_varlen (ABI 1.1): their rules
 * (SPEC/OPERATORS.md, "attention_ext", "attention_varlen"), then one
 * indirect call. The KV layout rules are gllmk_attention's (ops.c), with
 * the wider set of K/V dtypes; what only the index data can tell (cu_q,
 * kv_len, block ids, the mask's width in varlen) is checked by the plugin,
 * which answers GLLMK_E_BOUNDS naming the sequence.
 *
 * The params struct may be shorter than today's (an older caller): its
 * fields past struct_size read as 0, so the plugin is handed a full copy.
 */
#include <stddef.h>

#include "ops_common.h" /* CHECK, FN, check_param, core_copy_params */

/* K/V dtypes of the 1.1 attention ops. */
#define ATTN_KV_DTYPES (CORE_DT_FLOAT | CORE_DT(GLLMK_Q8_0) | CORE_DT(GLLMK_Q4_0))
#define ATTN_KV_WANT "f32, f16, bf16, q8_0 or q4_0"

struct ext_views {
	struct core_view out, q, k, v, mask, bt, sinks, cu_q, kv_len;
};

/* *full = *p with the fields past p->struct_size zero. */
static gllmk_status read_params(const char *fn, const gllmk_attention_ext_params *p,
				gllmk_attention_ext_params *full)
{
	return core_copy_params(fn, full, sizeof(*full), p, sizeof(uint32_t), "gllmk_attention_ext_params");
}

/* The scalars both ops share. */
static gllmk_status check_scalars(const char *fn, const gllmk_attention_ext_params *p)
{
	CHECK(core_check_finite(fn, "p->scale", p->scale));
	CHECK(check_param(fn, p->causal == 0 || p->causal == 1, "p->causal", p->causal, "must be 0 or 1"));
	CHECK(check_param(fn, isfinite(p->softcap) && p->softcap >= 0, "p->softcap", p->softcap,
			  "must be finite and >= 0; 0 = off"));
	CHECK(check_param(fn, isfinite(p->max_bias) && p->max_bias >= 0, "p->max_bias", p->max_bias,
			  "must be finite and >= 0; 0 = no ALiBi"));
	CHECK(check_param(fn, p->window >= 0, "p->window", p->window, "must be >= 0; 0 = no window"));
	return check_param(fn, p->reserved == 0, "p->reserved", p->reserved, "must be 0");
}

/* q [T, Hq, D] and out [T, Hq, Dv] (T = sum Tq in varlen). */
static gllmk_status check_q_out(const char *fn, const struct ext_views *a, int varlen)
{
	CHECK(core_check_ndim(fn, &a->q, 3, varlen ? "[sum Tq, Hq, D]" : "[Tq, Hq, D]"));
	CHECK(core_check_ndim(fn, &a->out, 3, varlen ? "[sum Tq, Hq, Dv]" : "[Tq, Hq, Dv]"));
	CHECK(core_check_dim(fn, &a->out, 0, &a->q, 0, "the query rows must match"));
	return core_check_dim(fn, &a->out, 1, &a->q, 1, "Hq must match");
}

/* k and v: [Tkv, Hkv, D] contiguous or [nblk, B, Hkv, D] paged, one dtype,
 * Hq a multiple of Hkv. gllmk_attention's check_attn_kv (ops.c) uses it too. */
gllmk_status core_check_kv(const char *fn, const struct core_view *q, const struct core_view *out,
			   const struct core_view *k, const struct core_view *v, int paged)
{
	const int nd = paged ? 4 : 3;

	if (unlikely(v->t->dtype != k->t->dtype))
		return core_error(GLLMK_E_DTYPE, "%s: v.dtype = %s but k.dtype = %s (k and v share a dtype)", fn,
				  v->dt->name, k->dt->name);
	CHECK(core_check_ndim(fn, k, nd, paged ? "[nblk, B, Hkv, D] (paged)" : "[Tkv, Hkv, D]"));
	CHECK(core_check_ndim(fn, v, nd, paged ? "[nblk, B, Hkv, Dv] (paged)" : "[Tkv, Hkv, Dv]"));
	for (int d = 0; d < nd - 1; d++)
		CHECK(core_check_dim(fn, v, d, k, d, "k and v hold the same tokens and heads"));
	CHECK(core_check_dim(fn, k, nd - 1, q, 2, "D must match"));
	CHECK(core_check_dim(fn, v, nd - 1, out, 2, "Dv must match"));
	if (unlikely(q->t->shape[1] % k->t->shape[nd - 2]))
		return core_error(GLLMK_E_SHAPE,
				  "%s: q.shape[1] = %" PRId64 " is not a multiple of k.shape[%d] = %" PRId64
				  " (Hq must be a multiple of Hkv)", fn, q->t->shape[1], nd - 2, k->t->shape[nd - 2]);
	return GLLMK_OK;
}

/* sinks: absent or f32 [Hq]. */
static gllmk_status check_sinks(const char *fn, const struct ext_views *a)
{
	if (!a->sinks.t)
		return GLLMK_OK;
	CHECK(core_check_ndim(fn, &a->sinks, 1, "[Hq]"));
	return core_check_dim(fn, &a->sinks, 0, &a->q, 1, "one sink per query head");
}

/* The mask's last dim covers `len` kv tokens (len < 0: only the plugin
 * knows it). */
static gllmk_status check_mask_cols(const char *fn, const struct core_view *m, int64_t len)
{
	const int last = m->t->ndim - 1;

	if (unlikely(m->t->shape[last] < len))
		return core_error(GLLMK_E_SHAPE, "%s: mask.shape[%d] = %" PRId64 " < kv_len = %" PRId64
				  " (one mask column per kv token)", fn, last, m->t->shape[last], len);
	return GLLMK_OK;
}

/* Out must not touch any input. */
static gllmk_status check_disjoint(const char *fn, const struct ext_views *a)
{
	const struct core_view *in[] = { &a->q, &a->k, &a->v, &a->mask, &a->bt, &a->sinks, &a->cu_q, &a->kv_len };

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK(core_check_alias(fn, &a->out, in[i], CORE_DISJOINT));
	return GLLMK_OK;
}

/* The views both ops take: out, q, k, v, mask, sinks. */
static gllmk_status view_common(gllmk_context *ctx, const char *fn, struct ext_views *a, gllmk_t out, gllmk_t q,
				gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t sinks)
{
	CHECK(core_check_ctx(fn, ctx));
	CHECK(core_view(ctx, fn, "out", out, CORE_OUT, CORE_DT_F32, "f32", &a->out));
	CHECK(core_view(ctx, fn, "q", q, CORE_IN, CORE_DT_F32, "f32", &a->q));
	CHECK(core_view(ctx, fn, "k", k, CORE_IN, ATTN_KV_DTYPES, ATTN_KV_WANT, &a->k));
	CHECK(core_view(ctx, fn, "v", v, CORE_IN, ATTN_KV_DTYPES, ATTN_KV_WANT, &a->v));
	CHECK(core_view_opt(ctx, fn, "mask", mask, CORE_IN, CORE_DT_F32, "f32", &a->mask));
	return core_view_opt(ctx, fn, "sinks", sinks, CORE_IN, CORE_DT_F32, "f32", &a->sinks);
}

/* ------------------------------------------------------- attention_ext */

/* kv_len against what the layout holds, and the mask's shape. */
static gllmk_status check_ext_len(const char *fn, const struct ext_views *a, int32_t kv_len)
{
	const int paged = a->bt.t != NULL;
	int64_t cap = a->k.t->shape[0], len;

	if (paged) {
		CHECK(core_check_ndim(fn, &a->bt, 1, "[npages]"));
		if (unlikely(__builtin_mul_overflow(a->bt.t->shape[0], a->k.t->shape[1], &cap)))
			cap = INT64_MAX;
	}
	if (unlikely(kv_len < 0 || kv_len > cap || (paged && kv_len == 0)))
		return core_error(GLLMK_E_INVALID,
				  "%s: p->kv_len = %d (must be %s <= %" PRId64 ", the tokens %s holds)", fn, (int)kv_len,
				  paged ? "> 0 and" : "0 (all) or", cap, paged ? "block_table (npages * B)" : "k (Tkv)");
	len = kv_len ? kv_len : cap;
	if (!a->mask.t)
		return GLLMK_OK;
	if (a->mask.t->ndim == 3) {
		CHECK(core_check_dim(fn, &a->mask, 0, &a->q, 1, "a per-head mask is [Hq, Tq, >= kv_len]"));
		CHECK(core_check_dim(fn, &a->mask, 1, &a->q, 0, "one mask row per query"));
	} else {
		CHECK(core_check_ndim(fn, &a->mask, 2, "[Tq, >= kv_len] or [Hq, Tq, >= kv_len]"));
		CHECK(core_check_dim(fn, &a->mask, 0, &a->q, 0, "one mask row per query"));
	}
	return check_mask_cols(fn, &a->mask, len);
}

static gllmk_status check_attention_ext(gllmk_context *ctx, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
					gllmk_t mask, gllmk_t block_table, gllmk_t sinks,
					const gllmk_attention_ext_params *p, gllmk_attention_ext_params *full)
{
	const char *fn = FN(attention_ext);
	struct ext_views a = { .cu_q.t = NULL, .kv_len.t = NULL };

	CHECK(view_common(ctx, fn, &a, out, q, k, v, mask, sinks));
	CHECK(core_view_opt(ctx, fn, "block_table", block_table, CORE_IN, CORE_DT_I32, "i32", &a.bt));
	CHECK(read_params(fn, p, full));
	CHECK(check_q_out(fn, &a, 0));
	CHECK(core_check_kv(fn, &a.q, &a.out, &a.k, &a.v, a.bt.t != NULL));
	CHECK(check_ext_len(fn, &a, full->kv_len));
	CHECK(check_sinks(fn, &a));
	CHECK(check_scalars(fn, full));
	return check_disjoint(fn, &a);
}

GLLMK_API gllmk_status gllmk_attention_ext(gllmk_context *ctx, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
					   gllmk_t mask, gllmk_t block_table, gllmk_t sinks,
					   const gllmk_attention_ext_params *p)
{
	gllmk_attention_ext_params full;
	gllmk_status st = check_attention_ext(ctx, out, q, k, v, mask, block_table, sinks, p, &full);

	if (unlikely(st != GLLMK_OK))
		return st;
	return CORE_DISPATCH(ctx, FN(attention_ext), attention_ext, out, q, k, v, mask, block_table, sinks, &full);
}

/* ---------------------------------------------------- attention_varlen */

/* cu_q i32 [S+1], kv_len i32 [S], block_tables i32 [S, P]; the mask, if
 * any, [sum Tq, >= 1] (its width against max kv_len is the plugin's). */
static gllmk_status check_varlen_index(const char *fn, const struct ext_views *a)
{
	CHECK(core_check_ndim(fn, &a->kv_len, 1, "[S]"));
	CHECK(core_check_ndim(fn, &a->cu_q, 1, "[S + 1]"));
	CHECK(core_check_dim_is(fn, &a->cu_q, 0, a->kv_len.t->shape[0] + 1, "S + 1: one start per sequence, then the end"));
	CHECK(core_check_ndim(fn, &a->bt, 2, "[S, P]"));
	CHECK(core_check_dim(fn, &a->bt, 0, &a->kv_len, 0, "one block table row per sequence"));
	if (!a->mask.t)
		return GLLMK_OK;
	CHECK(core_check_ndim(fn, &a->mask, 2, "[sum Tq, >= max kv_len]"));
	return core_check_dim(fn, &a->mask, 0, &a->q, 0, "one mask row per query row");
}

static gllmk_status check_attention_varlen(gllmk_context *ctx, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
					   gllmk_t mask, gllmk_t cu_q, gllmk_t kv_len, gllmk_t block_tables,
					   gllmk_t sinks, const gllmk_attention_ext_params *p,
					   gllmk_attention_ext_params *full)
{
	const char *fn = FN(attention_varlen);
	struct ext_views a;

	CHECK(view_common(ctx, fn, &a, out, q, k, v, mask, sinks));
	CHECK(core_view(ctx, fn, "cu_q", cu_q, CORE_IN, CORE_DT_I32, "i32", &a.cu_q));
	CHECK(core_view(ctx, fn, "kv_len", kv_len, CORE_IN, CORE_DT_I32, "i32", &a.kv_len));
	CHECK(core_view(ctx, fn, "block_tables", block_tables, CORE_IN, CORE_DT_I32, "i32", &a.bt));
	CHECK(read_params(fn, p, full));
	full->kv_len = 0; /* ignored: each sequence's is in kv_len */
	CHECK(check_q_out(fn, &a, 1));
	CHECK(core_check_kv(fn, &a.q, &a.out, &a.k, &a.v, 1));
	CHECK(check_varlen_index(fn, &a));
	CHECK(check_sinks(fn, &a));
	CHECK(check_scalars(fn, full));
	return check_disjoint(fn, &a);
}

GLLMK_API gllmk_status gllmk_attention_varlen(gllmk_context *ctx, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
					      gllmk_t mask, gllmk_t cu_q, gllmk_t kv_len, gllmk_t block_tables,
					      gllmk_t sinks, const gllmk_attention_ext_params *p)
{
	gllmk_attention_ext_params full;
	gllmk_status st = check_attention_varlen(ctx, out, q, k, v, mask, cu_q, kv_len, block_tables, sinks, p, &full);

	if (unlikely(st != GLLMK_OK))
		return st;
	return CORE_DISPATCH(ctx, FN(attention_varlen), attention_varlen, out, q, k, v, mask, cu_q, kv_len,
			     block_tables, sinks, &full);
}
