/* gllmk-run: the program's options and the pieces around the model (vocabulary,
 * JSON output, the benchmark). The model and its forward pass: model.h. */
#ifndef GLLMK_RUN_RUN_H
#define GLLMK_RUN_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

struct run_opts {
	const char *model, *prompt_ids, *prompt_file, *plugin, *logits, *peer;
	int64_t n_gen, n_batch, n_ctx;
	gllmk_dtype kv_type; /* --kv-type: f16 (default), q8_0, q4_0 */
	float temp, top_p;
	int32_t top_k;
	uint64_t seed;
	int threads;
	int reps, pp, tg; /* --bench */
	int depth;        /* --bench --depth: tokens in the cache before pp and tg */
	int64_t parallel; /* --parallel N: N sequences through the paged cache (0: off) */
	bool bench, info, json, quiet;
	bool mmap; /* --mmap: CPU plugins wrap the file's mapping */
	bool no_prepare; /* --no-prepare: weights stay in the file's layout */
	bool bf16_act; /* --bf16-activations: GLLMK_OPEN_BF16_ACTIVATIONS */
};

struct run_vocab {
	const struct gguf_kv *tokens; /* NULL: the file has no vocabulary */
	bool byte_level;              /* GPT-2 style BPE pieces */
};

void vocab_init(struct run_vocab *v, const struct gguf_file *f);
/* The text of token id into out (NUL-terminated, cut to n); NULL if unknown. */
const char *vocab_piece(const struct run_vocab *v, int32_t id, char *out, size_t n);

/* JSON output: a string with its escapes, and the "key": prefix. */
void json_str(FILE *fp, const char *s, size_t len);
void json_key(FILE *fp, bool *first, const char *key);

/* --info: the model's metadata and tensors. */
void info_print(const struct run_model *m, FILE *fp);

/* --bench: pp and tg like llama-bench, the roofline, the peer. */
int bench_run(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o, struct run_error *e);

double run_now_ms(void);
/* Threads a CPU plugin uses for n_threads = 0: one per physical core. */
int run_default_threads(void);

#endif
