/* Threads against gllmk, for ThreadSanitizer (build-tsan, -Db_sanitize=thread)
 * and as a plain test everywhere else. SPEC/ABI.md §7 "Threads" is the
 * contract exercised here:
 *
 *   1. N threads start at once (a barrier) and each opens its own context:
 *      the loader's once-init, the plugin list and every plugin's open race;
 *      each runs the same mix of operators (run_mix) and must get the same
 *      bits as the others; each fails a call on purpose and must read its own
 *      message from gllmk_last_error() (thread-local) while the others fail
 *      with theirs.
 *   2. N threads share one context, taking turns under a mutex of the test's
 *      (one context is used by one thread at a time: the caller's job), while
 *      the calls documented as safe on a shared context without a lock
 *      (gllmk_context_plugin, gllmk_context_report, the dtype queries) run
 *      all the time.
 *
 * With LD_PRELOAD=libgllmk-debug.so GLLMK_DEBUG=trace,stats (meson test
 * tsan-debug-*) the debug layer wraps every context, its reference context
 * included.
 *
 *   tsan_threads --plugin NAME --plugin-dir DIR [--threads N] [--rounds N]
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gllmk.h"

static const char *plugin = "cpu-generic", *plugin_dir;
static int n_threads = 4, rounds = 3;
static pthread_barrier_t start;
static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

#define FAIL(...)                                              \
	do {                                                   \
		pthread_mutex_lock(&failures_lock);            \
		failures++;                                    \
		fprintf(stderr, "tsan_threads: " __VA_ARGS__); \
		fprintf(stderr, "\n");                         \
		pthread_mutex_unlock(&failures_lock);          \
	} while (0)

#define CALL(expr)                                                                         \
	do {                                                                               \
		gllmk_status st_ = (expr);                                                 \
		if (st_ != GLLMK_OK) {                                                     \
			FAIL("%s: %s (%s)", #expr, gllmk_status_string(st_), gllmk_last_error()); \
			return 0;                                                          \
		}                                                                          \
	} while (0)

static gllmk_context *open_ctx(void)
{
	gllmk_options o = {.struct_size = sizeof(o), .flags = GLLMK_OPEN_NO_ENV, .plugins = plugin,
			   .plugin_dir = plugin_dir, .n_threads = 2};
	gllmk_context *ctx = NULL;
	gllmk_status st = gllmk_open(&o, &ctx);

	if (st != GLLMK_OK)
		FAIL("gllmk_open(%s): %s (%s)", plugin, gllmk_status_string(st), gllmk_last_error());
	return st == GLLMK_OK ? ctx : NULL;
}

static uint64_t hash(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211u;
	return h;
}

/* Sizes big enough that the CPU plugins split the work over their pool. */
enum { M = 8, K = 256, N = 96, T = 4, H = 4, D = 64, V = 64 };

#define TENSOR(buf, off, dt, ...) gllmk_tensor_make(buf, off, dt, sizeof((int64_t[]){__VA_ARGS__}) / 8, (int64_t[]){__VA_ARGS__})

/* A deterministic mix of operators on ctx; the hash of every output, 0 on a
 * failure (reported). */
static uint64_t run_mix(gllmk_context *ctx)
{
	static _Thread_local float x[N * K], out[N * K]; /* per thread: the test shares nothing */
	static const float uniform[M] = {0.1f, 0.5f, 0.9f, 0.3f, 0.7f, 0.2f, 0.6f, 0.8f};
	int32_t ids[V] = {0}, pos[T];
	gllmk_buffer *b[8] = {0};
	uint64_t h = 14695981039346656037u, row;
	gllmk_sample_params sp = {.temperature = 0.8f, .top_k = 20, .top_p = 0.9f};
	gllmk_softmax_params smp = {.scale = 0.5f, .causal = 1};
	gllmk_rope_params rp = {.mode = GLLMK_ROPE_NEOX, .theta_base = 10000.0f, .freq_scale = 1.0f};
	gllmk_attention_params ap = {.causal = 1};

	for (int i = 0; i < N * K; i++)
		x[i] = sinf((float)i * 0.37f);
	for (int i = 0; i < V; i++)
		ids[i] = (i * 7) % N;
	for (int i = 0; i < T; i++)
		pos[i] = i + 3;
	memset(out, 0, sizeof(out));
	for (int i = 0; i < 8; i++) {
		CALL(gllmk_buffer_alloc(ctx, N * K * 4, &b[i]));
		CALL(gllmk_buffer_write(b[i], 0, out, sizeof(out))); /* what no op writes hashes the same */
	}
	CALL(gllmk_buffer_write(b[0], 0, x, sizeof(x)));
	CALL(gllmk_buffer_write(b[6], 0, ids, sizeof(ids)));
	CALL(gllmk_buffer_write(b[6], 1024, pos, sizeof(pos)));

	gllmk_tensor w = TENSOR(b[0], 0, GLLMK_F32, N, K), xin = TENSOR(b[0], 0, GLLMK_F32, M, K);
	gllmk_tensor y = TENSOR(b[1], 0, GLLMK_F32, M, N), wq = TENSOR(b[2], 0, GLLMK_Q8_0, N, K);
	gllmk_tensor y2 = TENSOR(b[3], 0, GLLMK_F32, M, N), y3 = TENSOR(b[4], 0, GLLMK_F32, M, K);
	CALL(gllmk_matmul(ctx, &y, &xin, &w, NULL));
	CALL(gllmk_quantize(ctx, &wq, &w));
	CALL(gllmk_matmul(ctx, &y2, &xin, &wq, NULL));
	CALL(gllmk_rms_norm(ctx, &y3, &xin, NULL, 1e-5f));
	CALL(gllmk_softmax(ctx, &y2, &y2, NULL, &smp));
	gllmk_tensor q = TENSOR(b[0], 0, GLLMK_F32, T, H, D), qr = TENSOR(b[5], 0, GLLMK_F32, T, H, D);
	gllmk_tensor tpos = TENSOR(b[6], 1024, GLLMK_I32, T), att = TENSOR(b[7], 0, GLLMK_F32, T, H, D);
	gllmk_tensor kv = TENSOR(b[0], 8192, GLLMK_F32, T, H / 2, D);
	CALL(gllmk_rope(ctx, &qr, &q, &tpos, &rp));
	CALL(gllmk_attention(ctx, &att, &qr, &kv, &kv, NULL, NULL, &ap));
	gllmk_tensor tids = TENSOR(b[6], 0, GLLMK_I32, V), rows = TENSOR(b[5], 16384, GLLMK_F32, V, K);
	gllmk_tensor sids = TENSOR(b[6], 2048, GLLMK_I32, M);
	CALL(gllmk_get_rows(ctx, &rows, &wq, &tids));
	CALL(gllmk_sample(ctx, &sids, &y, uniform, &sp));
	CALL(gllmk_sync(ctx));
	for (int i = 1; i < 8; i++) {
		CALL(gllmk_buffer_read(b[i], 0, out, sizeof(out)));
		h = hash(h, out, sizeof(out));
	}
	row = h;
	for (int i = 0; i < 8; i++)
		gllmk_buffer_free(b[i]);
	return row ? row : 1;
}

/* Fails on purpose with a message naming this thread's offset, then checks
 * that the thread reads its own message while the others fail with theirs. */
static void own_error(gllmk_context *ctx, int id)
{
	char want[64];
	gllmk_buffer *b;
	float dst[1];
	uint64_t off = 1000 + (uint64_t)id;

	if (gllmk_buffer_alloc(ctx, 4, &b) != GLLMK_OK) {
		FAIL("thread %d: buffer_alloc(4): %s", id, gllmk_last_error());
		return;
	}
	if (gllmk_buffer_read(b, off, dst, 4) == GLLMK_OK)
		FAIL("thread %d: a read at %llu of a 4-byte buffer did not fail", id, (unsigned long long)off);
	snprintf(want, sizeof(want), "%llu", (unsigned long long)off);
	if (!strstr(gllmk_last_error(), want))
		FAIL("thread %d: gllmk_last_error() = \"%s\", not its own (%s)", id, gllmk_last_error(), want);
	gllmk_buffer_free(b);
}

static uint64_t results[64];

static void *own_context(void *arg)
{
	int id = (int)(intptr_t)arg;
	gllmk_context *ctx;

	pthread_barrier_wait(&start);
	ctx = open_ctx();
	if (!ctx)
		return NULL;
	for (int r = 0; r < rounds; r++) {
		uint64_t h = run_mix(ctx);

		if (r == 0)
			results[id] = h;
		else if (h != results[id])
			FAIL("thread %d: round %d gave other bits than round 0", id, r);
		own_error(ctx, id);
	}
	gllmk_close(ctx);
	return NULL;
}

static gllmk_context *shared;
static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

static void *shared_context(void *arg)
{
	int id = (int)(intptr_t)arg;

	pthread_barrier_wait(&start);
	for (int r = 0; r < rounds; r++) {
		uint64_t h;

		/* documented as safe without the lock */
		if (strcmp(gllmk_context_plugin(shared), plugin) || !gllmk_context_report(shared)->count)
			FAIL("thread %d: gllmk_context_plugin/report on the shared context", id);
		pthread_mutex_lock(&turn);
		h = run_mix(shared);
		pthread_mutex_unlock(&turn);
		if (h != results[0])
			FAIL("thread %d: the shared context gave other bits than a context of its own", id);
		pthread_mutex_lock(&turn);
		own_error(shared, id);
		pthread_mutex_unlock(&turn);
	}
	return NULL;
}

static void run_threads(void *(*fn)(void *))
{
	pthread_t t[64];

	pthread_barrier_init(&start, NULL, (unsigned)n_threads);
	for (int i = 0; i < n_threads; i++)
		pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i);
	for (int i = 0; i < n_threads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
}

int main(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--plugin"))
			plugin = argv[i + 1];
		else if (!strcmp(argv[i], "--plugin-dir"))
			plugin_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--threads"))
			n_threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
	}
	if (n_threads < 1 || n_threads > 64)
		n_threads = 4;

	run_threads(own_context);
	for (int i = 1; i < n_threads; i++)
		if (results[i] != results[0])
			FAIL("threads 0 and %d: their own contexts gave other bits", i);
	printf("tsan_threads: %d threads, a context each, on %s: %s\n", n_threads, plugin, failures ? "FAILED" : "ok");

	shared = open_ctx();
	if (shared) {
		run_threads(shared_context);
		gllmk_close(shared);
	}
	printf("tsan_threads: %d threads sharing a context on %s: %s\n", n_threads, plugin, failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
