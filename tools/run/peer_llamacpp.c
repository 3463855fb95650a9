/* The llama.cpp peer shim: build-peers/libgllmk-peer-llamacpp.so.
 *
 * Built by scripts/install-peers (not by meson) against the llama.h of the
 * llama-cpp-python it installs, and linked to that package's libllama.so, so
 * every llama.cpp struct is laid out as that library expects. gllmk-run
 * dlopens it (tools/run/peer.c) and calls the one exported function below
 * with plain C types; nothing of llama.cpp reaches gllmk's own build.
 *
 * What it measures is what llama.cpp's llama-bench measures for its default
 * tests pp512 and tg128 (tools/llama-bench/llama-bench.cpp, the copy vendored
 * in the same package), with its default parameters:
 *   - one model load (mmap, no GPU layers; not timed);
 *   - pp and tg are separate tests, each with a fresh context: n_ctx =
 *     n_prompt + n_gen of that test (n_pp for pp, n_tg for tg), n_batch 2048,
 *     n_ubatch 512, f16 K/V cache, flash attention "auto", and a ggml CPU
 *     threadpool of n_threads threads (poll 50, no affinity) attached to it;
 *   - warm-up: pp runs the whole prompt test once, tg decodes one token;
 *   - each rep clears the KV cache (llama_memory_clear), then times the test:
 *     pp: the prompt in chunks of n_batch tokens (the first the BOS when the
 *     vocabulary adds one, the rest random ids < n_vocab), logits only for the
 *     last token of each chunk, then llama_synchronize;
 *     tg: n_tg single-token decodes from the empty cache (the first token the
 *     BOS, then random ids), logits on, llama_synchronize after each;
 *   - a rep's figure is tokens / seconds of that rep (llama-bench's samples_ts;
 *     its printed t/s is their mean).
 * Differences: llama-bench submits batches through common_batch and
 * llama_process (llama_batch_ext); this uses llama_batch and llama_decode,
 * which run the same graph. Random ids come from a local generator, not
 * std::rand (the values do not change the work).
 *
 * llama.cpp's log is silenced unless GLLMK_PEER_VERBOSE is set.
 * GLLMK_PEER_NO_REPACK=1 loads with use_extra_bufts off: llama.cpp then keeps
 * the file's layout instead of repacking Q4_0, Q4_K and IQ4_NL weights into
 * interleaved rows at load (a diagnostic: how much its repack buys).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "llama.h"

#ifndef GLLMK_PEER_VERSION
#define GLLMK_PEER_VERSION "llama.cpp"
#endif

#define EXPORT __attribute__((visibility("default")))

EXPORT int gllmk_peer_llamacpp_bench_v2(const char *model_path, int n_threads, int n_pp, int n_tg, int n_depth,
					int reps, double *pp_tokens_per_s, double *tg_tokens_per_s, char *version,
					size_t version_len, char *err, size_t errlen);

typedef struct ggml_threadpool *(*threadpool_new_fn)(struct ggml_threadpool_params *params);
typedef void (*threadpool_free_fn)(struct ggml_threadpool *tp);

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void null_log(enum ggml_log_level level, const char *text, void *user_data)
{
	(void)level;
	(void)text;
	(void)user_data;
}

/* An environment switch: set, not empty and not "0". */
static int env_flag(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x853c49e6748fea9bull;

static llama_token random_token(int32_t n_vocab)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (llama_token)(z % (uint64_t)n_vocab);
}

struct bench_ctx {
	struct llama_context *ctx;
	const struct llama_vocab *vocab;
	int32_t n_vocab;
	int n_threads;
	int n_batch;
	struct llama_batch batch; /* n_batch tokens */
};

static void batch_add(struct llama_batch *b, llama_token id, llama_pos pos, int output)
{
	int i = b->n_tokens++;

	b->token[i] = id;
	b->pos[i] = pos;
	b->n_seq_id[i] = 1;
	b->seq_id[i][0] = 0;
	b->logits[i] = (int8_t)(output != 0);
}

/* llama-bench's test_prompt. */
static int test_prompt(struct bench_ctx *bc, int n_prompt, char *err, size_t errlen)
{
	int n_processed = 0;

	llama_set_n_threads(bc->ctx, bc->n_threads, bc->n_threads);
	while (n_processed < n_prompt) {
		int n_tokens = n_prompt - n_processed < bc->n_batch ? n_prompt - n_processed : bc->n_batch;
		llama_pos pos = llama_memory_seq_pos_max(llama_get_memory(bc->ctx), 0) + 1;
		int i, res;

		bc->batch.n_tokens = 0;
		for (i = 0; i < n_tokens; i++) {
			llama_token id = (i == 0 && n_processed == 0 && llama_vocab_get_add_bos(bc->vocab))
						 ? llama_vocab_bos(bc->vocab)
						 : random_token(bc->n_vocab);
			batch_add(&bc->batch, id, pos + i, i == n_tokens - 1);
		}
		res = llama_decode(bc->ctx, bc->batch);
		if (res != 0) {
			set_err(err, errlen, "llama.cpp: llama_decode of a %d-token prompt batch returned %d", n_tokens,
				res);
			return -1;
		}
		n_processed += n_tokens;
	}
	llama_synchronize(bc->ctx);
	return 0;
}

/* llama-bench's test_gen. */
static int test_gen(struct bench_ctx *bc, int n_gen, char *err, size_t errlen)
{
	llama_token token = llama_vocab_get_add_bos(bc->vocab) ? llama_vocab_bos(bc->vocab) : random_token(bc->n_vocab);
	llama_pos pos = llama_memory_seq_pos_max(llama_get_memory(bc->ctx), 0) + 1;
	int i;

	llama_set_n_threads(bc->ctx, bc->n_threads, bc->n_threads);
	for (i = 0; i < n_gen; i++) {
		int res;

		bc->batch.n_tokens = 0;
		batch_add(&bc->batch, token, pos++, 1);
		res = llama_decode(bc->ctx, bc->batch);
		if (res != 0) {
			set_err(err, errlen, "llama.cpp: llama_decode of generated token %d returned %d", i, res);
			return -1;
		}
		llama_synchronize(bc->ctx);
		token = random_token(bc->n_vocab);
	}
	return 0;
}

/* The cache back to its first n_depth tokens: empty, or the depth's
 * prompt once (llama-bench's -d), whose positions the timed runs follow. */
static int reset_to_depth(struct bench_ctx *bc, int n_depth, int *have_depth, char *err, size_t errlen)
{
	llama_memory_t mem = llama_get_memory(bc->ctx);

	if (n_depth == 0 || !*have_depth) {
		llama_memory_clear(mem, false);
		*have_depth = n_depth > 0;
		return n_depth > 0 ? test_prompt(bc, n_depth, err, errlen) : 0;
	}
	if (!llama_memory_seq_rm(mem, 0, n_depth, -1)) {
		set_err(err, errlen, "llama.cpp: llama_memory_seq_rm of the tokens after the depth %d failed", n_depth);
		return -1;
	}
	return 0;
}

/* One llama-bench test (n_prompt tokens, or n_gen tokens) on a fresh context:
 * warm-up, then reps timed runs, each from a cache of n_depth tokens. */
static int run_test(struct llama_model *model, int n_threads, int n_prompt, int n_gen, int n_depth, int reps,
		    double *tps, threadpool_new_fn tp_new, threadpool_free_fn tp_free, char *err, size_t errlen)
{
	struct llama_context_params cparams = llama_context_default_params();
	struct ggml_threadpool_params tpp;
	struct ggml_threadpool *tp;
	struct bench_ctx bc;
	int r, rc = -1, have_depth = 0;

	cparams.n_ctx = (uint32_t)(n_depth + n_prompt + n_gen);
	cparams.n_batch = 2048;
	cparams.n_ubatch = 512;
	cparams.n_threads = n_threads;
	cparams.n_threads_batch = n_threads;
	cparams.type_k = GGML_TYPE_F16;
	cparams.type_v = GGML_TYPE_F16;
	cparams.offload_kqv = true;
	cparams.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
	cparams.embeddings = false;
	cparams.op_offload = true;
	cparams.swa_full = false;

	memset(&bc, 0, sizeof(bc));
	bc.ctx = llama_init_from_model(model, cparams);
	if (!bc.ctx) {
		set_err(err, errlen, "llama.cpp: llama_init_from_model failed (n_ctx %d)", n_depth + n_prompt + n_gen);
		return -1;
	}
	bc.vocab = llama_model_get_vocab(model);
	bc.n_vocab = llama_vocab_n_tokens(bc.vocab);
	bc.n_threads = n_threads;
	bc.n_batch = (int)llama_n_batch(bc.ctx);
	if (bc.n_batch <= 0 || bc.n_vocab <= 0) {
		set_err(err, errlen, "llama.cpp: n_batch %d, n_vocab %d", bc.n_batch, (int)bc.n_vocab);
		llama_free(bc.ctx);
		return -1;
	}
	bc.batch = llama_batch_init(bc.n_batch, 0, 1);

	tpp = ggml_threadpool_params_default(n_threads);
	tp = tp_new(&tpp);
	if (!tp) {
		set_err(err, errlen, "llama.cpp: ggml_threadpool_new(%d threads) failed", n_threads);
		goto out;
	}
	llama_attach_threadpool(bc.ctx, tp, NULL);
	if (reset_to_depth(&bc, n_depth, &have_depth, err, errlen) != 0)
		goto out;

	/* warm-up, as llama-bench */
	if (n_prompt > 0 && test_prompt(&bc, n_prompt, err, errlen) != 0)
		goto out;
	if (n_gen > 0 && test_gen(&bc, 1, err, errlen) != 0)
		goto out;

	for (r = 0; r < reps; r++) {
		double t0, t;

		if (reset_to_depth(&bc, n_depth, &have_depth, err, errlen) != 0)
			goto out;
		t0 = now_s();
		if (n_prompt > 0 && test_prompt(&bc, n_prompt, err, errlen) != 0)
			goto out;
		if (n_gen > 0 && test_gen(&bc, n_gen, err, errlen) != 0)
			goto out;
		t = now_s() - t0;
		tps[r] = (double)(n_prompt + n_gen) / t;
	}
	rc = 0;
out:
	llama_batch_free(bc.batch);
	llama_free(bc.ctx);
	if (tp)
		tp_free(tp);
	return rc;
}

EXPORT int gllmk_peer_llamacpp_bench_v2(const char *model_path, int n_threads, int n_pp, int n_tg, int n_depth,
					int reps, double *pp_tokens_per_s, double *tg_tokens_per_s, char *version,
					size_t version_len, char *err, size_t errlen)
{
	static int initialized;
	const int verbose = env_flag("GLLMK_PEER_VERBOSE");
	struct llama_model_params mparams;
	struct llama_model *model;
	ggml_backend_dev_t cpu_dev;
	ggml_backend_reg_t cpu_reg;
	threadpool_new_fn tp_new;
	threadpool_free_fn tp_free;
	void *sym;
	int r, rc;

	if (version && version_len)
		snprintf(version, version_len, "%s", GLLMK_PEER_VERSION);
	if (!model_path || n_threads <= 0 || n_pp < 0 || n_tg < 0 || n_depth < 0 || reps < 1 || !pp_tokens_per_s ||
	    !tg_tokens_per_s) {
		set_err(err, errlen, "llama.cpp peer: bad arguments");
		return -1;
	}
	for (r = 0; r < reps; r++)
		pp_tokens_per_s[r] = tg_tokens_per_s[r] = 0.0;

	llama_log_set(verbose ? NULL : null_log, NULL); /* NULL: llama.cpp's default (stderr) */
	if (!initialized) {
		/* CPU backends built in are registered already; a GGML_BACKEND_DL
		 * build loads its backend libraries here, as llama-bench does. */
		if (!ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU))
			ggml_backend_load_all();
		llama_backend_init();
		initialized = 1;
		if (verbose)
			fprintf(stderr, "gllmk peer: %s: %s\n", GLLMK_PEER_VERSION, llama_print_system_info());
	}
	cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
	if (!cpu_dev) {
		set_err(err, errlen, "llama.cpp: no CPU backend");
		return -1;
	}
	cpu_reg = ggml_backend_dev_backend_reg(cpu_dev);
	sym = ggml_backend_reg_get_proc_address(cpu_reg, "ggml_threadpool_new");
	memcpy(&tp_new, &sym, sizeof(tp_new));
	sym = ggml_backend_reg_get_proc_address(cpu_reg, "ggml_threadpool_free");
	memcpy(&tp_free, &sym, sizeof(tp_free));
	if (!tp_new || !tp_free) {
		set_err(err, errlen, "llama.cpp: the CPU backend has no ggml_threadpool_new/free");
		return -1;
	}

	mparams = llama_model_default_params();
	mparams.n_gpu_layers = 0;
	mparams.load_mode = LLAMA_LOAD_MODE_MMAP;
	if (env_flag("GLLMK_PEER_NO_REPACK"))
		mparams.use_extra_bufts = false;
	model = llama_model_load_from_file(model_path, mparams);
	if (!model) {
		set_err(err, errlen, "llama.cpp cannot load %s (GLLMK_PEER_VERBOSE=1 shows its log)", model_path);
		return -1;
	}
	rc = 0;
	if (n_pp > 0)
		rc = run_test(model, n_threads, n_pp, 0, n_depth, reps, pp_tokens_per_s, tp_new, tp_free, err, errlen);
	if (rc == 0 && n_tg > 0)
		rc = run_test(model, n_threads, 0, n_tg, n_depth, reps, tg_tokens_per_s, tp_new, tp_free, err, errlen);
	llama_model_free(model);
	return rc;
}
