/* Allocation failure, swept: for n = 1, 2, ... the n-th allocation that
 * gllmk's own code makes (the core, the plugin, the debug layer) fails, over
 * one sequence: open, buffers, writes, matmul f32 and q8_0 and q4_K,
 * rms_norm, softmax, rope, attention, get_rows, sample, reads, close. For
 * every n:
 *   - every public call returns GLLMK_OK or GLLMK_E_NO_MEMORY, and a failure
 *     has a message (gllmk_open answered GLLMK_E_NO_PLUGIN when the plugin's
 *     open or the loader's record ran out of memory: the first finding);
 *   - nothing crashes (the sequence stops at the first failure and frees
 *     what it has, as a client would);
 *   - nothing leaks: every block gllmk allocated during the sequence is freed
 *     by the end of gllmk_close (this file keeps the list; it replaces the
 *     allocator, so it runs in builds without a sanitizer, where LSan cannot
 *     be used together with it).
 * The sweep ends at the first n past the sequence's last allocation; it
 * prints how many allocation points it swept.
 *
 * The allocator below is this executable's malloc family: the dynamic
 * linker binds every shared object's calls to it, the plugins dlopened at
 * run time included. It forwards to glibc's (__libc_malloc and friends) and
 * counts a call only when its caller is code of a libgllmk*.so (dladdr on
 * the return address): allocations libc makes on gllmk's behalf (strdup,
 * fopen, dlopen, pthread_create) are not failed.
 *
 * --device LAYER (the Vulkan plugin): the same sweep over device memory
 * instead. LAYER is tests/alloc/vk_fault_layer.c's library, which the
 * Vulkan loader inserts (VK_LAYER_PATH, VK_INSTANCE_LAYERS): the n-th
 * vkAllocateMemory of each context's device answers
 * VK_ERROR_OUT_OF_DEVICE_MEMORY; every call must return GLLMK_OK or
 * GLLMK_E_NO_MEMORY, and no device memory may be left after gllmk_close.
 *
 *   alloc_fail --plugin NAME --plugin-dir DIR [--device LAYER]
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gllmk.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

/* ------------------------------------------------------------ allocator */

static atomic_int armed;       /* counting and failing */
static atomic_long n_counted;  /* gllmk allocations since armed */
static long fail_at;           /* the one to fail (1-based); 0: none */
static atomic_int failed_one;  /* the injection happened */
static __thread int inside;    /* dladdr or the table called us back */

#define LIVE_CAP 65536
static void *live[LIVE_CAP];   /* gllmk's blocks allocated while armed */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t n_live;

static int from_gllmk(const void *ret)
{
	Dl_info info;

	return dladdr(ret, &info) && info.dli_fname && strstr(info.dli_fname, "libgllmk");
}

/* 1 if this allocation (its caller's return address ret) must fail. */
static int should_fail(const void *ret, int *tracked)
{
	long n;

	*tracked = 0;
	if (!atomic_load(&armed) || inside)
		return 0;
	inside = 1;
	*tracked = from_gllmk(ret);
	inside = 0;
	if (!*tracked)
		return 0;
	n = atomic_fetch_add(&n_counted, 1) + 1;
	if (n == fail_at) {
		atomic_store(&failed_one, 1);
		return 1;
	}
	return 0;
}

static void track(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&live_lock);
	if (n_live < LIVE_CAP)
		live[n_live++] = p;
	pthread_mutex_unlock(&live_lock);
}

static void untrack(void *p)
{
	if (!p || !n_live)
		return;
	pthread_mutex_lock(&live_lock);
	for (size_t i = n_live; i-- > 0;)
		if (live[i] == p) {
			live[i] = live[--n_live];
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

#define ALLOC_BODY(call)                                                   \
	int tracked;                                                       \
	void *p;                                                           \
	if (should_fail(__builtin_return_address(0), &tracked)) {          \
		errno = ENOMEM;                                            \
		return NULL;                                               \
	}                                                                  \
	p = call;                                                          \
	if (tracked)                                                       \
		track(p);                                                  \
	return p

void *malloc(size_t n)
{
	ALLOC_BODY(__libc_malloc(n));
}

void *calloc(size_t m, size_t n)
{
	ALLOC_BODY(__libc_calloc(m, n));
}

void *aligned_alloc(size_t a, size_t n)
{
	ALLOC_BODY(__libc_memalign(a, n));
}

void *memalign(size_t a, size_t n)
{
	ALLOC_BODY(__libc_memalign(a, n));
}

void *realloc(void *old, size_t n)
{
	int tracked;
	void *p;

	if (should_fail(__builtin_return_address(0), &tracked)) {
		errno = ENOMEM;
		return NULL; /* old stays valid */
	}
	p = __libc_realloc(old, n);
	if (p && tracked) {
		untrack(old);
		track(p);
	}
	return p;
}

int posix_memalign(void **out, size_t a, size_t n)
{
	int tracked;

	if (should_fail(__builtin_return_address(0), &tracked))
		return ENOMEM;
	*out = __libc_memalign(a, n);
	if (!*out)
		return ENOMEM;
	if (tracked)
		track(*out);
	return 0;
}

void free(void *p)
{
	untrack(p);
	__libc_free(p);
}

/* ------------------------------------------------------------ sequence */

static const char *plugin = "cpu-generic", *plugin_dir;
static int bad; /* a finding: the sweep fails */
static int n_no_memory, n_completed; /* how the swept sequences ended */

/* A status a call may return under allocation failure. */
static int acceptable(const char *what, gllmk_status st, int is_open)
{
	if (st == GLLMK_OK)
		return 1;
	(void)is_open;
	if (st == GLLMK_E_NO_MEMORY) {
		n_no_memory++;
		if (!gllmk_last_error()[0]) {
			fprintf(stderr, "alloc_fail: n=%ld: %s failed without a message\n", fail_at, what);
			bad = 1;
		}
		return 0;
	}
	fprintf(stderr, "alloc_fail: n=%ld: %s returned %s (%s), not GLLMK_E_NO_MEMORY\n", fail_at, what,
		gllmk_status_string(st), gllmk_last_error());
	bad = 1;
	return 0;
}

#define STEP(expr)                                       \
	do {                                             \
		if (!acceptable(#expr, (expr), 0))       \
			goto out;                        \
	} while (0)

#define TENSOR(buf, off, dt, ...) gllmk_tensor_make(buf, off, dt, sizeof((int64_t[]){__VA_ARGS__}) / 8, (int64_t[]){__VA_ARGS__})

enum { M = 4, K = 256, N = 64, T = 4, H = 2, D = 64, NB = 6 };

static void sequence(void)
{
	static float x[N * K], out[N * K];
	static uint8_t q4k[N * K / 256 * 144];
	static const float uniform[M] = {0.1f, 0.5f, 0.9f, 0.3f};
	int32_t ids[8] = {0, 3, 5, 1, 63, 2, 7, 9}, pos[T] = {0, 1, 2, 3};
	gllmk_options o = {.struct_size = sizeof(o), .flags = GLLMK_OPEN_NO_ENV, .plugins = plugin,
			   .plugin_dir = plugin_dir, .n_threads = 2};
	gllmk_context *ctx = NULL;
	gllmk_buffer *b[NB] = {0};
	gllmk_sample_params sp = {.temperature = 0.8f, .top_k = 10, .top_p = 0.9f};
	gllmk_softmax_params smp = {.scale = 1.0f, .causal = 1};
	gllmk_rope_params rp = {.mode = GLLMK_ROPE_NORMAL, .theta_base = 10000.0f, .freq_scale = 1.0f};
	gllmk_attention_params ap = {.causal = 1};

	for (int i = 0; i < N * K; i++)
		x[i] = (float)(i % 17) * 0.125f - 1.0f;
	for (size_t i = 0; i < sizeof(q4k); i++) /* d = dmin = 1/16 (f16 0x2c00), the rest any bits */
		q4k[i] = i % 144 < 4 ? (i % 2 ? 0x2c : 0x00) : (uint8_t)(i * 37);
	if (!acceptable("gllmk_open", gllmk_open(&o, &ctx), 1))
		return;
	for (int i = 0; i < NB; i++)
		STEP(gllmk_buffer_alloc(ctx, sizeof(x), &b[i]));
	STEP(gllmk_buffer_write(b[0], 0, x, sizeof(x)));
	STEP(gllmk_buffer_write(b[3], 0, q4k, sizeof(q4k)));
	STEP(gllmk_buffer_write(b[4], 0, ids, sizeof(ids)));
	STEP(gllmk_buffer_write(b[4], 256, pos, sizeof(pos)));
	gllmk_tensor w = TENSOR(b[0], 0, GLLMK_F32, N, K), xin = TENSOR(b[0], 0, GLLMK_F32, M, K);
	gllmk_tensor y = TENSOR(b[1], 0, GLLMK_F32, M, N), wq = TENSOR(b[2], 0, GLLMK_Q8_0, N, K);
	gllmk_tensor wk = TENSOR(b[3], 0, GLLMK_Q4_K, N, K), yn = TENSOR(b[5], 0, GLLMK_F32, M, K);
	STEP(gllmk_matmul(ctx, &y, &xin, &w, NULL));
	STEP(gllmk_quantize(ctx, &wq, &w));
	STEP(gllmk_matmul(ctx, &y, &xin, &wq, NULL));
	STEP(gllmk_matmul(ctx, &y, &xin, &wk, NULL));
	STEP(gllmk_rms_norm(ctx, &yn, &xin, NULL, 1e-5f));
	STEP(gllmk_softmax(ctx, &yn, &yn, NULL, &smp));
	gllmk_tensor q = TENSOR(b[0], 0, GLLMK_F32, T, H, D), qr = TENSOR(b[5], 0, GLLMK_F32, T, H, D);
	gllmk_tensor tpos = TENSOR(b[4], 256, GLLMK_I32, T), att = TENSOR(b[1], 4096, GLLMK_F32, T, H, D);
	STEP(gllmk_rope(ctx, &qr, &q, &tpos, &rp));
	STEP(gllmk_attention(ctx, &att, &qr, &q, &q, NULL, NULL, &ap));
	gllmk_tensor tids = TENSOR(b[4], 0, GLLMK_I32, 8), rows = TENSOR(b[5], 8192, GLLMK_F32, 8, K);
	gllmk_tensor sids = TENSOR(b[4], 512, GLLMK_I32, M);
	STEP(gllmk_get_rows(ctx, &rows, &wk, &tids));
	STEP(gllmk_sample(ctx, &sids, &y, uniform, &sp));
	STEP(gllmk_sync(ctx));
	STEP(gllmk_buffer_read(b[5], 0, out, sizeof(out)));
	n_completed++;
out:
	for (int i = 0; i < NB; i += 2) /* half freed here, half by close */
		gllmk_buffer_free(b[i]);
	gllmk_close(ctx);
}

/* --device: the fault layer, held open so its counters outlive each
 * context's instance (the loader unloads the layer with it). */
static int (*layer_injected)(void);
static long (*layer_live)(void);

static int open_fault_layer(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);

	if (h) {
		layer_injected = (int (*)(void))dlsym(h, "vk_fault_injected");
		layer_live = (long (*)(void))dlsym(h, "vk_fault_live");
	}
	if (!layer_injected || !layer_live) {
		fprintf(stderr, "alloc_fail: cannot use the fault layer %s: %s\n", path, dlerror());
		return 0;
	}
	return 1;
}

/* The sweep over device memory: n-th vkAllocateMemory fails. */
static int device_sweep(void)
{
	char at[32];
	long n;

	for (n = 1;; n++) {
		snprintf(at, sizeof(at), "%ld", n);
		fail_at = n; /* for the messages; the host allocator stays unarmed */
		setenv("GLLMK_VK_FAIL_AT", at, 1);
		sequence();
		if (layer_live()) {
			fprintf(stderr, "alloc_fail: n=%ld: %ld device allocation(s) still live after gllmk_close\n", n,
				layer_live());
			bad = 1;
		}
		if (!layer_injected())
			break;
	}
	if (n == 1) {
		fprintf(stderr, "alloc_fail: no vkAllocateMemory went through the fault layer: was it inserted "
				"(VK_LAYER_PATH, VK_INSTANCE_LAYERS)?\n");
		bad = 1;
	}
	printf("alloc_fail: %s: %ld device allocation points swept (vkAllocateMemory): %d sequences stopped at "
	       "GLLMK_E_NO_MEMORY, %d completed anyway; %s\n",
	       plugin, n - 1, n_no_memory, n_completed - 2, bad ? "FAILED" : "ok");
	return bad;
}

int main(int argc, char **argv)
{
	const char *layer = NULL;
	long n;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--plugin"))
			plugin = argv[i + 1];
		else if (!strcmp(argv[i], "--plugin-dir"))
			plugin_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--device"))
			layer = argv[i + 1];
	}
	if (layer && !open_fault_layer(layer))
		return 1;
	/* Once without failures: what the library keeps for the process (the
	 * loaded plugin's record) is made here, and the sequence must work. */
	sequence();
	if (bad) {
		fprintf(stderr, "alloc_fail: the sequence fails without any injected failure\n");
		return 1;
	}
	if (layer)
		return device_sweep();
	for (n = 1;; n++) {
		fail_at = n;
		atomic_store(&failed_one, 0);
		atomic_store(&n_counted, 0);
		atomic_store(&armed, 1);
		sequence();
		atomic_store(&armed, 0);
		pthread_mutex_lock(&live_lock);
		if (n_live) {
			fprintf(stderr, "alloc_fail: n=%ld: %zu block(s) gllmk allocated are still live after gllmk_close\n",
				n, n_live);
			bad = 1;
			n_live = 0;
		}
		pthread_mutex_unlock(&live_lock);
		if (!atomic_load(&failed_one))
			break; /* the sequence made fewer than n allocations: all swept */
	}
	/* n_completed counts the first run and the last, which failed nothing */
	printf("alloc_fail: %s: %ld allocation points swept: %d sequences stopped at GLLMK_E_NO_MEMORY, "
	       "%d completed anyway; %s\n",
	       plugin, n - 1, n_no_memory, n_completed - 2, bad ? "FAILED" : "ok");
	return bad;
}
