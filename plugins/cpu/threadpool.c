/* The CPU plugins' thread pool (threadpool.h).
 *
 * One job at a time. A job is published through one 64-bit ticket:
 * generation in the high half, the next unclaimed chunk in the low half.
 * Workers (and the caller) claim chunks with a compare-and-swap on the
 * ticket, so a worker that wakes late for a finished job claims nothing and
 * can never run a chunk of the next one with stale arguments: the caller
 * closes the ticket (index TICKET_CLOSED) before it rewrites the job.
 * Workers spin briefly after a job (back-to-back ops keep them warm), then
 * park on a condition variable until the next generation.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "threadpool.h"

#define TICKET_CLOSED 0xffffffffu
#define CHUNKS_PER_THREAD 4     /* dynamic balance without much claiming */
#define MAX_CHUNKS (1 << 20)
#define SPIN_BEFORE_PARK 20000  /* polls of the ticket, a few tens of µs */
#define SPIN_BEFORE_YIELD 2000

struct cpu_pool {
	int n_threads;                  /* the caller included */
	pthread_t *workers;             /* n_threads - 1 of them */
	pthread_mutex_t run_lock;       /* one job at a time per pool */

	pthread_mutex_t park_lock;
	pthread_cond_t park;
	atomic_int parked;
	atomic_bool stop;

	_Atomic uint64_t ticket;        /* generation << 32 | next chunk */
	atomic_int_fast64_t chunks_done;
	/* The job: written only while the ticket is closed. */
	_Atomic(cpu_task_fn) fn;
	_Atomic(void *) arg;
	atomic_int_fast64_t n, chunk, n_chunks;
	atomic_int_fast64_t head, head_chunks; /* a streaming job's first chunks: head items each */
};

static inline uint32_t ticket_gen(uint64_t t)
{
	return (uint32_t)(t >> 32);
}

static inline uint32_t ticket_index(uint64_t t)
{
	return (uint32_t)t;
}

/* Claims and runs chunks of the current job until none is left. */
static void run_chunks(struct cpu_pool *pool, int tid)
{
	uint64_t t = atomic_load_explicit(&pool->ticket, memory_order_acquire);

	for (;;) {
		uint32_t i = ticket_index(t);

		if (i == TICKET_CLOSED)
			return;
		/* Read the job before claiming: a successful claim proves
		 * the ticket never moved, so these belong to this job. */
		cpu_task_fn fn = atomic_load_explicit(&pool->fn, memory_order_relaxed);
		void *arg = atomic_load_explicit(&pool->arg, memory_order_relaxed);
		int64_t n = atomic_load_explicit(&pool->n, memory_order_relaxed);
		int64_t chunk = atomic_load_explicit(&pool->chunk, memory_order_relaxed);
		int64_t n_chunks = atomic_load_explicit(&pool->n_chunks, memory_order_relaxed);
		int64_t head = atomic_load_explicit(&pool->head, memory_order_relaxed);
		int64_t head_chunks = atomic_load_explicit(&pool->head_chunks, memory_order_relaxed);

		if (i >= n_chunks)
			return;
		if (!atomic_compare_exchange_weak_explicit(&pool->ticket, &t, t + 1, memory_order_acq_rel,
							   memory_order_acquire))
			continue;
		int64_t begin = i < head_chunks ? (int64_t)i * head : head_chunks * head + (i - head_chunks) * chunk;
		int64_t size = i < head_chunks ? head : chunk;
		int64_t end = begin + size < n ? begin + size : n;

		fn(arg, begin, end, tid);
		atomic_fetch_add_explicit(&pool->chunks_done, 1, memory_order_release);
		t = atomic_load_explicit(&pool->ticket, memory_order_acquire);
	}
}

/* Waits for a generation other than seen: spins a little, then parks. */
static uint32_t wait_for_job(struct cpu_pool *pool, uint32_t seen)
{
	for (int spin = 0; spin < SPIN_BEFORE_PARK; spin++) {
		uint64_t t = atomic_load_explicit(&pool->ticket, memory_order_acquire);

		if (ticket_gen(t) != seen || atomic_load(&pool->stop))
			return ticket_gen(t);
	}
	pthread_mutex_lock(&pool->park_lock);
	atomic_fetch_add(&pool->parked, 1);
	while (ticket_gen(atomic_load(&pool->ticket)) == seen && !atomic_load(&pool->stop))
		pthread_cond_wait(&pool->park, &pool->park_lock);
	atomic_fetch_sub(&pool->parked, 1);
	pthread_mutex_unlock(&pool->park_lock);
	return ticket_gen(atomic_load(&pool->ticket));
}

struct worker_start {
	struct cpu_pool *pool;
	int tid;
};

static void *worker_main(void *p)
{
	struct worker_start *ws = p;
	struct cpu_pool *pool = ws->pool;
	int tid = ws->tid;
	uint32_t seen = 0;

	free(ws);
	for (;;) {
		seen = wait_for_job(pool, seen);
		if (atomic_load(&pool->stop))
			return NULL;
		run_chunks(pool, tid);
	}
}

static void wake_workers(struct cpu_pool *pool)
{
	if (atomic_load(&pool->parked) == 0)
		return;
	pthread_mutex_lock(&pool->park_lock);
	pthread_cond_broadcast(&pool->park);
	pthread_mutex_unlock(&pool->park_lock);
}

static void stop_workers(struct cpu_pool *pool, int started)
{
	atomic_store(&pool->stop, true);
	pthread_mutex_lock(&pool->park_lock);
	pthread_cond_broadcast(&pool->park);
	pthread_mutex_unlock(&pool->park_lock);
	for (int i = 0; i < started; i++)
		pthread_join(pool->workers[i], NULL);
}

static void free_pool(struct cpu_pool *pool)
{
	pthread_cond_destroy(&pool->park);
	pthread_mutex_destroy(&pool->park_lock);
	pthread_mutex_destroy(&pool->run_lock);
	free(pool->workers);
	free(pool);
}

struct cpu_pool *cpu_pool_create(int n_threads)
{
	struct cpu_pool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return NULL;
	pool->n_threads = n_threads > 0 ? n_threads : cpu_physical_cores();
	pool->workers = calloc((size_t)pool->n_threads, sizeof(pthread_t));
	if (!pool->workers) {
		free(pool);
		return NULL;
	}
	pthread_mutex_init(&pool->run_lock, NULL);
	pthread_mutex_init(&pool->park_lock, NULL);
	pthread_cond_init(&pool->park, NULL);
	atomic_store(&pool->ticket, (uint64_t)TICKET_CLOSED);

	for (int i = 0; i < pool->n_threads - 1; i++) {
		struct worker_start *ws = malloc(sizeof(*ws));

		if (ws)
			*ws = (struct worker_start){ .pool = pool, .tid = i + 1 };
		if (!ws || pthread_create(&pool->workers[i], NULL, worker_main, ws) != 0) {
			free(ws);
			stop_workers(pool, i);
			free_pool(pool);
			return NULL;
		}
	}
	return pool;
}

void cpu_pool_destroy(struct cpu_pool *pool)
{
	if (!pool)
		return;
	stop_workers(pool, pool->n_threads - 1);
	free_pool(pool);
}

int cpu_pool_threads(const struct cpu_pool *pool)
{
	return pool ? pool->n_threads : 1;
}

/* Chunks: at most per_thread per thread, each at least grain items. */
static int64_t pick_chunks(int64_t n, int64_t grain, int n_threads, int per_thread)
{
	int64_t by_grain = n / grain;
	int64_t by_threads = (int64_t)n_threads * per_thread;
	int64_t c = by_grain < by_threads ? by_grain : by_threads;

	return c < MAX_CHUNKS ? c : MAX_CHUNKS;
}

static void wait_for_chunks(struct cpu_pool *pool, int64_t n_chunks)
{
	for (int spin = 0;; spin++) {
		if (atomic_load_explicit(&pool->chunks_done, memory_order_acquire) == n_chunks)
			return;
		if (spin >= SPIN_BEFORE_YIELD)
			sched_yield();
	}
}

/* How a job's n items are cut into chunks: head_chunks of head items
 * first, then chunks of chunk items (whole grains, so a kernel's row
 * groups stay whole; no empty chunk at the end). */
struct job_cut {
	int64_t head, head_chunks, chunk, n_chunks;
};

static int64_t round_up(int64_t v, int64_t grain)
{
	return (v + grain - 1) / grain * grain;
}

/* per_thread chunks a thread, claimed dynamically. */
static struct job_cut cut_even(int64_t n, int64_t grain, int n_threads, int per_thread)
{
	int64_t n_chunks = n_threads > 1 ? pick_chunks(n, grain, n_threads, per_thread) : 1;
	int64_t chunk = n_chunks > 1 ? round_up((n + n_chunks - 1) / n_chunks, grain) : n;

	return (struct job_cut){ .chunk = chunk, .n_chunks = (n + chunk - 1) / chunk };
}

/* A streaming job (M = 1 matmuls, read once from DRAM): one long run per
 * thread of 3/4 of the items, so each thread's reads stay one stream,
 * then the last quarter in chunks of 1/8 of a thread's share, claimed by
 * whichever thread is done first: on a host where a thread loses its
 * core for a while, the other takes the tail instead of waiting for it
 * (an even split per thread waited 8-10 % of a decode step, session 23). */
static struct job_cut cut_streaming(int64_t n, int64_t grain, int n_threads)
{
	const int64_t head = (n * 3 / 4 / n_threads) / grain * grain;
	struct job_cut c;

	if (n_threads < 2 || head < grain)
		return cut_even(n, grain, n_threads, 1);
	c.head = head;
	c.head_chunks = n_threads;
	c.chunk = round_up((n - head * n_threads + 2 * n_threads - 1) / (2 * n_threads), grain);
	c.n_chunks = n_threads + (n - head * n_threads + c.chunk - 1) / c.chunk;
	return c;
}

static void run_job(struct cpu_pool *pool, int64_t n, int64_t grain, int streaming, cpu_task_fn fn, void *arg)
{
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	const int n_threads = pool ? pool->n_threads : 1;
	const struct job_cut cut = streaming ? cut_streaming(n, grain, n_threads)
					     : cut_even(n, grain, n_threads, CHUNKS_PER_THREAD);

	if (cut.n_chunks < 2) {
		fn(arg, 0, n, 0);
		return;
	}

	pthread_mutex_lock(&pool->run_lock);
	uint32_t gen = ticket_gen(atomic_load(&pool->ticket)) + 1;

	atomic_store_explicit(&pool->fn, fn, memory_order_relaxed);
	atomic_store_explicit(&pool->arg, arg, memory_order_relaxed);
	atomic_store_explicit(&pool->n, n, memory_order_relaxed);
	atomic_store_explicit(&pool->chunk, cut.chunk, memory_order_relaxed);
	atomic_store_explicit(&pool->n_chunks, cut.n_chunks, memory_order_relaxed);
	atomic_store_explicit(&pool->head, cut.head, memory_order_relaxed);
	atomic_store_explicit(&pool->head_chunks, cut.head_chunks, memory_order_relaxed);
	atomic_store_explicit(&pool->chunks_done, 0, memory_order_relaxed);
	atomic_store(&pool->ticket, (uint64_t)gen << 32); /* seq_cst: pairs with parked */
	wake_workers(pool);

	run_chunks(pool, 0);
	wait_for_chunks(pool, cut.n_chunks);
	/* Close before the next job rewrites the fields (see the top). */
	atomic_store(&pool->ticket, (uint64_t)gen << 32 | TICKET_CLOSED);
	pthread_mutex_unlock(&pool->run_lock);
}

void cpu_pool_run(struct cpu_pool *pool, int64_t n, int64_t grain, cpu_task_fn fn, void *arg)
{
	run_job(pool, n, grain, 0, fn, arg);
}

void cpu_pool_run_streaming(struct cpu_pool *pool, int64_t n, int64_t grain, cpu_task_fn fn, void *arg)
{
	run_job(pool, n, grain, 1, fn, arg);
}

/* Reads one integer from a sysfs file; -1 if it cannot. */
static long read_sysfs_long(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Cores that this process may run on: distinct (package, core) pairs of
 * the CPUs in its affinity mask, as the kernel's topology reports them. */
int cpu_physical_cores(void)
{
	cpu_set_t set;
	long seen[CPU_SETSIZE][2];
	int n_cores = 0, n_cpus;

	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		return n > 0 ? (int)n : 1;
	}
	n_cpus = CPU_COUNT(&set);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		char path[96];
		long core, pkg;
		int dup = 0;

		if (!CPU_ISSET(cpu, &set))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
		core = read_sysfs_long(path);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
		pkg = read_sysfs_long(path);
		if (core < 0 || pkg < 0)
			return n_cpus > 0 ? n_cpus : 1; /* no topology: count CPUs */
		for (int i = 0; i < n_cores && !dup; i++)
			dup = seen[i][0] == pkg && seen[i][1] == core;
		if (!dup) {
			seen[n_cores][0] = pkg;
			seen[n_cores][1] = core;
			n_cores++;
		}
	}
	return n_cores > 0 ? n_cores : 1;
}
