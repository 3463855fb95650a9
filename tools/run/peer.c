/* Peers for gllmk-run --bench --peer NAME: a shim library loaded with dlopen,
 * never linked (see peer.h). The shim for llama.cpp is built by
 * scripts/install-peers from tools/run/peer_llamacpp.c against the llama.h of
 * the installed llama-cpp-python and exports one function with plain C types:
 *
 *   int gllmk_peer_llamacpp_bench_v2(const char *model_path, int n_threads,
 *       int n_pp, int n_tg, int n_depth, int reps, double *pp_tokens_per_s,
 *       double *tg_tokens_per_s, char *version, size_t version_len,
 *       char *err, size_t errlen);
 *
 * A new contract gets a new name (_v2 added n_depth to _v1), so a stale shim
 * is refused by name.
 */
#define _POSIX_C_SOURCE 200809L

#include "peer.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*llamacpp_bench_v2_fn)(const char *model_path, int n_threads, int n_pp, int n_tg, int n_depth, int reps,
				    double *pp_tokens_per_s, double *tg_tokens_per_s, char *version,
				    size_t version_len, char *err, size_t errlen);

struct gllmk_peer {
	void *lib;
	char name[32];
	char path[4096];
	llamacpp_bench_v2_fn bench_v2;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dir/file into out when that file exists. */
static int try_path(char *out, size_t outlen, const char *dir, const char *file)
{
	int n;

	if (!dir || !*dir)
		return 0;
	n = snprintf(out, outlen, "%s/%s", dir, file);
	return n > 0 && (size_t)n < outlen && is_file(out);
}

/* The first of exe_dir/.., exe_dir/../.., exe_dir/../../.. that holds
 * build-peers/, as "<that>/build-peers". */
static int exe_peer_dir(char *out, size_t outlen)
{
	static const char *const ups[] = { "/..", "/../..", "/../../.." };
	char exe[4096];
	ssize_t n;
	char *slash;
	size_t i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return 0;
	*slash = '\0'; /* the executable's directory */
	for (i = 0; i < sizeof(ups) / sizeof(ups[0]); i++) {
		int w = snprintf(out, outlen, "%s%s/build-peers", exe, ups[i]);
		if (w > 0 && (size_t)w < outlen && is_dir(out))
			return 1;
	}
	return 0;
}

static int find_shim(const char *file, const char *hint, char *out, size_t outlen)
{
	char dir[4096 + 32];
	const char *env = getenv("GLLMK_PEER_DIR");

	if (try_path(out, outlen, env, file))
		return 1;
	if (exe_peer_dir(dir, sizeof(dir)) && try_path(out, outlen, dir, file))
		return 1;
	if (hint && *hint) {
		snprintf(dir, sizeof(dir), "%s/build-peers", hint);
		if (try_path(out, outlen, dir, file) || try_path(out, outlen, hint, file))
			return 1;
	}
	return 0;
}

struct gllmk_peer *gllmk_peer_open(const char *name, const char *top_dir_hint, char *err, size_t errlen)
{
	static const char shim[] = "libgllmk-peer-llamacpp.so";
	struct gllmk_peer *p;
	char path[4096];
	void *lib;
	void *sym;

	if (!name || (strcmp(name, "llama.cpp") != 0 && strcmp(name, "llamacpp") != 0)) {
		set_err(err, errlen, "unknown peer '%s' (known: llama.cpp)", name ? name : "(null)");
		return NULL;
	}
	if (!find_shim(shim, top_dir_hint, path, sizeof(path))) {
		set_err(err, errlen, "llama.cpp not installed (run scripts/install-peers)");
		return NULL;
	}
	/* Never unloaded: llama.cpp's CPU backend runs OpenMP (libgomp) worker
	 * threads that outlive a computation; unmapping their code under them
	 * would crash. gllmk_peer_close() frees the handle, not the library. */
#ifdef RTLD_NODELETE
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#else
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
	if (!lib) {
		const char *why = dlerror();
		set_err(err, errlen, "llama.cpp peer %s cannot be loaded (rerun scripts/install-peers): %s", path,
			why ? why : "dlopen failed");
		return NULL;
	}
	sym = dlsym(lib, "gllmk_peer_llamacpp_bench_v2");
	if (!sym) {
		set_err(err, errlen, "llama.cpp peer %s has no gllmk_peer_llamacpp_bench_v2 (rerun scripts/install-peers)",
			path);
		dlclose(lib);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		set_err(err, errlen, "out of memory");
		dlclose(lib);
		return NULL;
	}
	p->lib = lib;
	snprintf(p->name, sizeof(p->name), "llama.cpp");
	snprintf(p->path, sizeof(p->path), "%s", path);
	/* ISO C has no function-pointer cast from void *; POSIX guarantees it. */
	memcpy(&p->bench_v2, &sym, sizeof(p->bench_v2));
	return p;
}

int gllmk_peer_bench(struct gllmk_peer *p, const char *model_path, int n_threads, int n_pp, int n_tg, int n_depth,
		     int reps,
		     struct gllmk_peer_result *out, char *err, size_t errlen)
{
	char version[64] = "";
	int rc;

	if (!p || !model_path || !out) {
		set_err(err, errlen, "gllmk_peer_bench: NULL argument");
		return -1;
	}
	if (n_threads <= 0 || n_pp < 0 || n_tg < 0 || n_depth < 0 || reps < 1 || reps > GLLMK_PEER_MAX_REPS) {
		set_err(err, errlen,
			"gllmk_peer_bench: bad arguments (threads %d, pp %d, tg %d, depth %d, reps %d; 1..%d reps)",
			n_threads, n_pp, n_tg, n_depth, reps, GLLMK_PEER_MAX_REPS);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", p->name);
	if (err && errlen)
		err[0] = '\0';
	rc = p->bench_v2(model_path, n_threads, n_pp, n_tg, n_depth, reps, out->pp_tokens_per_s, out->tg_tokens_per_s,
			 version, sizeof(version), err, errlen);
	if (rc != 0) {
		if (err && errlen && !err[0])
			set_err(err, errlen, "llama.cpp peer failed on %s", model_path);
		return -1;
	}
	version[sizeof(version) - 1] = '\0';
	snprintf(out->version, sizeof(out->version), "%s", version);
	out->reps = reps;
	return 0;
}

void gllmk_peer_close(struct gllmk_peer *p)
{
	if (!p)
		return;
	if (p->lib)
		dlclose(p->lib);
	free(p);
}
