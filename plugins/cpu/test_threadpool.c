/* The pool's chunking (threadpool.c): cpu_pool_run and
 * cpu_pool_run_streaming hand every item of [0, n) to exactly one task
 * call, cut on whole grains (every chunk but the last starts and ends on
 * a multiple of grain), for n and grain of every shape (1, 7, 33, 4097 ..)
 * and 1 to 4 threads; and run jobs back to back on one pool. The tasks
 * record their items with atomics, so a chunk run twice or never shows.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "threadpool.h"

struct visit {
	atomic_int *count; /* per item: the calls that covered it */
	int64_t n, grain;
	atomic_int bad_cut;
};

static void visit_task(void *arg, int64_t begin, int64_t end, int tid)
{
	struct visit *v = arg;

	(void)tid;
	if (begin % v->grain || (end != v->n && end % v->grain) || begin >= end || end > v->n)
		atomic_fetch_add(&v->bad_cut, 1);
	for (int64_t i = begin; i < end && i < v->n; i++)
		atomic_fetch_add(&v->count[i], 1);
}

/* 0 if every item was visited once and every cut was on a grain. */
static int check(struct cpu_pool *pool, int64_t n, int64_t grain, int streaming)
{
	struct visit v = { .count = calloc((size_t)n, sizeof(atomic_int)), .n = n, .grain = grain };
	int bad = 0;

	if (!v.count)
		abort();
	if (streaming)
		cpu_pool_run_streaming(pool, n, grain, visit_task, &v);
	else
		cpu_pool_run(pool, n, grain, visit_task, &v);
	for (int64_t i = 0; i < n; i++)
		if (atomic_load(&v.count[i]) != 1) {
			printf("FAIL %s n=%lld grain=%lld threads=%d: item %lld visited %d times\n",
			       streaming ? "streaming" : "run", (long long)n, (long long)grain, cpu_pool_threads(pool),
			       (long long)i, atomic_load(&v.count[i]));
			bad = 1;
			break;
		}
	if (atomic_load(&v.bad_cut)) {
		printf("FAIL %s n=%lld grain=%lld threads=%d: %d chunks not on whole grains\n",
		       streaming ? "streaming" : "run", (long long)n, (long long)grain, cpu_pool_threads(pool),
		       atomic_load(&v.bad_cut));
		bad = 1;
	}
	free(v.count);
	return bad;
}

int main(void)
{
	static const int64_t ns[] = { 1, 2, 7, 8, 33, 64, 255, 256, 1024, 4097, 100000 };
	static const int64_t grains[] = { 1, 3, 8, 64 };
	int failed = 0, ran = 0;

	for (int threads = 1; threads <= 4; threads++) {
		struct cpu_pool *pool = cpu_pool_create(threads);

		if (!pool) {
			printf("FAIL cpu_pool_create(%d)\n", threads);
			return 1;
		}
		for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
			for (size_t g = 0; g < sizeof(grains) / sizeof(grains[0]); g++)
				for (int streaming = 0; streaming < 2; streaming++) {
					failed += check(pool, ns[i], grains[g], streaming);
					ran++;
				}
		cpu_pool_destroy(pool);
	}
	printf("threadpool: %d of %d jobs visited every item once, on whole grains\n", ran - failed, ran);
	return failed != 0;
}
