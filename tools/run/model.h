/* gllmk-run: a GGUF model bound to gllmk buffers, and its forward pass.
 *
 * model.c reads the architecture and hyper-parameters, checks every tensor's
 * type and shape against them, and binds each to a gllmk view (CPU plugins:
 * one gllmk_buffer_wrap over the file's mapping; GPU plugins: one upload per
 * tensor). forward.c runs tokens through it with gllmk operators only.
 */
#ifndef GLLMK_RUN_MODEL_H
#define GLLMK_RUN_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "gguf.h"
#include "gllmk.h"

/* Exit statuses (SPEC/RUN.md). */
enum run_exit {
	RUN_OK = 0,
	RUN_E_GLLMK = 1,       /* a gllmk call failed */
	RUN_E_BAD_INPUT = 2,   /* a bad file or command line */
	RUN_E_UNSUPPORTED = 3, /* valid, but gllmk cannot run it */
};

enum run_arch { ARCH_LLAMA, ARCH_QWEN2, ARCH_QWEN3, ARCH_QWEN3MOE, ARCH_GEMMA2, ARCH_GEMMA3, ARCH_PHI3, ARCH_GPTOSS };

struct run_hparams {
	int64_t n_layer, n_embd, n_ff, n_head, n_head_kv;
	int64_t head_dim, head_dim_v, n_rot, n_vocab, n_ctx_train;
	float eps, rope_base, freq_scale;
	int32_t rope_mode; /* enum gllmk_rope_mode */
	/* YaRN (rope.scaling.type yarn; ext_factor 0 otherwise): gllmk_rope_ext's fields */
	float ext_factor, attn_factor, beta_fast, beta_slow;
	int32_t n_ctx_orig;
	/* Mixture of experts (n_expert > 0): each token's FFN is the weighted sum
	 * of n_expert_used of n_expert SwiGLU experts of width n_ff_exp. */
	int64_t n_expert, n_expert_used, n_ff_exp;
	/* Gemma 2/3: the scores' scale on q·k (llama.cpp's f_attention_scale), the
	 * soft-caps of the scores and the final logits (0: off), the sliding
	 * window of the local layers (il % swa_pattern < swa_pattern - 1; n_swa 0:
	 * none), and the local layers' rope (Gemma 3: base 10000, no scaling) */
	float attn_scale, attn_softcap, final_softcap;
	int64_t n_swa, swa_pattern;
	float rope_base_swa, freq_scale_swa;
};

struct run_layer {
	gllmk_tensor attn_norm, wq, wk, wv, wo;
	gllmk_tensor bq, bk, bv;         /* qwen2 */
	gllmk_tensor q_norm, k_norm;     /* qwen3 */
	gllmk_tensor ffn_norm, w_gate, w_up, w_down;
	gllmk_tensor post_attn_norm, post_ffn_norm; /* gemma2/3: on each block's output */
	/* phi3: q, k, v stacked [q + k + v rows, n_embd]; gate and up stacked
	 * [2·n_ff, n_embd] (gate rows first), in place of wq/wk/wv, w_gate/w_up */
	gllmk_tensor wqkv, w_gate_up;
	/* MoE: the router [E, n_embd] and the experts [E, n_ff_exp, n_embd] (gate,
	 * up) and [E, n_embd, n_ff_exp] (down), in place of w_gate/w_up/w_down */
	gllmk_tensor ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps;
	/* gpt-oss: attn_output's bias [n_embd], the per-head attention sinks
	 * [n_head], the router's bias [E] and the experts' biases [E, n_ff_exp]
	 * (gate, up) and [E, n_embd] (down), all f32 */
	gllmk_tensor bo, sinks, ffn_gate_inp_b, ffn_gate_exps_b, ffn_up_exps_b, ffn_down_exps_b;
};

/* A weight view to fill at bind time from its GGUF tensor. */
struct run_binding {
	gllmk_tensor *view;
	const struct gguf_tensor *t;
	bool to_f32; /* an f16/bf16 norm or bias: ops take them in f32 */
};

struct run_model {
	struct gguf_file *gguf;
	struct run_binding *binds;
	size_t n_binds;
	const char *arch_name;
	enum run_arch arch;
	struct run_hparams hp;
	gllmk_tensor tok_embd, output_norm, output;
	gllmk_tensor rope_freqs; /* Llama 3.1+ frequency factors [n_rot/2]; valid when has_rope_freqs */
	bool has_rope_freqs;
	/* Phi-3 LongRoPE factors [n_rot/2] (each optional): long when the context
	 * exceeds hp.n_ctx_orig, else short */
	gllmk_tensor rope_long, rope_short;
	bool has_rope_long, has_rope_short;
	struct run_layer *layers;
	bool has_bias, has_qk_norm;
	bool moe; /* hp.n_expert > 0 */
	bool gemma; /* embedding scale, post-norms, GEGLU, soft-caps, sliding-window layers */
	bool fused; /* phi3: wqkv and w_gate_up */
	bool gptoss; /* attn_output bias, sinks, router and expert biases, top-k then softmax, SwiGLU-OAI */
	/* Buffers holding the weights: one wrapped mapping, or one per tensor. */
	gllmk_buffer **bufs;
	size_t n_bufs;
	/* What a decode step reads, and the matmul work of one token. */
	uint64_t weight_bytes_per_token;
	double matmul_flops_per_token;
	double load_ms;
	int n_prepared; /* matrices in a layout of the plugin's (gllmk_weights_prepare) */
	bool wrapped; /* the weights are the file's mapping, not a copy */
	bool tied;    /* no output.weight: the output matrix is token_embd */
};

/* Gemma's local (sliding-window) layers. */
static inline bool run_layer_is_local(const struct run_hparams *hp, int64_t il)
{
	return hp->n_swa > 0 && il % hp->swa_pattern < hp->swa_pattern - 1;
}

/* A one-line error and its exit status. */
struct run_error {
	int status; /* enum run_exit */
	char msg[512];
};

/* Reads the hyper-parameters and checks every tensor, without a context:
 * fills m (bufs empty) or e. */
int model_describe(struct gguf_file *f, struct run_model *m, struct run_error *e);
/* Binds the weights to ctx (wrap, or upload and, with prepare, the
 * plugin's prepared copy of each matrix it has a layout for); progress on
 * stderr unless quiet. */
int model_bind(struct run_model *m, gllmk_context *ctx, bool map_weights, bool prepare, bool quiet,
	       struct run_error *e);
void model_release(struct run_model *m);

/* ------------------------------------------------------------ forward */

struct run_state;

struct run_state_opts {
	int64_t n_ctx;   /* KV cache tokens */
	int64_t n_batch; /* most tokens per forward call */
	gllmk_dtype kv_type; /* the K/V cache: f16, q8_0 or q4_0 */
	bool all_logits; /* keep the logits of every position of a batch */
	/* > 0: n_seq sequences of up to n_ctx tokens each in one paged cache
	 * (gllmk_kv_store, gllmk_attention_varlen; run_forward_seqs); every
	 * position's logits are kept */
	int64_t n_seq;
};

/* The paged cache's tokens per block. */
#define RUN_PAGE_TOKENS 16

int run_state_new(const struct run_model *m, gllmk_context *ctx, const struct run_state_opts *o,
		  struct run_state **out, struct run_error *e);
void run_state_free(struct run_state *s);

/* Evaluates n tokens (n <= n_batch) at positions pos..pos+n-1. Token ids come
 * from the host (ids != NULL) or, when ids is NULL and n == 1, from the id the
 * last sample wrote on the device. The logits of the last position (every
 * position with all_logits) are left on the device. */
int run_forward(struct run_state *s, const int32_t *ids, int64_t n, int64_t pos, struct run_error *e);
/* n_seq > 0: evaluates n_tok[q] tokens of every sequence q (0 allowed) at
 * its positions pos[q].., packed in sequence order (ids: sum n_tok); every
 * row's argmax is computed on the device and read back into next (sum n_tok
 * ids), the logits of every row left on the device. */
int run_forward_seqs(struct run_state *s, const int32_t *ids, const int64_t *n_tok, const int64_t *pos, int32_t *next,
		     struct run_error *e);
/* Samples the next id from the last position's logits on the device (argmax
 * when p->temperature <= 0) and reads only that id back. */
int run_sample(struct run_state *s, const gllmk_sample_params *p, float uniform, int32_t *id, struct run_error *e);
/* Copies the logits of the last forward call to host: rows x n_vocab floats
 * (rows = n with all_logits, else 1). */
int run_read_logits(struct run_state *s, float *dst, int64_t rows, struct run_error *e);

/* Sets e from the last failed gllmk call. Returns RUN_E_GLLMK. */
int run_gllmk_error(struct run_error *e, const char *what, gllmk_status st);
int run_fail(struct run_error *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
