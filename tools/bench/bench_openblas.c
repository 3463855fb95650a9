/* OpenBLAS as a benchmark peer: loaded at run time with dlopen, never linked,
 * so the tool runs (and says "not installed") on a machine without it. The
 * CBLAS constants are spelled here so no BLAS header is needed to build.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "bench.h"

enum {
	CBLAS_ROW_MAJOR = 101,
	CBLAS_NO_TRANS = 111,
	CBLAS_TRANS = 112,
};

typedef void (*cblas_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
			       const float *b, int ldb, float beta, float *c, int ldc);
typedef void (*cblas_sgemv_fn)(int order, int ta, int m, int n, float alpha, const float *a, int lda, const float *x,
			       int incx, float beta, float *y, int incy);
typedef void (*set_threads_fn)(int n);
typedef char *(*get_config_fn)(void);

struct bench_blas {
	void *lib;
	cblas_sgemm_fn sgemm;
	cblas_sgemv_fn sgemv;
	const char *version;
};

struct bench_blas *bench_blas_open(int threads, const char **why)
{
	struct bench_blas *bl;
	set_threads_fn set_threads;
	get_config_fn get_config;
	void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		*why = "OpenBLAS not installed (libopenblas.so.0 not found)";
		return NULL;
	}
	bl = calloc(1, sizeof(*bl));
	if (!bl) {
		dlclose(lib);
		*why = "out of memory";
		return NULL;
	}
	bl->lib = lib;
	bl->sgemm = (cblas_sgemm_fn)dlsym(lib, "cblas_sgemm");
	bl->sgemv = (cblas_sgemv_fn)dlsym(lib, "cblas_sgemv");
	set_threads = (set_threads_fn)dlsym(lib, "openblas_set_num_threads");
	get_config = (get_config_fn)dlsym(lib, "openblas_get_config");
	if (!bl->sgemm || !bl->sgemv) {
		bench_blas_close(bl);
		*why = "OpenBLAS not usable (libopenblas.so.0 lacks cblas_sgemm/cblas_sgemv)";
		return NULL;
	}
	if (set_threads)
		set_threads(threads);
	bl->version = get_config ? get_config() : "OpenBLAS (version unknown)";
	*why = NULL;
	return bl;
}

void bench_blas_close(struct bench_blas *bl)
{
	if (!bl)
		return;
	dlclose(bl->lib);
	free(bl);
}

const char *bench_blas_version(const struct bench_blas *bl)
{
	return bl->version;
}

void bench_blas_sgemm(const struct bench_blas *bl, int m, int n, int k, const float *a, const float *b,
		      bool b_trans, float *c)
{
	bl->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, b_trans ? CBLAS_TRANS : CBLAS_NO_TRANS, m, n, k, 1.0f, a, k, b,
		  b_trans ? k : n, 0.0f, c, n);
}

void bench_blas_sgemv(const struct bench_blas *bl, int n, int k, const float *w, const float *x, float *y)
{
	bl->sgemv(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, n, k, 1.0f, w, k, x, 1, 0.0f, y, 1);
}
