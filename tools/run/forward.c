/* gllmk-run: the forward pass of SPEC/RUN.md, written with gllmk operators
 * only. Activations, the f16 KV cache, the logits and the sampled id live in
 * the context's buffers; per step the host writes the positions (and the
 * prompt's ids) and reads back one id. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Activations of one batch, each a region of one buffer. */
enum act_slot {
	A_X, A_H, A_Q, A_K, A_V, A_ATT, A_GATE, A_UP, A_LOGITS, A_IDS, A_POS, A_NEXT,
	A_ROUTER, A_EXPERTS, A_EXPERT_W, /* MoE: router logits [T, E], chosen ids and weights [T, k] */
	A_QKV, /* phi3: the fused q/k/v projection [T, q + k + v] */
	/* paged (n_seq > 0): each token's cache slot, the sequences' query offsets
	 * [S+1] and lengths [S], their block tables [S, P] */
	A_SLOTS, A_CUQ, A_KVLEN, A_BT,
	A_COUNT
};

struct run_state {
	const struct run_model *m;
	gllmk_context *ctx;
	struct run_state_opts o;
	gllmk_buffer *act;
	uint64_t off[A_COUNT];
	gllmk_buffer **kcache, **vcache; /* per layer: kv_type [n_ctx, n_head_kv, head_dim(_v)] */
	int64_t last_rows;               /* logits rows of the last forward */
	int32_t *pos_host;               /* n_batch positions, written per call */
	int32_t *slot_host, *cuq_host, *kvlen_host; /* paged: written per call */
	int64_t pages;                   /* paged: blocks per sequence */
	const gllmk_tensor *rope_factors; /* rope_freqs, Phi-3's long or short factors, or NULL */
};

/* Every gllmk call of the pass goes through here: its status becomes the
 * run's error, naming the call and the layer. */
static int call(struct run_error *e, const char *what, int64_t layer, gllmk_status st)
{
	char where[96];

	if (st == GLLMK_OK)
		return 0;
	if (layer >= 0)
		snprintf(where, sizeof(where), "%s (layer %lld)", what, (long long)layer);
	else
		snprintf(where, sizeof(where), "%s", what);
	return run_gllmk_error(e, where, st);
}

static gllmk_tensor act2(const struct run_state *s, enum act_slot a, int64_t row0, int64_t rows, int64_t cols)
{
	int64_t shape[2] = { rows, cols };

	return gllmk_tensor_make(s->act, s->off[a] + (uint64_t)(row0 * cols) * 4, GLLMK_F32, 2, shape);
}

static gllmk_tensor act3(const struct run_state *s, enum act_slot a, int64_t t, int64_t h, int64_t d)
{
	int64_t shape[3] = { t, h, d };

	return gllmk_tensor_make(s->act, s->off[a], GLLMK_F32, 3, shape);
}

static gllmk_tensor ints(const struct run_state *s, enum act_slot a, int64_t n)
{
	return gllmk_tensor_make(s->act, s->off[a], GLLMK_I32, 1, &n);
}

/* Lays the activations out in one buffer, each region 256-byte aligned. */
static uint64_t layout(struct run_state *s)
{
	const struct run_hparams *hp = &s->m->hp;
	int64_t B = s->o.n_batch, R = s->o.all_logits || s->o.n_seq ? B : 1;
	/* MoE: gate and up hold every slot's expert output, [T, k, n_ff_exp] */
	int64_t ff = hp->n_ff > hp->n_expert_used * hp->n_ff_exp ? hp->n_ff : hp->n_expert_used * hp->n_ff_exp;
	int64_t qkv = s->m->fused ? hp->n_head * hp->head_dim + hp->n_head_kv * (hp->head_dim + hp->head_dim_v) : 0;
	int64_t floats[A_COUNT] = {
		[A_X] = B * hp->n_embd, [A_H] = B * hp->n_embd,
		[A_Q] = B * hp->n_head * hp->head_dim, [A_K] = B * hp->n_head_kv * hp->head_dim,
		[A_V] = B * hp->n_head_kv * hp->head_dim_v, [A_ATT] = B * hp->n_head * hp->head_dim_v,
		[A_GATE] = B * ff, [A_UP] = B * ff, [A_LOGITS] = R * hp->n_vocab,
		[A_IDS] = B, [A_POS] = B, [A_NEXT] = 1,
		[A_ROUTER] = B * hp->n_expert, [A_EXPERTS] = B * hp->n_expert_used, [A_EXPERT_W] = B * hp->n_expert_used,
		[A_QKV] = B * qkv,
		[A_SLOTS] = B, [A_CUQ] = s->o.n_seq + 1, [A_KVLEN] = s->o.n_seq, [A_BT] = s->o.n_seq * s->pages,
	};

	if (s->m->fused) /* phi3: gate and up stacked in A_GATE */
		floats[A_GATE] = B * 2 * hp->n_ff;
	uint64_t at = 0;

	for (int a = 0; a < A_COUNT; a++) {
		s->off[a] = at;
		at += ((uint64_t)floats[a] * 4 + 255) & ~(uint64_t)255;
	}
	return at;
}

/* One layer's K (head_dim) or V (head_dim_v) cache: [n_ctx, n_head_kv, dim],
 * or paged [n_seq · pages, RUN_PAGE_TOKENS, n_head_kv, dim]. */
static gllmk_tensor cache_view(const struct run_state *s, gllmk_buffer *b, int64_t dim)
{
	int64_t shape[3] = { s->o.n_ctx, s->m->hp.n_head_kv, dim };
	int64_t paged[4] = { s->o.n_seq * s->pages, RUN_PAGE_TOKENS, s->m->hp.n_head_kv, dim };

	if (s->o.n_seq)
		return gllmk_tensor_make(b, 0, s->o.kv_type, 4, paged);
	return gllmk_tensor_make(b, 0, s->o.kv_type, 3, shape);
}

/* Sequence q's block j is block j·n_seq + q: the sequences' pages
 * interleave, so the tables are real indirections. */
static int64_t page_of(const struct run_state *s, int64_t q, int64_t j)
{
	return j * s->o.n_seq + q;
}

static int write_block_tables(struct run_state *s, struct run_error *e)
{
	int64_t n = s->o.n_seq * s->pages;
	int32_t *bt = malloc((size_t)n * sizeof(*bt));
	int r;

	if (!bt)
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	for (int64_t q = 0; q < s->o.n_seq; q++)
		for (int64_t j = 0; j < s->pages; j++)
			bt[q * s->pages + j] = (int32_t)page_of(s, q, j);
	r = call(e, "gllmk_buffer_write (block tables)", -1, gllmk_buffer_write(s->act, s->off[A_BT], bt, (uint64_t)n * 4));
	free(bt);
	return r;
}

static int alloc_cache(struct run_state *s, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	uint64_t kb, vb;

	/* block dtypes quantize along the head: whole blocks per head */
	if (gllmk_dtype_row_bytes(s->o.kv_type, hp->head_dim, &kb) != GLLMK_OK ||
	    gllmk_dtype_row_bytes(s->o.kv_type, hp->head_dim_v, &vb) != GLLMK_OK)
		return run_fail(e, RUN_E_UNSUPPORTED, "--kv-type %s: the head sizes %lld/%lld are not whole blocks of it",
				gllmk_dtype_name(s->o.kv_type), (long long)hp->head_dim, (long long)hp->head_dim_v);
	/* paged: every sequence's pages (n_ctx rounded up to whole blocks) */
	int64_t rows = s->o.n_seq ? s->o.n_seq * s->pages * RUN_PAGE_TOKENS : s->o.n_ctx;

	kb *= (uint64_t)(rows * hp->n_head_kv);
	vb *= (uint64_t)(rows * hp->n_head_kv);

	s->kcache = calloc((size_t)hp->n_layer, sizeof(*s->kcache));
	s->vcache = calloc((size_t)hp->n_layer, sizeof(*s->vcache));
	if (!s->kcache || !s->vcache)
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	for (int64_t il = 0; il < hp->n_layer; il++) {
		if (call(e, "gllmk_buffer_alloc (K cache)", il, gllmk_buffer_alloc(s->ctx, kb, &s->kcache[il])) ||
		    call(e, "gllmk_buffer_alloc (V cache)", il, gllmk_buffer_alloc(s->ctx, vb, &s->vcache[il])))
			return e->status;
	}
	return 0;
}

int run_state_new(const struct run_model *m, gllmk_context *ctx, const struct run_state_opts *o,
		  struct run_state **out, struct run_error *e)
{
	struct run_state *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	s->m = m;
	s->ctx = ctx;
	s->o = *o;
	/* Phi-3 LongRoPE as llama.cpp chooses: the long factors when the context
	 * exceeds the original one */
	if (m->has_rope_freqs)
		s->rope_factors = &m->rope_freqs;
	else if (o->n_ctx > m->hp.n_ctx_orig && m->arch == ARCH_PHI3)
		s->rope_factors = m->has_rope_long ? &m->rope_long : NULL;
	else if (m->arch == ARCH_PHI3)
		s->rope_factors = m->has_rope_short ? &m->rope_short : NULL;
	if (o->n_ctx < 1 || o->n_batch < 1 || o->n_ctx > INT32_MAX || o->n_seq < 0 || o->n_seq > 65536)
		return run_fail(e, RUN_E_BAD_INPUT, "context %lld and batch %lld must be at least 1, sequences %lld in 0..65536",
				(long long)o->n_ctx, (long long)o->n_batch, (long long)o->n_seq);
	s->pages = (o->n_ctx + RUN_PAGE_TOKENS - 1) / RUN_PAGE_TOKENS;
	s->pos_host = malloc((size_t)o->n_batch * sizeof(*s->pos_host));
	s->slot_host = malloc((size_t)o->n_batch * sizeof(*s->slot_host));
	s->cuq_host = malloc((size_t)(o->n_seq + 1) * sizeof(*s->cuq_host));
	s->kvlen_host = malloc((size_t)(o->n_seq + 1) * sizeof(*s->kvlen_host));
	if (!s->pos_host || !s->slot_host || !s->cuq_host || !s->kvlen_host)
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	if (call(e, "gllmk_buffer_alloc (activations)", -1, gllmk_buffer_alloc(ctx, layout(s), &s->act)))
		return e->status;
	if (o->n_seq && write_block_tables(s, e))
		return e->status;
	return alloc_cache(s, e);
}

void run_state_free(struct run_state *s)
{
	if (!s)
		return;
	for (int64_t il = 0; s->kcache && il < s->m->hp.n_layer; il++) {
		gllmk_buffer_free(s->kcache[il]);
		gllmk_buffer_free(s->vcache[il]);
	}
	gllmk_buffer_free(s->act);
	free(s->kcache);
	free(s->vcache);
	free(s->pos_host);
	free(s->slot_host);
	free(s->cuq_host);
	free(s->kvlen_host);
	free(s);
}

/* ------------------------------------------------------------ one layer */

/* Phi-3: q, k, v = h·Wqkvᵀ in one matmul, then each copied out of its
 * columns (a strided view) into the regions the rest of the pass reads. */
static int qkv_fused(struct run_state *s, const struct run_layer *l, int64_t il, int64_t T, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	gllmk_context *c = s->ctx;
	const int64_t nq = hp->n_head * hp->head_dim, nk = hp->n_head_kv * hp->head_dim;
	const int64_t nv = hp->n_head_kv * hp->head_dim_v, W = nq + nk + nv;
	gllmk_tensor h = act2(s, A_H, 0, T, hp->n_embd), all = act2(s, A_QKV, 0, T, W);
	const enum act_slot dst[3] = { A_Q, A_K, A_V };
	const int64_t col0[3] = { 0, nq, nq + nk }, cols[3] = { nq, nk, nv };
	const char *what[3] = { "gllmk_convert (q out of qkv)", "gllmk_convert (k out of qkv)",
				"gllmk_convert (v out of qkv)" };

	if (call(e, "gllmk_matmul (attn_qkv)", il, gllmk_matmul(c, &all, &h, &l->wqkv, NULL)))
		return e->status;
	for (int i = 0; i < 3; i++) {
		gllmk_tensor y = act2(s, dst[i], 0, T, cols[i]), x = act2(s, A_QKV, 0, T, cols[i]);

		x.offset += (uint64_t)col0[i] * 4;
		x.stride[0] = W * 4;
		if (call(e, what[i], il, gllmk_convert(c, &y, &x)))
			return e->status;
	}
	return 0;
}

/* q, k, v = h·W (+b); qwen3 normalizes each head of q and k. */
static int qkv(struct run_state *s, const struct run_layer *l, int64_t il, int64_t T, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	gllmk_context *c = s->ctx;
	gllmk_tensor h = act2(s, A_H, 0, T, hp->n_embd);
	gllmk_tensor q = act2(s, A_Q, 0, T, hp->n_head * hp->head_dim);
	gllmk_tensor k = act2(s, A_K, 0, T, hp->n_head_kv * hp->head_dim);
	gllmk_tensor v = act2(s, A_V, 0, T, hp->n_head_kv * hp->head_dim_v);
	const gllmk_tensor *bq = s->m->has_bias ? &l->bq : NULL, *bk = s->m->has_bias ? &l->bk : NULL;
	const gllmk_tensor *bv = s->m->has_bias ? &l->bv : NULL;

	if (s->m->fused)
		return qkv_fused(s, l, il, T, e);
	if (call(e, "gllmk_matmul (q)", il, gllmk_matmul(c, &q, &h, &l->wq, bq)) ||
	    call(e, "gllmk_matmul (k)", il, gllmk_matmul(c, &k, &h, &l->wk, bk)) ||
	    call(e, "gllmk_matmul (v)", il, gllmk_matmul(c, &v, &h, &l->wv, bv)))
		return e->status;
	if (!s->m->has_qk_norm)
		return 0;
	q = act2(s, A_Q, 0, T * hp->n_head, hp->head_dim);
	k = act2(s, A_K, 0, T * hp->n_head_kv, hp->head_dim);
	if (call(e, "gllmk_rms_norm (q per head)", il, gllmk_rms_norm(c, &q, &q, &l->q_norm, hp->eps)) ||
	    call(e, "gllmk_rms_norm (k per head)", il, gllmk_rms_norm(c, &k, &k, &l->k_norm, hp->eps)))
		return e->status;
	return 0;
}

/* k and v into the cache rows pos..pos+T-1, encoded to its dtype. An f16
 * cache takes one gllmk_convert per tensor into the rows: a contiguous
 * append needs no index data (GPU plugins check kv_store's slots on the
 * device since session 11; they read them back, a stall per call, before).
 * Block caches go through gllmk_kv_store, the positions as slots. */
static int store_kv(struct run_state *s, int64_t il, int64_t T, int64_t pos, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	gllmk_context *c = s->ctx;
	gllmk_tensor k = act3(s, A_K, T, hp->n_head_kv, hp->head_dim);
	gllmk_tensor v = act3(s, A_V, T, hp->n_head_kv, hp->head_dim_v);
	gllmk_tensor p = ints(s, A_POS, T);

	if (s->o.n_seq) /* paged: every token's slot, from its sequence's table */
		p = ints(s, A_SLOTS, T);
	else if (s->o.kv_type == GLLMK_F16) {
		int64_t kw = hp->n_head_kv * hp->head_dim, vw = hp->n_head_kv * hp->head_dim_v;
		gllmk_tensor kr = gllmk_tensor_make(s->kcache[il], (uint64_t)(pos * kw) * 2, GLLMK_F16, 3, k.shape);
		gllmk_tensor vr = gllmk_tensor_make(s->vcache[il], (uint64_t)(pos * vw) * 2, GLLMK_F16, 3, v.shape);

		if (call(e, "gllmk_convert (K cache append)", il, gllmk_convert(c, &kr, &k)) ||
		    call(e, "gllmk_convert (V cache append)", il, gllmk_convert(c, &vr, &v)))
			return e->status;
		return 0;
	}
	gllmk_tensor kc = cache_view(s, s->kcache[il], hp->head_dim), vc = cache_view(s, s->vcache[il], hp->head_dim_v);

	if (call(e, "gllmk_kv_store (K)", il, gllmk_kv_store(c, &kc, &k, &p)) ||
	    call(e, "gllmk_kv_store (V)", il, gllmk_kv_store(c, &vc, &v, &p)))
		return e->status;
	return 0;
}

/* Rotates q and k, then stores k and v in the cache. */
static int rope_and_cache(struct run_state *s, int64_t il, int64_t T, int64_t pos, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	gllmk_context *c = s->ctx;
	/* Llama 3.1+ frequency factors and YaRN through rope_ext; without them
	 * its defaults are plain rope. */
	gllmk_rope_ext_params rp = {
		.struct_size = sizeof(rp),
		.mode = hp->rope_mode,
		.n_rot = (int32_t)hp->n_rot,
		.theta_base = hp->rope_base,
		.freq_scale = hp->freq_scale,
		.ext_factor = hp->ext_factor,
		.attn_factor = hp->attn_factor,
		.beta_fast = hp->beta_fast,
		.beta_slow = hp->beta_slow,
		.n_ctx_orig = hp->n_ctx_orig,
	};
	const gllmk_tensor *ff = s->rope_factors;

	if (hp->rope_base_swa > 0.0f && run_layer_is_local(hp, il)) { /* Gemma 3's local layers */
		rp.theta_base = hp->rope_base_swa;
		rp.freq_scale = hp->freq_scale_swa;
	}
	gllmk_tensor q = act3(s, A_Q, T, hp->n_head, hp->head_dim);
	gllmk_tensor k = act3(s, A_K, T, hp->n_head_kv, hp->head_dim);
	gllmk_tensor p = ints(s, A_POS, T);

	if (call(e, "gllmk_rope_ext (q)", il, gllmk_rope_ext(c, &q, &q, &p, ff, &rp)) ||
	    call(e, "gllmk_rope_ext (k)", il, gllmk_rope_ext(c, &k, &k, &p, ff, &rp)))
		return e->status;
	return store_kv(s, il, T, pos, e);
}

/* x += attention(q, K, V)·Woᵀ */
static int attend(struct run_state *s, const struct run_layer *l, int64_t il, int64_t T, int64_t pos,
		  struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	gllmk_context *c = s->ctx;
	gllmk_tensor kc = cache_view(s, s->kcache[il], hp->head_dim), vc = cache_view(s, s->vcache[il], hp->head_dim_v);
	gllmk_tensor q = act3(s, A_Q, T, hp->n_head, hp->head_dim);
	gllmk_tensor att = act3(s, A_ATT, T, hp->n_head, hp->head_dim_v);
	gllmk_tensor att2 = act2(s, A_ATT, 0, T, hp->n_head * hp->head_dim_v);
	gllmk_tensor x = act2(s, A_X, 0, T, hp->n_embd), o = act2(s, A_H, 0, T, hp->n_embd);
	gllmk_attention_params ap = { .causal = 1, .kv_len = (int32_t)(pos + T) };
	/* Gemma: its scale, soft-capped scores (2), and the window on local layers */
	gllmk_attention_ext_params xp = {
		.struct_size = sizeof(xp),
		.scale = hp->attn_scale,
		.causal = 1,
		.kv_len = (int32_t)(pos + T),
		.softcap = hp->attn_softcap,
		.window = run_layer_is_local(hp, il) ? (int32_t)hp->n_swa : 0,
	};
	/* ABI 1.0's attention serves an f16 cache without options; block caches,
	 * Gemma's options and gpt-oss's sinks and window need attention_ext */
	bool ext = s->o.kv_type != GLLMK_F16 || s->m->gemma || s->m->gptoss;
	const gllmk_tensor *sinks = s->m->gptoss ? &l->sinks : NULL, *bo = s->m->gptoss ? &l->bo : NULL;
	const int64_t S = s->o.n_seq, bt_shape[2] = { S, s->pages };
	gllmk_tensor cuq = ints(s, A_CUQ, S + 1), kvl = ints(s, A_KVLEN, S);
	gllmk_tensor bt = gllmk_tensor_make(s->act, s->off[A_BT], GLLMK_I32, 2, bt_shape);
	gllmk_status st = S     ? gllmk_attention_varlen(c, &att, &q, &kc, &vc, NULL, &cuq, &kvl, &bt, sinks, &xp)
			  : ext ? gllmk_attention_ext(c, &att, &q, &kc, &vc, NULL, NULL, sinks, &xp)
				: gllmk_attention(c, &att, &q, &kc, &vc, NULL, NULL, &ap);

	if (call(e, S ? "gllmk_attention_varlen" : ext ? "gllmk_attention_ext" : "gllmk_attention", il, st) ||
	    call(e, "gllmk_matmul (attn_output)", il, gllmk_matmul(c, &o, &att2, &l->wo, bo)))
		return e->status;
	if (s->m->gemma && call(e, "gllmk_rms_norm (post_attention_norm)", il,
				gllmk_rms_norm(c, &o, &o, &l->post_attn_norm, hp->eps)))
		return e->status;
	return call(e, "gllmk_add (attention residual)", il, gllmk_add(c, &x, &x, &o));
}

/* Phi-3: x += swiglu(h·Wgate_upᵀ)·Wdownᵀ, the glu's fused form (gate half
 * first) over one matmul's [T, 2·n_ff]. */
static int ffn_fused(struct run_state *s, const struct run_layer *l, int64_t il, int64_t T, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	gllmk_context *c = s->ctx;
	gllmk_tensor x = act2(s, A_X, 0, T, hp->n_embd), h = act2(s, A_H, 0, T, hp->n_embd);
	gllmk_tensor gu = act2(s, A_GATE, 0, T, 2 * hp->n_ff), y = act2(s, A_UP, 0, T, hp->n_ff);
	const gllmk_glu_params gp = { .struct_size = sizeof(gp), .op = GLLMK_GLU_SILU };

	if (call(e, "gllmk_rms_norm (ffn_norm)", il, gllmk_rms_norm(c, &h, &x, &l->ffn_norm, hp->eps)) ||
	    call(e, "gllmk_matmul (ffn_up, gate and up)", il, gllmk_matmul(c, &gu, &h, &l->w_gate_up, NULL)) ||
	    call(e, "gllmk_glu (fused swiglu)", il, gllmk_glu(c, &y, &gu, NULL, &gp)) ||
	    call(e, "gllmk_matmul (ffn_down)", il, gllmk_matmul(c, &h, &y, &l->w_down, NULL)))
		return e->status;
	return call(e, "gllmk_add (ffn residual)", il, gllmk_add(c, &x, &x, &h));
}

/* x += (act(h·Wgateᵀ) · h·Wupᵀ)·Wdownᵀ, h = rms_norm(x); act silu, or
 * gelu_tanh for Gemma (GEGLU), whose block output is normalized again. */
static int ffn(struct run_state *s, const struct run_layer *l, int64_t il, int64_t T, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	gllmk_context *c = s->ctx;
	gllmk_tensor x = act2(s, A_X, 0, T, hp->n_embd), h = act2(s, A_H, 0, T, hp->n_embd);
	gllmk_tensor g = act2(s, A_GATE, 0, T, hp->n_ff), u = act2(s, A_UP, 0, T, hp->n_ff);
	const gllmk_glu_params gp = { .struct_size = sizeof(gp), .op = GLLMK_GLU_GELU_TANH };

	if (call(e, "gllmk_rms_norm (ffn_norm)", il, gllmk_rms_norm(c, &h, &x, &l->ffn_norm, hp->eps)) ||
	    call(e, "gllmk_matmul (ffn_gate)", il, gllmk_matmul(c, &g, &h, &l->w_gate, NULL)) ||
	    call(e, "gllmk_matmul (ffn_up)", il, gllmk_matmul(c, &u, &h, &l->w_up, NULL)) ||
	    call(e, s->m->gemma ? "gllmk_glu (gelu_tanh)" : "gllmk_swiglu", il,
		 s->m->gemma ? gllmk_glu(c, &g, &g, &u, &gp) : gllmk_swiglu(c, &g, &g, &u)) ||
	    call(e, "gllmk_matmul (ffn_down)", il, gllmk_matmul(c, &h, &g, &l->w_down, NULL)))
		return e->status;
	if (s->m->gemma && call(e, "gllmk_rms_norm (post_ffw_norm)", il,
				gllmk_rms_norm(c, &h, &h, &l->post_ffn_norm, hp->eps)))
		return e->status;
	return call(e, "gllmk_add (ffn residual)", il, gllmk_add(c, &x, &x, &h));
}

/* The mixture of experts (Mixtral, Qwen3-MoE, gpt-oss), on the device from
 * router to sum, no read-back: router logits = h·Wrᵀ; moe_route picks each
 * token's k experts by softmax probability and renormalizes their weights;
 * the experts' gate and up rows for every slot, swiglu, then down with the
 * slots summed by their weights in the same call. gpt-oss: h is
 * post_attention_norm's (bound as ffn_norm), the router and every expert
 * have biases (the down bias inside the weighted sum), the k largest
 * logits are softmaxed after the pick, and the activation is SwiGLU-OAI
 * (alpha 1.702, limit 7). */
static int ffn_moe(struct run_state *s, const struct run_layer *l, int64_t il, int64_t T, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	const bool oai = s->m->gptoss;
	gllmk_context *c = s->ctx;
	const int64_t k = hp->n_expert_used, F = hp->n_ff_exp, ids_shape[2] = { T, k };
	gllmk_tensor x = act2(s, A_X, 0, T, hp->n_embd), h = act2(s, A_H, 0, T, hp->n_embd);
	gllmk_tensor router = act2(s, A_ROUTER, 0, T, hp->n_expert), w = act2(s, A_EXPERT_W, 0, T, k);
	gllmk_tensor ids = gllmk_tensor_make(s->act, s->off[A_EXPERTS], GLLMK_I32, 2, ids_shape);
	gllmk_tensor g = act3(s, A_GATE, T, k, F), u = act3(s, A_UP, T, k, F);
	gllmk_tensor g2 = act2(s, A_GATE, 0, T * k, F), u2 = act2(s, A_UP, 0, T * k, F);
	const gllmk_moe_route_params rp = { .struct_size = sizeof(rp),
					    .gating = oai ? GLLMK_GATING_SOFTMAX_AFTER : GLLMK_GATING_SOFTMAX,
					    .norm = !oai };
	const gllmk_glu_params gp = { .struct_size = sizeof(gp), .op = GLLMK_GLU_SWIGLU_OAI, .alpha = 1.702f, .limit = 7.0f };

	if (call(e, oai ? "gllmk_rms_norm (post_attention_norm)" : "gllmk_rms_norm (ffn_norm)", il,
		 gllmk_rms_norm(c, &h, &x, &l->ffn_norm, hp->eps)) ||
	    call(e, "gllmk_matmul (ffn_gate_inp)", il,
		 gllmk_matmul(c, &router, &h, &l->ffn_gate_inp, oai ? &l->ffn_gate_inp_b : NULL)) ||
	    call(e, "gllmk_moe_route", il, gllmk_moe_route(c, &ids, &w, &router, NULL, &rp)) ||
	    call(e, "gllmk_matmul_id (ffn_gate_exps)", il,
		 gllmk_matmul_id(c, &g, &h, &l->ffn_gate_exps, &ids, oai ? &l->ffn_gate_exps_b : NULL, NULL)) ||
	    call(e, "gllmk_matmul_id (ffn_up_exps)", il,
		 gllmk_matmul_id(c, &u, &h, &l->ffn_up_exps, &ids, oai ? &l->ffn_up_exps_b : NULL, NULL)) ||
	    call(e, oai ? "gllmk_glu (swiglu_oai, experts)" : "gllmk_swiglu (experts)", il,
		 oai ? gllmk_glu(c, &g2, &g2, &u2, &gp) : gllmk_swiglu(c, &g2, &g2, &u2)) ||
	    call(e, "gllmk_matmul_id (ffn_down_exps)", il,
		 gllmk_matmul_id(c, &h, &g, &l->ffn_down_exps, &ids, oai ? &l->ffn_down_exps_b : NULL, &w)) ||
	    call(e, "gllmk_add (ffn residual)", il, gllmk_add(c, &x, &x, &h)))
		return e->status;
	return 0;
}

static int layer(struct run_state *s, int64_t il, int64_t T, int64_t pos, struct run_error *e)
{
	const struct run_layer *l = &s->m->layers[il];
	gllmk_tensor x = act2(s, A_X, 0, T, s->m->hp.n_embd), h = act2(s, A_H, 0, T, s->m->hp.n_embd);

	if (call(e, "gllmk_rms_norm (attn_norm)", il, gllmk_rms_norm(s->ctx, &h, &x, &l->attn_norm, s->m->hp.eps)))
		return e->status;
	return qkv(s, l, il, T, e) || rope_and_cache(s, il, T, pos, e) || attend(s, l, il, T, pos, e) ||
			       (s->m->moe	  ? ffn_moe(s, l, il, T, e)
				: s->m->fused ? ffn_fused(s, l, il, T, e)
					      : ffn(s, l, il, T, e))
		       ? e->status
		       : 0;
}

/* ------------------------------------------------------------ the pass */

/* Token ids into A_IDS: from the host, or the last sampled id (on the device). */
static int feed_ids(struct run_state *s, const int32_t *ids, int64_t T, struct run_error *e)
{
	if (ids)
		return call(e, "gllmk_buffer_write (token ids)", -1,
			    gllmk_buffer_write(s->act, s->off[A_IDS], ids, (uint64_t)T * 4));
	return call(e, "gllmk_buffer_copy (sampled id)", -1,
		    gllmk_buffer_copy(s->act, s->off[A_IDS], s->act, s->off[A_NEXT], 4));
}

static int logits(struct run_state *s, int64_t T, struct run_error *e)
{
	const struct run_hparams *hp = &s->m->hp;
	int64_t R = s->o.all_logits || s->o.n_seq ? T : 1;
	gllmk_tensor x = act2(s, A_X, T - R, R, hp->n_embd), h = act2(s, A_H, 0, R, hp->n_embd);
	gllmk_tensor y = act2(s, A_LOGITS, 0, R, hp->n_vocab);

	s->last_rows = R;
	if (call(e, "gllmk_rms_norm (output_norm)", -1, gllmk_rms_norm(s->ctx, &h, &x, &s->m->output_norm, hp->eps)) ||
	    call(e, "gllmk_matmul (output)", -1, gllmk_matmul(s->ctx, &y, &h, &s->m->output, NULL)))
		return e->status;
	if (hp->final_softcap > 0.0f) /* Gemma 2 (3 optionally): logits = c·tanh(logits / c) */
		return call(e, "gllmk_softcap (final logits)", -1, gllmk_softcap(s->ctx, &y, &y, hp->final_softcap));
	return 0;
}

/* The layers and the logits of T tokens whose ids, positions (and slots)
 * are written. */
static int run_layers(struct run_state *s, int64_t T, int64_t pos, struct run_error *e)
{
	gllmk_tensor x = act2(s, A_X, 0, T, s->m->hp.n_embd), idv = ints(s, A_IDS, T);

	if (call(e, "gllmk_get_rows (token_embd)", -1, gllmk_get_rows(s->ctx, &x, &s->m->tok_embd, &idv)))
		return e->status;
	/* Gemma scales the embeddings by sqrt(n_embd), as llama.cpp does in f32 */
	if (s->m->gemma && call(e, "gllmk_scale (embeddings)", -1,
				gllmk_scale(s->ctx, &x, &x, sqrtf((float)s->m->hp.n_embd))))
		return e->status;
	for (int64_t il = 0; il < s->m->hp.n_layer; il++)
		if (layer(s, il, T, pos, e))
			return e->status;
	return logits(s, T, e);
}

int run_forward_seqs(struct run_state *s, const int32_t *ids, const int64_t *n_tok, const int64_t *pos, int32_t *next,
		     struct run_error *e)
{
	const int64_t S = s->o.n_seq;
	int64_t T = 0;

	if (!S)
		return run_fail(e, RUN_E_BAD_INPUT, "forward: the state has no sequences");
	s->cuq_host[0] = 0;
	for (int64_t q = 0; q < S; q++) {
		if (n_tok[q] < 0 || T + n_tok[q] > s->o.n_batch || pos[q] < 0 || pos[q] + n_tok[q] > s->o.n_ctx)
			return run_fail(e, RUN_E_BAD_INPUT, "forward: sequence %lld: %lld tokens at %lld do not fit batch %lld, context %lld",
					(long long)q, (long long)n_tok[q], (long long)pos[q], (long long)s->o.n_batch,
					(long long)s->o.n_ctx);
		for (int64_t i = 0; i < n_tok[q]; i++, T++) {
			int64_t p = pos[q] + i;

			s->pos_host[T] = (int32_t)p;
			s->slot_host[T] = (int32_t)(page_of(s, q, p / RUN_PAGE_TOKENS) * RUN_PAGE_TOKENS + p % RUN_PAGE_TOKENS);
		}
		s->cuq_host[q + 1] = (int32_t)T;
		s->kvlen_host[q] = (int32_t)(pos[q] + n_tok[q]);
	}
	if (T < 1)
		return run_fail(e, RUN_E_BAD_INPUT, "forward: no tokens");
	gllmk_tensor y = act2(s, A_LOGITS, 0, T, s->m->hp.n_vocab), am = ints(s, A_SLOTS, T);

	if (call(e, "gllmk_buffer_write (token ids)", -1, gllmk_buffer_write(s->act, s->off[A_IDS], ids, (uint64_t)T * 4)) ||
	    call(e, "gllmk_buffer_write (positions)", -1, gllmk_buffer_write(s->act, s->off[A_POS], s->pos_host, (uint64_t)T * 4)) ||
	    call(e, "gllmk_buffer_write (slots)", -1, gllmk_buffer_write(s->act, s->off[A_SLOTS], s->slot_host, (uint64_t)T * 4)) ||
	    call(e, "gllmk_buffer_write (cu_q)", -1, gllmk_buffer_write(s->act, s->off[A_CUQ], s->cuq_host, (uint64_t)(S + 1) * 4)) ||
	    call(e, "gllmk_buffer_write (kv_len)", -1, gllmk_buffer_write(s->act, s->off[A_KVLEN], s->kvlen_host, (uint64_t)S * 4)) ||
	    run_layers(s, T, 0, e))
		return e->status;
	/* the slots are spent: their region takes every row's argmax */
	if (call(e, "gllmk_argmax (every row)", -1, gllmk_argmax(s->ctx, &am, &y)))
		return e->status;
	return call(e, "gllmk_buffer_read (argmax)", -1, gllmk_buffer_read(s->act, s->off[A_SLOTS], next, (uint64_t)T * 4));
}

int run_forward(struct run_state *s, const int32_t *ids, int64_t T, int64_t pos, struct run_error *e)
{
	if (s->o.n_seq)
		return run_fail(e, RUN_E_BAD_INPUT, "forward: a paged state takes run_forward_seqs");
	if (T < 1 || T > s->o.n_batch || (!ids && T != 1))
		return run_fail(e, RUN_E_BAD_INPUT, "forward: %lld tokens (batch %lld)", (long long)T,
				(long long)s->o.n_batch);
	if (pos < 0 || pos + T > s->o.n_ctx)
		return run_fail(e, RUN_E_BAD_INPUT, "forward: positions %lld..%lld do not fit the context of %lld tokens",
				(long long)pos, (long long)(pos + T - 1), (long long)s->o.n_ctx);
	for (int64_t i = 0; i < T; i++)
		s->pos_host[i] = (int32_t)(pos + i);
	if (feed_ids(s, ids, T, e) ||
	    call(e, "gllmk_buffer_write (positions)", -1,
		 gllmk_buffer_write(s->act, s->off[A_POS], s->pos_host, (uint64_t)T * 4)))
		return e->status;
	return run_layers(s, T, pos, e);
}

int run_sample(struct run_state *s, const gllmk_sample_params *p, float uniform, int32_t *id, struct run_error *e)
{
	int64_t V = s->m->hp.n_vocab;
	gllmk_tensor last = act2(s, A_LOGITS, s->last_rows - 1, 1, V), next = ints(s, A_NEXT, 1);
	gllmk_status st = p->temperature > 0.0f ? gllmk_sample(s->ctx, &next, &last, &uniform, p)
						: gllmk_argmax(s->ctx, &next, &last);

	if (call(e, p->temperature > 0.0f ? "gllmk_sample" : "gllmk_argmax", -1, st))
		return e->status;
	return call(e, "gllmk_buffer_read (sampled id)", -1, gllmk_buffer_read(s->act, s->off[A_NEXT], id, 4));
}

int run_read_logits(struct run_state *s, float *dst, int64_t rows, struct run_error *e)
{
	if (rows != s->last_rows)
		return run_fail(e, RUN_E_BAD_INPUT, "logits: %lld rows asked, the last pass kept %lld", (long long)rows,
				(long long)s->last_rows);
	return call(e, "gllmk_buffer_read (logits)", -1,
		    gllmk_buffer_read(s->act, s->off[A_LOGITS], dst, (uint64_t)(rows * s->m->hp.n_vocab) * 4));
}
