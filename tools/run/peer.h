/* Peers: other runtimes that gllmk-run --bench --peer NAME measures on the
 * same GGUF file, with the same thread count, in the same run.
 *
 * A peer is never linked into gllmk: peer.c dlopens a small shim library
 * (build-peers/libgllmk-peer-<name>.so, built by scripts/install-peers against
 * the peer's own headers) and calls one exported function with plain C types.
 * When the peer is not installed, gllmk_peer_open() returns NULL with a
 * one-line reason and gllmk-run goes on without it.
 *
 * Only "llama.cpp" exists: llama.cpp as shipped by llama-cpp-python, run as
 * its llama-bench runs pp<n_pp> and tg<n_tg> (one warm-up, then per rep: an
 * empty KV cache, or one holding n_depth tokens as llama-bench -d, then the
 * timed prompt batch or the timed single-token decodes).
 */
#ifndef GLLMK_RUN_PEER_H
#define GLLMK_RUN_PEER_H

#include <stddef.h>

#define GLLMK_PEER_MAX_REPS 32

struct gllmk_peer_result {
	char name[32];     /* "llama.cpp" */
	char version[64];  /* "llama-cpp-python 0.3.36" */
	int reps;          /* entries filled in each array below */
	double pp_tokens_per_s[GLLMK_PEER_MAX_REPS]; /* n_pp / seconds, one per rep */
	double tg_tokens_per_s[GLLMK_PEER_MAX_REPS]; /* n_tg / seconds, one per rep */
};

struct gllmk_peer;

/* Loads the peer NAME ("llama.cpp"). The shim is searched in $GLLMK_PEER_DIR,
 * then in <top>/build-peers/ where <top> is the first of ../.., ../../..
 * (and ../) from the executable's directory that holds build-peers/, then in
 * <top_dir_hint>/build-peers/ and <top_dir_hint>/ (top_dir_hint may be NULL).
 * NULL: not available; err says why ("llama.cpp not installed (run
 * scripts/install-peers)", or the dlopen error of a shim that is there). */
struct gllmk_peer *gllmk_peer_open(const char *name, const char *top_dir_hint,
                                   char *err, size_t errlen);

/* Runs pp n_pp and tg n_tg, reps times each (1 <= reps <= GLLMK_PEER_MAX_REPS),
 * on model_path with n_threads threads (> 0), each after n_depth tokens of
 * context (>= 0; prefilled once a test, untimed). Fills *out. 0 success; -1
 * with err set. Prints nothing unless GLLMK_PEER_VERBOSE is set (llama.cpp's log). */
int gllmk_peer_bench(struct gllmk_peer *p, const char *model_path, int n_threads,
                     int n_pp, int n_tg, int n_depth, int reps, struct gllmk_peer_result *out,
                     char *err, size_t errlen);

void gllmk_peer_close(struct gllmk_peer *p);

#endif
