/* gllmk-run: from a checked GGUF file to a model whose weights are gllmk
 * views. Everything about the file is decided in model_describe (no context
 * needed, so --info and bad files never open a plugin); model_bind only moves
 * bytes. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

int run_fail(struct run_error *e, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->status = status;
	return status;
}

int run_gllmk_error(struct run_error *e, const char *what, gllmk_status st)
{
	return run_fail(e, RUN_E_GLLMK, "%s: %s (%s)", what, gllmk_status_string(st), gllmk_last_error());
}

/* ------------------------------------------------------------ metadata */

struct arch_info {
	const char *name;
	enum run_arch arch;
	int32_t rope_mode;
	bool qkv_bias, qk_norm;
	bool moe; /* always a mixture of experts (llama: when expert_count > 0) */
	bool gemma;
};

static const struct arch_info ARCHES[] = {
	{ "llama", ARCH_LLAMA, GLLMK_ROPE_NORMAL, false, false, false, false },
	{ "qwen2", ARCH_QWEN2, GLLMK_ROPE_NEOX, true, false, false, false },
	{ "qwen3", ARCH_QWEN3, GLLMK_ROPE_NEOX, false, true, false, false },
	{ "qwen3moe", ARCH_QWEN3MOE, GLLMK_ROPE_NEOX, false, true, true, false },
	{ "gemma2", ARCH_GEMMA2, GLLMK_ROPE_NEOX, false, false, false, true },
	{ "gemma3", ARCH_GEMMA3, GLLMK_ROPE_NEOX, false, true, false, true },
	{ "phi3", ARCH_PHI3, GLLMK_ROPE_NEOX, false, false, false, false },
	{ "gpt-oss", ARCH_GPTOSS, GLLMK_ROPE_NEOX, true, false, true, false },
};

/* "<arch>.<suffix>" into buf. */
static const char *akey(char *buf, size_t n, const struct run_model *m, const char *suffix)
{
	snprintf(buf, n, "%s.%s", m->arch_name, suffix);
	return buf;
}

/* A positive integer hyper-parameter; def < 0: required. */
static int hp_int(const struct run_model *m, const char *suffix, int64_t def, int64_t *out, struct run_error *e)
{
	char key[128];
	uint32_t v;
	int r = gguf_get_u32(m->gguf, akey(key, sizeof(key), m, suffix), &v, e->msg, sizeof(e->msg));

	if (r < 0)
		return e->status = RUN_E_BAD_INPUT;
	if (r > 0) {
		if (def < 0)
			return run_fail(e, RUN_E_BAD_INPUT, "metadata: required key '%s' is missing", key);
		*out = def;
		return 0;
	}
	if (v == 0 || v > (1u << 30))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: '%s' = %u is outside 1..2^30", key, v);
	*out = v;
	return 0;
}

static int hp_float(const struct run_model *m, const char *suffix, float def, float *out, struct run_error *e)
{
	char key[128];
	int r = gguf_get_f32(m->gguf, akey(key, sizeof(key), m, suffix), out, e->msg, sizeof(e->msg));

	if (r < 0)
		return e->status = RUN_E_BAD_INPUT;
	if (r > 0)
		*out = def;
	return 0;
}

/* YaRN as llama.cpp reads it: freq_scale 1/factor, the training context
 * (original_context_length, default context_length), and the yarn_* keys
 * with llama.cpp's defaults (ext_factor 1, attn_factor 1, betas 32 and 1). */
static int read_yarn(struct run_model *m, float factor, struct run_error *e)
{
	struct run_hparams *hp = &m->hp;
	int64_t orig;

	if (!(factor > 0.0f))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: rope.scaling.factor %g is not positive", factor);
	hp->freq_scale = 1.0f / factor;
	if (hp_int(m, "rope.scaling.original_context_length", hp->n_ctx_train, &orig, e) ||
	    hp_float(m, "rope.scaling.yarn_ext_factor", 1.0f, &hp->ext_factor, e) ||
	    hp_float(m, "rope.scaling.yarn_attn_factor", 1.0f, &hp->attn_factor, e) ||
	    hp_float(m, "rope.scaling.yarn_beta_fast", 32.0f, &hp->beta_fast, e) ||
	    hp_float(m, "rope.scaling.yarn_beta_slow", 1.0f, &hp->beta_slow, e))
		return e->status;
	if (!isfinite(hp->ext_factor) || !isfinite(hp->attn_factor) || !(hp->beta_fast > 0.0f) ||
	    !(hp->beta_slow > 0.0f) || !isfinite(hp->beta_fast) || !isfinite(hp->beta_slow))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: YaRN ext_factor %g, attn_factor %g, beta_fast %g, beta_slow %g out of range",
				hp->ext_factor, hp->attn_factor, hp->beta_fast, hp->beta_slow);
	hp->n_ctx_orig = (int32_t)orig;
	return 0;
}

/* Linear scaling is a frequency scale; YaRN goes through gllmk_rope_ext. */
static int read_rope_scaling_type(struct run_model *m, struct run_error *e);

/* Then rope.scaling.attn_factor (Phi-3 LongRoPE writes it; default 1)
 * multiplies rope's magnitude, as llama.cpp's context does for every
 * architecture; Phi-3's LongRoPE factors switch at
 * rope.scaling.original_context_length (default context_length). */
static int read_rope_scaling(struct run_model *m, struct run_error *e)
{
	float attn = 1.0f;
	int64_t orig;

	if (read_rope_scaling_type(m, e) || hp_float(m, "rope.scaling.attn_factor", 1.0f, &attn, e))
		return e->status;
	if (!(attn > 0.0f) || !isfinite(attn))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: rope.scaling.attn_factor %g must be positive and finite", attn);
	m->hp.attn_factor *= attn;
	if (m->arch != ARCH_PHI3)
		return 0;
	if (hp_int(m, "rope.scaling.original_context_length", m->hp.n_ctx_train, &orig, e))
		return e->status;
	m->hp.n_ctx_orig = (int32_t)orig;
	return 0;
}

static int read_rope_scaling_type(struct run_model *m, struct run_error *e)
{
	char key[128];
	struct gguf_str type;
	float factor = 1.0f;
	int r = gguf_get_str(m->gguf, akey(key, sizeof(key), m, "rope.scaling.type"), &type, e->msg, sizeof(e->msg));

	m->hp.freq_scale = 1.0f;
	m->hp.attn_factor = 1.0f;
	if (r < 0)
		return e->status = RUN_E_BAD_INPUT;
	if (hp_float(m, "rope.scaling.factor", 1.0f, &factor, e))
		return e->status;
	if (r > 0 || gguf_str_eq(type, "none")) {
		/* Older files give only the factor, meaning linear. */
		if (r > 0 && factor > 0.0f && factor != 1.0f)
			m->hp.freq_scale = 1.0f / factor;
		return 0;
	}
	if (gguf_str_eq(type, "yarn"))
		return read_yarn(m, factor, e);
	if (!gguf_str_eq(type, "linear"))
		return run_fail(e, RUN_E_UNSUPPORTED, "'%s' = '%.*s': gllmk-run runs rope scaling none, linear and yarn",
				key, (int)(type.len > 32 ? 32 : type.len), type.ptr);
	if (!(factor > 0.0f))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: rope.scaling.factor %g is not positive", factor);
	m->hp.freq_scale = 1.0f / factor;
	return 0;
}

static int read_arch(struct run_model *m, struct run_error *e)
{
	struct gguf_str name;
	int r = gguf_get_str(m->gguf, "general.architecture", &name, e->msg, sizeof(e->msg));

	if (r < 0)
		return e->status = RUN_E_BAD_INPUT;
	if (r > 0)
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: required key 'general.architecture' is missing");
	for (size_t i = 0; i < sizeof(ARCHES) / sizeof(ARCHES[0]); i++) {
		if (gguf_str_eq(name, ARCHES[i].name)) {
			m->arch_name = ARCHES[i].name;
			m->arch = ARCHES[i].arch;
			m->hp.rope_mode = ARCHES[i].rope_mode;
			m->has_bias = ARCHES[i].qkv_bias;
			m->has_qk_norm = ARCHES[i].qk_norm;
			m->moe = ARCHES[i].moe;
			m->gemma = ARCHES[i].gemma;
			m->fused = ARCHES[i].arch == ARCH_PHI3;
			m->gptoss = ARCHES[i].arch == ARCH_GPTOSS;
			return 0;
		}
	}
	return run_fail(e, RUN_E_UNSUPPORTED,
			"architecture '%.*s' is not one gllmk-run knows (llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, gpt-oss)",
			(int)(name.len > 64 ? 64 : name.len), name.ptr);
}

/* Mixture of experts: llama (Mixtral) when expert_count > 0, qwen3moe
 * always. An expert_count of 0 (written by some converters) means dense. */
static int read_experts(struct run_model *m, struct run_error *e)
{
	struct run_hparams *hp = &m->hp;
	char key[128];
	uint32_t v = 0;
	int r = gguf_get_u32(m->gguf, akey(key, sizeof(key), m, "expert_count"), &v, e->msg, sizeof(e->msg));

	if (r < 0)
		return e->status = RUN_E_BAD_INPUT;
	if (r == 0 && v > 0)
		m->moe = true;
	if (!m->moe)
		return 0;
	if (v == 0 || v > 4096)
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: '%s' = %u: a mixture of experts needs 1..4096 experts", key, v);
	hp->n_expert = v;
	if (hp_int(m, "expert_used_count", -1, &hp->n_expert_used, e) ||
	    hp_int(m, "expert_feed_forward_length", m->gptoss ? -1 : hp->n_ff, &hp->n_ff_exp, e))
		return e->status;
	if (hp->n_expert_used > hp->n_expert)
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: expert_used_count %lld > expert_count %lld",
				(long long)hp->n_expert_used, (long long)hp->n_expert);
	return 0;
}

/* Gemma 3 as llama.cpp reads it: no score soft-cap; a window only when
 * attention.sliding_window is present and > 0, then 5 local layers of 6
 * (il % 6 < 5), whose rope is base 10000 unscaled (the global layers keep
 * rope.freq_base and the file's scaling); final_logit_softcapping optional
 * (absent or 0: off); the 27B (62 layers) scales scores by
 * 1/sqrt(embedding / heads). */
static int read_gemma3(struct run_model *m, struct run_error *e)
{
	struct run_hparams *hp = &m->hp;
	char key[128];
	uint32_t w = 0;
	int r = gguf_get_u32(m->gguf, akey(key, sizeof(key), m, "attention.sliding_window"), &w, e->msg,
			     sizeof(e->msg));

	if (r < 0 || hp_float(m, "final_logit_softcapping", 0.0f, &hp->final_softcap, e))
		return e->status = RUN_E_BAD_INPUT;
	if (w > (1u << 30))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: '%s' = %u is outside 0..2^30", key, w);
	if (!(hp->final_softcap >= 0.0f) || !isfinite(hp->final_softcap))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: final_logit_softcapping %g must be 0 (off) or positive and finite",
				hp->final_softcap);
	hp->n_swa = w;
	hp->swa_pattern = 6;
	hp->rope_base_swa = 10000.0f;
	hp->freq_scale_swa = 1.0f;
	if (hp->n_layer == 62)
		hp->attn_scale = 1.0f / sqrtf((float)(hp->n_embd / hp->n_head));
	return 0;
}

/* Gemma 2 as llama.cpp reads it: the window (default 4096) on every other
 * layer starting with layer 0, the soft-caps (defaults 50 and 30), and the
 * score scale 1/sqrt(key_length), but 1/sqrt(embedding / heads) for the 27B
 * (the one with 46 layers), as gemma_pytorch's config has it. */
static int read_gemma(struct run_model *m, struct run_error *e)
{
	struct run_hparams *hp = &m->hp;

	hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim);
	if (m->arch == ARCH_GEMMA3)
		return read_gemma3(m, e);
	if (m->arch != ARCH_GEMMA2)
		return 0;
	hp->swa_pattern = 2;
	if (hp_int(m, "attention.sliding_window", 4096, &hp->n_swa, e) ||
	    hp_float(m, "attn_logit_softcapping", 50.0f, &hp->attn_softcap, e) ||
	    hp_float(m, "final_logit_softcapping", 30.0f, &hp->final_softcap, e))
		return e->status;
	if (!(hp->attn_softcap > 0.0f) || !isfinite(hp->attn_softcap) || !(hp->final_softcap > 0.0f) ||
	    !isfinite(hp->final_softcap))
		return run_fail(e, RUN_E_BAD_INPUT,
				"metadata: attn_logit_softcapping %g and final_logit_softcapping %g must be positive and finite",
				hp->attn_softcap, hp->final_softcap);
	if (hp->n_layer == 46)
		hp->attn_scale = 1.0f / sqrtf((float)(hp->n_embd / hp->n_head));
	return 0;
}

/* gpt-oss as llama.cpp reads it: the window (attention.sliding_window,
 * required) on every other layer starting with layer 0, the scores' scale
 * 1/sqrt(head size), which is also the rotated size. */
static int read_gptoss(struct run_model *m, struct run_error *e)
{
	struct run_hparams *hp = &m->hp;

	if (!m->gptoss)
		return 0;
	if (hp_int(m, "attention.sliding_window", -1, &hp->n_swa, e))
		return e->status;
	hp->swa_pattern = 2;
	if (hp->n_rot != hp->head_dim || hp->head_dim_v != hp->head_dim)
		return run_fail(e, RUN_E_UNSUPPORTED,
				"gpt-oss: rope.dimension_count %lld, key_length %lld and value_length %lld must be equal",
				(long long)hp->n_rot, (long long)hp->head_dim, (long long)hp->head_dim_v);
	return 0;
}

static int read_hparams(struct run_model *m, struct run_error *e)
{
	struct run_hparams *hp = &m->hp;

	if (read_arch(m, e) || hp_int(m, "block_count", -1, &hp->n_layer, e) ||
	    hp_int(m, "embedding_length", -1, &hp->n_embd, e) ||
	    hp_int(m, "feed_forward_length", m->gptoss ? 0 : -1, &hp->n_ff, e) ||
	    hp_int(m, "attention.head_count", -1, &hp->n_head, e) ||
	    hp_int(m, "attention.head_count_kv", hp->n_head, &hp->n_head_kv, e))
		return e->status;
	/* Without key_length the head size is embedding / heads; the tensor
	 * shapes then check that it divides. */
	if (hp_int(m, "attention.key_length", hp->n_embd / hp->n_head ? hp->n_embd / hp->n_head : 1, &hp->head_dim, e) ||
	    hp_int(m, "attention.value_length", hp->head_dim, &hp->head_dim_v, e) ||
	    hp_int(m, "rope.dimension_count", hp->head_dim, &hp->n_rot, e) ||
	    hp_int(m, "context_length", 2048, &hp->n_ctx_train, e) ||
	    hp_float(m, "attention.layer_norm_rms_epsilon", 1e-5f, &hp->eps, e) ||
	    hp_float(m, "rope.freq_base", 10000.0f, &hp->rope_base, e) || read_rope_scaling(m, e))
		return e->status;
	if (read_experts(m, e) || read_gemma(m, e) || read_gptoss(m, e))
		return e->status;
	if (hp->n_head % hp->n_head_kv)
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: head_count %lld is not a multiple of head_count_kv %lld",
				(long long)hp->n_head, (long long)hp->n_head_kv);
	if (hp->n_rot % 2 || hp->n_rot > hp->head_dim)
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: rope.dimension_count %lld must be even and <= the head size %lld",
				(long long)hp->n_rot, (long long)hp->head_dim);
	if (!(hp->eps >= 0.0f && hp->eps < 1.0f) || !(hp->rope_base > 0.0f))
		return run_fail(e, RUN_E_BAD_INPUT, "metadata: epsilon %g or rope.freq_base %g out of range",
				hp->eps, hp->rope_base);
	return 0;
}

/* ------------------------------------------------------------ tensors */

enum tensor_use { USE_MATRIX, USE_VECTOR };

static int add_binding(struct run_model *m, gllmk_tensor *view, const struct gguf_tensor *t, bool to_f32)
{
	struct run_binding *b = realloc(m->binds, (m->n_binds + 1) * sizeof(*b));

	if (!b)
		return -1;
	m->binds = b;
	b[m->n_binds++] = (struct run_binding){ .view = view, .t = t, .to_f32 = to_f32 };
	return 0;
}

static int check_type(const struct gguf_tensor *t, enum tensor_use use, struct run_error *e)
{
	const char *name = gllmk_dtype_name((gllmk_dtype)t->type);
	const char *ggml = gguf_ggml_type_name(t->type);
	int n = (int)(t->name.len > 96 ? 96 : t->name.len);

	if (!name || t->type == GLLMK_I32)
		return run_fail(e, RUN_E_UNSUPPORTED, "tensor '%.*s': type %s (%u) is not a gllmk weight dtype", n,
				t->name.ptr, ggml ? ggml : "unknown", t->type);
	if (use == USE_VECTOR && t->type != GLLMK_F32 && t->type != GLLMK_F16 && t->type != GLLMK_BF16)
		return run_fail(e, RUN_E_UNSUPPORTED, "tensor '%.*s': a norm or bias in %s; gllmk-run takes f32, f16 or bf16",
				n, t->name.ptr, name);
	return 0;
}

static int check_shape(const struct gguf_tensor *t, int64_t planes, int64_t rows, int64_t cols, struct run_error *e)
{
	/* ggml order: ne[0] is the row length. A vector is rows == 0; a matrix
	 * planes == 0; experts are `planes` matrices. */
	int64_t want[GGUF_MAX_DIMS] = { cols, rows ? rows : 1, planes ? planes : 1, 1 };
	int64_t got[GGUF_MAX_DIMS];

	for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++)
		got[d] = d < t->n_dims ? t->ne[d] : 1;
	if (!memcmp(want, got, sizeof(want)))
		return 0;
	return run_fail(e, RUN_E_BAD_INPUT,
			"tensor '%.*s': shape [%lld, %lld, %lld, %lld] (ggml order) does not fit the architecture, which needs [%lld, %lld, %lld]",
			(int)(t->name.len > 96 ? 96 : t->name.len), t->name.ptr, (long long)got[0], (long long)got[1],
			(long long)got[2], (long long)got[3], (long long)cols, (long long)(rows ? rows : 1),
			(long long)(planes ? planes : 1));
}

/* Finds, checks and registers one tensor. rows == 0: a vector of cols;
 * planes > 0: that many experts' matrices, of which a token reads
 * n_expert_used (what the per-token figures count). */
static int bind_tensor3(struct run_model *m, gllmk_tensor *view, const char *name, int64_t planes, int64_t rows,
			int64_t cols, bool optional, struct run_error *e)
{
	const struct gguf_tensor *t = gguf_find_tensor(m->gguf, name);
	enum tensor_use use = rows ? USE_MATRIX : USE_VECTOR;

	memset(view, 0, sizeof(*view));
	if (!t)
		return optional ? 0 : run_fail(e, RUN_E_BAD_INPUT, "tensor '%s' is missing (architecture %s)", name,
					       m->arch_name);
	if (check_type(t, use, e) || check_shape(t, planes, rows, cols, e))
		return e->status;
	if (planes) {
		m->weight_bytes_per_token += t->nbytes / (uint64_t)planes * (uint64_t)m->hp.n_expert_used;
		m->matmul_flops_per_token += 2.0 * (double)rows * (double)cols * (double)m->hp.n_expert_used;
	} else if (use == USE_MATRIX) {
		m->weight_bytes_per_token += t->nbytes;
		m->matmul_flops_per_token += 2.0 * (double)rows * (double)cols;
	} else {
		m->weight_bytes_per_token += t->nbytes;
	}
	if (add_binding(m, view, t, use == USE_VECTOR && t->type != GLLMK_F32))
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	return 0;
}

static int bind_tensor(struct run_model *m, gllmk_tensor *view, const char *name, int64_t rows, int64_t cols,
		       bool optional, struct run_error *e)
{
	return bind_tensor3(m, view, name, 0, rows, cols, optional, e);
}

/* gpt-oss: an expert stack's biases, f32 [E, n] (what gllmk_matmul_id
 * takes); a token reads k of the E rows. */
static int bind_expert_bias(struct run_model *m, gllmk_tensor *view, const char *name, int64_t n,
			    struct run_error *e)
{
	const struct gguf_tensor *t = gguf_find_tensor(m->gguf, name);

	memset(view, 0, sizeof(*view));
	if (!t)
		return run_fail(e, RUN_E_BAD_INPUT, "tensor '%s' is missing (architecture %s)", name, m->arch_name);
	if (check_shape(t, 0, m->hp.n_expert, n, e))
		return e->status;
	if (t->type != GLLMK_F32)
		return run_fail(e, RUN_E_UNSUPPORTED, "tensor '%s': expert biases in %s; gllmk-run takes f32", name,
				gguf_ggml_type_name(t->type) ? gguf_ggml_type_name(t->type) : "an unknown type");
	m->weight_bytes_per_token += t->nbytes / (uint64_t)m->hp.n_expert * (uint64_t)m->hp.n_expert_used;
	if (add_binding(m, view, t, false))
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	return 0;
}

/* The FFN: three matrices, or a router and three expert stacks. */
static int bind_ffn(struct run_model *m, int64_t il, struct run_error *e)
{
	const struct run_hparams *hp = &m->hp;
	struct run_layer *l = &m->layers[il];
	char n[7][64];
	const char *parts[7] = { "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight", "ffn_gate_inp.weight",
				 "ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight" };

	for (int i = 0; i < 7; i++)
		snprintf(n[i], sizeof(n[i]), "blk.%lld.%s", (long long)il, parts[i]);
	if (!m->moe)
		return bind_tensor(m, &l->w_gate, n[0], hp->n_ff, hp->n_embd, false, e) ||
			       bind_tensor(m, &l->w_up, n[1], hp->n_ff, hp->n_embd, false, e) ||
			       bind_tensor(m, &l->w_down, n[2], hp->n_embd, hp->n_ff, false, e)
		       ? e->status
		       : 0;
	if (bind_tensor(m, &l->ffn_gate_inp, n[3], hp->n_expert, hp->n_embd, false, e) ||
	    bind_tensor3(m, &l->ffn_gate_exps, n[4], hp->n_expert, hp->n_ff_exp, hp->n_embd, false, e) ||
	    bind_tensor3(m, &l->ffn_up_exps, n[5], hp->n_expert, hp->n_ff_exp, hp->n_embd, false, e) ||
	    bind_tensor3(m, &l->ffn_down_exps, n[6], hp->n_expert, hp->n_embd, hp->n_ff_exp, false, e))
		return e->status;
	if (!m->gptoss)
		return 0;
	for (int i = 3; i < 7; i++) /* the same names' biases */
		snprintf(n[i], sizeof(n[i]), "blk.%lld.%.*s.bias", (long long)il, (int)(strlen(parts[i]) - 7), parts[i]);
	return bind_tensor(m, &l->ffn_gate_inp_b, n[3], 0, hp->n_expert, false, e) ||
		       bind_expert_bias(m, &l->ffn_gate_exps_b, n[4], hp->n_ff_exp, e) ||
		       bind_expert_bias(m, &l->ffn_up_exps_b, n[5], hp->n_ff_exp, e) ||
		       bind_expert_bias(m, &l->ffn_down_exps_b, n[6], hp->n_embd, e)
	       ? e->status
	       : 0;
}

/* Phi-3: one q/k/v matrix and one gate/up matrix (llama.cpp's converter
 * always writes them fused). */
static int bind_fused_layer(struct run_model *m, int64_t il, struct run_error *e)
{
	const struct run_hparams *hp = &m->hp;
	struct run_layer *l = &m->layers[il];
	int64_t qkv = hp->n_head * hp->head_dim + hp->n_head_kv * (hp->head_dim + hp->head_dim_v);
	char n[6][64];
	const char *parts[6] = { "attn_norm.weight", "attn_qkv.weight", "attn_output.weight",
				 "ffn_norm.weight",  "ffn_up.weight",   "ffn_down.weight" };

	for (int i = 0; i < 6; i++)
		snprintf(n[i], sizeof(n[i]), "blk.%lld.%s", (long long)il, parts[i]);
	return bind_tensor(m, &l->attn_norm, n[0], 0, hp->n_embd, false, e) ||
		       bind_tensor(m, &l->wqkv, n[1], qkv, hp->n_embd, false, e) ||
		       bind_tensor(m, &l->wo, n[2], hp->n_embd, hp->n_head * hp->head_dim_v, false, e) ||
		       bind_tensor(m, &l->ffn_norm, n[3], 0, hp->n_embd, false, e) ||
		       bind_tensor(m, &l->w_gate_up, n[4], 2 * hp->n_ff, hp->n_embd, false, e) ||
		       bind_tensor(m, &l->w_down, n[5], hp->n_embd, hp->n_ff, false, e)
	       ? e->status
	       : 0;
}

static int bind_layer(struct run_model *m, int64_t il, struct run_error *e)
{
	const struct run_hparams *hp = &m->hp;
	struct run_layer *l = &m->layers[il];
	int64_t q = hp->n_head * hp->head_dim, kv = hp->n_head_kv * hp->head_dim;
	int64_t vv = hp->n_head_kv * hp->head_dim_v, o = hp->n_head * hp->head_dim_v;
	char n[13][64];
	const char *parts[13] = { "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
				  "attn_output.weight", "ffn_norm.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias",
				  "attn_q_norm.weight", "attn_k_norm.weight", "post_attention_norm.weight",
				  "post_ffw_norm.weight" };

	for (int i = 0; i < 13; i++)
		snprintf(n[i], sizeof(n[i]), "blk.%lld.%s", (long long)il, parts[i]);
	if (m->fused)
		return bind_fused_layer(m, il, e);
	if (bind_tensor(m, &l->attn_norm, n[0], 0, hp->n_embd, false, e) ||
	    bind_tensor(m, &l->wq, n[1], q, hp->n_embd, false, e) ||
	    bind_tensor(m, &l->wk, n[2], kv, hp->n_embd, false, e) ||
	    bind_tensor(m, &l->wv, n[3], vv, hp->n_embd, false, e) ||
	    bind_tensor(m, &l->wo, n[4], hp->n_embd, o, false, e) ||
	    bind_tensor(m, &l->ffn_norm, n[m->gptoss ? 11 : 5], 0, hp->n_embd, false, e) || bind_ffn(m, il, e))
		return e->status;
	if (m->gptoss) { /* its FFN's norm is post_attention_norm (bound above) */
		char bo[64], sinks[64];

		snprintf(bo, sizeof(bo), "blk.%lld.attn_output.bias", (long long)il);
		snprintf(sinks, sizeof(sinks), "blk.%lld.attn_sinks.weight", (long long)il);
		if (bind_tensor(m, &l->bo, bo, 0, hp->n_embd, false, e) ||
		    bind_tensor(m, &l->sinks, sinks, 0, hp->n_head, false, e))
			return e->status;
	}
	if (m->has_bias && (bind_tensor(m, &l->bq, n[6], 0, q, false, e) || bind_tensor(m, &l->bk, n[7], 0, kv, false, e) ||
			    bind_tensor(m, &l->bv, n[8], 0, vv, false, e)))
		return e->status;
	if (m->has_qk_norm && (bind_tensor(m, &l->q_norm, n[9], 0, hp->head_dim, false, e) ||
			       bind_tensor(m, &l->k_norm, n[10], 0, hp->head_dim, false, e)))
		return e->status;
	if (m->gemma && (bind_tensor(m, &l->post_attn_norm, n[11], 0, hp->n_embd, false, e) ||
			 bind_tensor(m, &l->post_ffn_norm, n[12], 0, hp->n_embd, false, e)))
		return e->status;
	return 0;
}

/* Tied embeddings: the output matrix is token_embd's view (bound later). */
static int bind_output(struct run_model *m, struct run_error *e)
{
	const struct run_hparams *hp = &m->hp;
	const struct gguf_tensor *emb;

	if (bind_tensor(m, &m->output_norm, "output_norm.weight", 0, hp->n_embd, false, e) ||
	    bind_tensor(m, &m->output, "output.weight", hp->n_vocab, hp->n_embd, true, e) ||
	    bind_tensor(m, &m->rope_freqs, "rope_freqs.weight", 0, hp->n_rot / 2, true, e))
		return e->status;
	m->has_rope_freqs = gguf_find_tensor(m->gguf, "rope_freqs.weight") != NULL;
	if (m->arch == ARCH_PHI3 &&
	    (bind_tensor(m, &m->rope_long, "rope_factors_long.weight", 0, hp->n_rot / 2, true, e) ||
	     bind_tensor(m, &m->rope_short, "rope_factors_short.weight", 0, hp->n_rot / 2, true, e)))
		return e->status;
	m->has_rope_long = m->arch == ARCH_PHI3 && gguf_find_tensor(m->gguf, "rope_factors_long.weight");
	m->has_rope_short = m->arch == ARCH_PHI3 && gguf_find_tensor(m->gguf, "rope_factors_short.weight");
	if (gguf_find_tensor(m->gguf, "output.weight"))
		return 0;
	emb = gguf_find_tensor(m->gguf, "token_embd.weight");
	m->weight_bytes_per_token += emb->nbytes;
	m->matmul_flops_per_token += 2.0 * (double)hp->n_vocab * (double)hp->n_embd;
	m->tied = true;
	return 0;
}

static int bind_all(struct run_model *m, struct run_error *e)
{
	const struct gguf_tensor *emb = gguf_find_tensor(m->gguf, "token_embd.weight");

	if (!emb)
		return run_fail(e, RUN_E_BAD_INPUT, "tensor 'token_embd.weight' is missing (architecture %s)", m->arch_name);
	if (emb->n_dims != 2 || emb->ne[1] < 1 || emb->ne[1] > INT32_MAX)
		return run_fail(e, RUN_E_BAD_INPUT, "tensor 'token_embd.weight': %u dims, %lld rows: not a [vocab, embedding] matrix",
				emb->n_dims, (long long)emb->ne[1]);
	m->hp.n_vocab = emb->ne[1];
	if (bind_tensor(m, &m->tok_embd, "token_embd.weight", m->hp.n_vocab, m->hp.n_embd, false, e))
		return e->status;
	/* A decode step reads one embedding row, not the table. */
	m->weight_bytes_per_token -= emb->nbytes - emb->nbytes / (uint64_t)m->hp.n_vocab;
	m->matmul_flops_per_token -= 2.0 * (double)m->hp.n_vocab * (double)m->hp.n_embd;
	m->layers = calloc((size_t)m->hp.n_layer, sizeof(*m->layers));
	if (!m->layers)
		return run_fail(e, RUN_E_GLLMK, "out of memory for %lld layers", (long long)m->hp.n_layer);
	for (int64_t il = 0; il < m->hp.n_layer; il++)
		if (bind_layer(m, il, e))
			return e->status;
	return bind_output(m, e);
}

int model_describe(struct gguf_file *f, struct run_model *m, struct run_error *e)
{
	memset(m, 0, sizeof(*m));
	m->gguf = f;
	if (read_hparams(m, e) || bind_all(m, e))
		return e->status;
	return 0;
}

/* ------------------------------------------------------------ binding */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int keep_buffer(struct run_model *m, gllmk_buffer *b)
{
	gllmk_buffer **n = realloc(m->bufs, (m->n_bufs + 1) * sizeof(*n));

	if (!n)
		return -1;
	m->bufs = n;
	n[m->n_bufs++] = b;
	return 0;
}

/* The view a binding's tensor has in buf at offset, in its own dtype. */
static gllmk_tensor raw_view(const struct gguf_tensor *t, gllmk_buffer *buf, uint64_t offset)
{
	int64_t shape[3] = { t->ne[2], t->ne[1], t->ne[0] };

	if (t->n_dims == 3) /* experts */
		return gllmk_tensor_make(buf, offset, (gllmk_dtype)t->type, 3, shape);
	if (t->n_dims == 1)
		return gllmk_tensor_make(buf, offset, (gllmk_dtype)t->type, 1, &shape[2]);
	return gllmk_tensor_make(buf, offset, (gllmk_dtype)t->type, 2, &shape[1]);
}

/* A device copy of one tensor (GPU plugins, or no wrap). */
static int upload(struct run_model *m, gllmk_context *ctx, const struct gguf_tensor *t, gllmk_tensor *out,
		  struct run_error *e)
{
	gllmk_buffer *b;
	gllmk_status st = gllmk_buffer_alloc(ctx, t->nbytes, &b);

	if (st)
		return run_gllmk_error(e, "gllmk_buffer_alloc (weights; --mmap computes on the file without a copy)", st);
	if (keep_buffer(m, b)) {
		gllmk_buffer_free(b);
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	}
	st = gllmk_buffer_write(b, 0, t->data, t->nbytes);
	if (st)
		return run_gllmk_error(e, "gllmk_buffer_write (weights)", st);
	*out = raw_view(t, b, 0);
	return 0;
}

/* The plugin's prepared copy of a matrix (or experts) in view, where it
 * has a layout for it (gllmk_weights_prepare; CPU plugins: q4_0, q4_K,
 * q5_K, iq4_xs, q2_K and q3_K, SPEC/CPU.md): 1 prepared (*view is the copy), 0 declined, else
 * an error. */
static int prepare(struct run_model *m, gllmk_context *ctx, gllmk_tensor *view, struct run_error *e)
{
	gllmk_buffer *p;
	gllmk_status st = gllmk_weights_prepare(ctx, view, &p);

	if (st == GLLMK_E_UNSUPPORTED)
		return 0;
	if (st)
		return run_gllmk_error(e, "gllmk_weights_prepare", st);
	if (keep_buffer(m, p)) {
		gllmk_buffer_free(p);
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	}
	*view = gllmk_tensor_make(p, 0, (gllmk_dtype)view->dtype, view->ndim, view->shape);
	m->n_prepared++;
	return 1;
}

/* A matrix bound prepared when the plugin has a layout for it, else
 * uploaded. The copy is made from the file's bytes, wrapped for the call
 * (the CPU plugins wrap host memory), so no upload is made only to be
 * freed. A plugin that cannot wrap them gets an upload: device plugins
 * have no prepared layouts today. */
static int bind_matrix(struct run_model *m, gllmk_context *ctx, const struct gguf_tensor *t, gllmk_tensor *out,
		       struct run_error *e)
{
	gllmk_buffer *file;
	gllmk_tensor v;
	gllmk_status st = gllmk_buffer_wrap(ctx, (void *)t->data, t->nbytes, &file);
	int r;

	if (st == GLLMK_E_UNSUPPORTED || st == GLLMK_E_ALIGN)
		return upload(m, ctx, t, out, e);
	if (st)
		return run_gllmk_error(e, "gllmk_buffer_wrap (a weight to prepare)", st);
	v = raw_view(t, file, 0);
	r = prepare(m, ctx, &v, e);
	gllmk_buffer_free(file);
	if (r < 0)
		return e->status;
	if (r == 1) {
		*out = v;
		return 0;
	}
	return upload(m, ctx, t, out, e);
}

/* Norms and biases in f16/bf16 become f32 on the device (gllmk_convert). */
static int to_f32(struct run_model *m, gllmk_context *ctx, gllmk_tensor *v, struct run_error *e)
{
	gllmk_buffer *b;
	gllmk_tensor y;
	gllmk_status st = gllmk_buffer_alloc(ctx, (uint64_t)v->shape[0] * 4, &b);

	if (st)
		return run_gllmk_error(e, "gllmk_buffer_alloc (f32 norm)", st);
	if (keep_buffer(m, b)) {
		gllmk_buffer_free(b);
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	}
	y = gllmk_tensor_make(b, 0, GLLMK_F32, 1, v->shape);
	st = gllmk_convert(ctx, &y, v);
	if (st)
		return run_gllmk_error(e, "gllmk_convert (norm to f32)", st);
	*v = y;
	return 0;
}

static void progress(const struct run_model *m, double t0, uint64_t done, uint64_t total, bool quiet, bool *shown)
{
	if (quiet || now_ms() - t0 < 1000.0)
		return;
	fprintf(stderr, "\rgllmk-run: loading %s: %3.0f%% of %.0f MiB", m->gguf->path, 100.0 * (double)done / (double)total,
		(double)total / (1 << 20));
	*shown = true;
}

int model_bind(struct run_model *m, gllmk_context *ctx, bool map_weights, bool prepare_weights, bool quiet,
	       struct run_error *e)
{
	const struct gguf_file *f = m->gguf;
	gllmk_buffer *whole = NULL;
	double t0 = now_ms();
	uint64_t done = 0, total = f->size - f->data_offset;
	bool shown = false;
	/* --mmap: the mapping is read-only and CPU plugins never write weights,
	 * so wrapping it makes loading a matter of page faults, not copies; but
	 * a decode step then streams the weights through 4 KiB pages of the
	 * page cache, while a copy in gllmk buffers sits on huge pages. */
	gllmk_status st = map_weights ? gllmk_buffer_wrap(ctx, (void *)f->map, f->size, &whole) : GLLMK_E_UNSUPPORTED;

	if (st == GLLMK_OK && keep_buffer(m, whole)) {
		gllmk_buffer_free(whole);
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	}
	if (st != GLLMK_OK && st != GLLMK_E_UNSUPPORTED)
		return run_gllmk_error(e, "gllmk_buffer_wrap (the model's mapping)", st);
	m->wrapped = st == GLLMK_OK;
	for (size_t i = 0; i < m->n_binds; i++) {
		const struct run_binding *b = &m->binds[i];

		if (m->wrapped)
			*b->view = raw_view(b->t, whole, f->data_offset + b->t->offset);
		else if (prepare_weights && !b->to_f32 && b->t->n_dims >= 2 ? bind_matrix(m, ctx, b->t, b->view, e) :
										   upload(m, ctx, b->t, b->view, e))
			return e->status;
		if (b->to_f32 && to_f32(m, ctx, b->view, e))
			return e->status;
		done += b->t->nbytes;
		progress(m, t0, done, total, quiet, &shown);
	}
	if (m->tied)
		m->output = m->tok_embd;
	st = gllmk_sync(ctx);
	if (shown)
		fputc('\n', stderr);
	m->load_ms = now_ms() - t0;
	return st ? run_gllmk_error(e, "gllmk_sync (after loading)", st) : 0;
}

void model_release(struct run_model *m)
{
	for (size_t i = m->n_bufs; i-- > 0;)
		gllmk_buffer_free(m->bufs[i]);
	free(m->bufs);
	free(m->binds);
	free(m->layers);
	m->bufs = NULL;
	m->binds = NULL;
	m->layers = NULL;
	m->n_bufs = m->n_binds = 0;
}
