/* The machine's limits, measured at start: the f32 FMA peak (one thread and
 * all threads) and the DRAM read bandwidth (one thread and all threads) over
 * a buffer of at least 256 MiB and twice the last-level cache, so no cache
 * serves it. Each figure is the best of a few runs: a limit is what the
 * hardware can do, and anything else running on the machine only lowers it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define LIMIT_REPS 5
#define PEAK_SECONDS 0.15       /* per run, after calibration */
#define DRAM_MIN_MiB 256
#define SMOKE_DRAM_MiB 8
#define SMOKE_PEAK_SECONDS 0.005

struct worker {
	const struct bench_simd *simd;
	pthread_barrier_t *start;
	uint64_t iters;         /* FMA rounds; 0 for a read */
	const char *base;       /* this worker's share of the buffer */
	size_t bytes;
	double work;            /* flops done, or the read's checksum */
};

static void worker_run(struct worker *w)
{
	if (w->iters)
		w->work = w->simd->fma_chain(w->iters);
	else
		w->work = (double)w->simd->read_sum(w->base, w->bytes);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->start);
	worker_run(w);
	return NULL;
}

/* Runs the workers together (the caller is worker 0); returns seconds. */
static double run_workers(struct worker *w, int n)
{
	pthread_t tid[n];
	pthread_barrier_t start;
	double t0, t1;

	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		w[i].start = &start;
	for (int i = 1; i < n; i++) {
		if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0) {
			/* The ones started wait at the barrier forever: give up. */
			fprintf(stderr, "gllmk-bench: cannot start %d threads\n", n);
			exit(1);
		}
	}
	pthread_barrier_wait(&start);
	t0 = bench_now();
	worker_run(&w[0]);
	for (int i = 1; i < n; i++)
		pthread_join(tid[i], NULL);
	t1 = bench_now();
	pthread_barrier_destroy(&start);
	return t1 - t0;
}

static double best_of(const double *v, int n)
{
	double best = v[0];

	for (int i = 1; i < n; i++)
		best = v[i] > best ? v[i] : best;
	return best;
}

/* GFLOP/s of n threads each running iters rounds. */
static double peak_once(const struct bench_simd *simd, int n, uint64_t iters)
{
	struct worker w[n];
	double secs, flops = 0.0;

	for (int i = 0; i < n; i++)
		w[i] = (struct worker){ .simd = simd, .iters = iters };
	secs = run_workers(w, n);
	for (int i = 0; i < n; i++)
		flops += w[i].work;
	return flops / secs / 1e9;
}

static double measure_peak(const struct bench_simd *simd, int n, double seconds)
{
	double gflops[LIMIT_REPS];
	uint64_t iters = 1u << 16;

	/* Calibrate on one thread: rounds for the wanted duration. */
	double rate = peak_once(simd, 1, iters) * 1e9 / simd->fma_chain(1);

	iters = (uint64_t)(rate * seconds) + 1;
	for (int r = 0; r < LIMIT_REPS; r++)
		gflops[r] = peak_once(simd, n, iters);
	return best_of(gflops, LIMIT_REPS);
}

/* GB/s of n threads reading their share of buf. */
static double measure_read(const struct bench_simd *simd, int n, const char *buf, size_t bytes)
{
	double gbs[LIMIT_REPS];
	size_t share = bytes / (size_t)n / 256 * 256;
	struct worker w[n];
	double sink = 0.0;

	for (int r = 0; r < LIMIT_REPS; r++) {
		for (int i = 0; i < n; i++)
			w[i] = (struct worker){ .simd = simd, .base = buf + (size_t)i * share, .bytes = share };
		gbs[r] = (double)share * n / run_workers(w, n) / 1e9;
		for (int i = 0; i < n; i++)
			sink += w[i].work;
	}
	__asm__ volatile("" : : "r"(&sink) : "memory");
	return best_of(gbs, LIMIT_REPS);
}

/* Cores, not hardware threads: distinct (package, core) pairs in sysfs. */
int bench_physical_cores(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int cores = 0;
	long seen[1024][2];

	if (cpus < 1)
		return 1;
	for (long c = 0; c < cpus && c < 1024; c++) {
		char path[128];
		long id[2] = { -1, -1 };
		const char *leaf[2] = { "physical_package_id", "core_id" };
		int dup = 0;

		for (int k = 0; k < 2; k++) {
			FILE *f;

			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/topology/%s", c, leaf[k]);
			f = fopen(path, "r");
			if (!f || fscanf(f, "%ld", &id[k]) != 1)
				id[k] = -1;
			if (f)
				fclose(f);
		}
		if (id[1] < 0)
			return (int)cpus; /* no topology: count what runs */
		for (int i = 0; i < cores && !dup; i++)
			dup = seen[i][0] == id[0] && seen[i][1] == id[1];
		if (!dup) {
			seen[cores][0] = id[0];
			seen[cores][1] = id[1];
			cores++;
		}
	}
	return cores > 0 ? cores : 1;
}

uint64_t bench_llc_bytes(void)
{
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	if (l3 > 0)
		return (uint64_t)l3;
	return l2 > 0 ? (uint64_t)l2 : 0;
}

static void cpu_model(char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(out, len, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && !strncmp(line, "model name", 10)) {
			colon += 1 + strspn(colon + 1, " \t");
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(out, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

/* Others' work on the machine lowers every figure: say how much there was. */
static double load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double avg = -1.0;

	if (f) {
		if (fscanf(f, "%lf", &avg) != 1)
			avg = -1.0;
		fclose(f);
	}
	return avg;
}

int bench_measure_limits(struct bench_limits *lim, int threads, bool smoke)
{
	const struct bench_simd *simd = bench_simd_select();
	double seconds = smoke ? SMOKE_PEAK_SECONDS : PEAK_SECONDS;
	uint64_t llc = bench_llc_bytes();
	size_t bytes = (size_t)DRAM_MIN_MiB << 20;
	char *buf;

	if (smoke)
		bytes = (size_t)SMOKE_DRAM_MiB << 20;
	else if (2 * llc > bytes)
		bytes = (size_t)((2 * llc + (1u << 20) - 1) >> 20) << 20;
	*lim = (struct bench_limits){
		.isa = simd->isa,
		.threads = threads,
		.dram_mib = (double)bytes / BENCH_MiB,
		.llc_bytes = llc,
	};
	cpu_model(lim->cpu, sizeof(lim->cpu));
	lim->loadavg = load_average();
	lim->peak_1t = measure_peak(simd, 1, seconds);
	lim->peak = threads > 1 ? measure_peak(simd, threads, seconds) : lim->peak_1t;

	buf = aligned_alloc(4096, bytes);
	if (!buf)
		return -1;
	memset(buf, 1, bytes); /* fault every page in before timing */
	lim->dram_1t = measure_read(simd, 1, buf, bytes);
	lim->dram = threads > 1 ? measure_read(simd, threads, buf, bytes) : lim->dram_1t;
	free(buf);
	return 0;
}
