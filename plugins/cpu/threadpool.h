/* A thread pool that stays warm between calls: workers are created once per
 * context and park on a condition variable between jobs (no spinning while
 * idle, no thread creation per call). The calling thread takes part. */
#ifndef GLLMK_CPU_THREADPOOL_H
#define GLLMK_CPU_THREADPOOL_H

#include <stdint.h>

struct cpu_pool;

/* fn handles items [begin, end) on worker tid (0 = the caller). */
typedef void (*cpu_task_fn)(void *arg, int64_t begin, int64_t end, int tid);

/* n_threads counts the caller; 0 picks cpu_physical_cores(). NULL on failure. */
struct cpu_pool *cpu_pool_create(int n_threads);
void cpu_pool_destroy(struct cpu_pool *pool);
int cpu_pool_threads(const struct cpu_pool *pool);

/* Runs fn over [0, n) split into chunks of at least `grain` items, and
 * returns when every chunk is done. With n small (or one thread) it calls fn
 * inline. Not reentrant: a task must not call cpu_pool_run on the same pool. */
void cpu_pool_run(struct cpu_pool *pool, int64_t n, int64_t grain, cpu_task_fn fn, void *arg);
/* As cpu_pool_run for jobs that stream their data once with kernels
 * prefetching ahead in their range (M = 1 matmul): one contiguous range
 * per thread of 3/4 of the items (whole grains), since every extra chunk
 * restarts the prefetch at its head and sends its tail's prefetches into
 * rows another thread reads (a Q4_K_M decode step 5 % slower on Zen 4 with
 * 4 chunks a thread, BENCHMARKS.md "Session 9"); the last quarter in
 * small chunks, taken by whichever thread is free first. The int8 GEMM
 * splits its columns so too: long runs keep its packed blocks' reuse, the
 * tail evens out threads that run at different speeds. */
void cpu_pool_run_streaming(struct cpu_pool *pool, int64_t n, int64_t grain, cpu_task_fn fn, void *arg);

/* Physical cores of this machine (hyperthreads not counted), at least 1. */
int cpu_physical_cores(void);

#endif
