/* The machine's limits, measured at start: the f32 FMA peak (one thread and
 * all threads; the best of a few runs: a limit is what the hardware can do,
 * and anything else running on the machine only lowers it) and the DRAM
 * read bandwidth (one thread and all threads) over a buffer of at least
 * 1 GiB and 8 × the last-level cache, so no cache serves it. The bandwidth
 * is the best of several read kernels (plain loads, software prefetch, two
 * streams per thread, non-temporal loads), each the median of its runs,
 * the runs of the kernels interleaved: no kernel of gllmk should read
 * faster than the best way the machine knows to read.
 *
 * The last-level cache comes from sysfs (glibc's sysconf can be off by 10×
 * under a hypervisor), sysconf only when sysfs has no cache directory.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define LIMIT_REPS 5
#define PEAK_SECONDS 0.15       /* per run, after calibration */
#define DRAM_REPS 7             /* per read kernel; the figure is the median */
#define SMOKE_DRAM_REPS 3
#define DRAM_MIN_MiB 1024
#define DRAM_LLC_TIMES 8
#define DRAM_FLOOR_MiB 256      /* when DRAM_MIN_MiB cannot be had */
#define SMOKE_DRAM_MiB 8
#define SMOKE_PEAK_SECONDS 0.005

struct worker {
	const struct bench_simd *simd;
	uint64_t (*read)(const void *p, size_t bytes);
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
		w->work = (double)w->read(w->base, w->bytes);
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

/* GB/s of n threads each reading its own contiguous share of buf with read. */
static double read_once(uint64_t (*read)(const void *, size_t), int n, const char *buf, size_t bytes, double *sink)
{
	size_t share = bytes / (size_t)n / 256 * 256;
	struct worker w[n];
	double gbs;

	for (int i = 0; i < n; i++)
		w[i] = (struct worker){ .read = read, .base = buf + (size_t)i * share, .bytes = share };
	gbs = (double)share * n / run_workers(w, n) / 1e9;
	for (int i = 0; i < n; i++)
		*sink += w[i].work;
	return gbs;
}

/* Every read kernel on 1 thread and on n, reps times each, the kernels'
 * runs interleaved so a burst of other work hits them all alike. */
static void measure_reads(struct bench_limits *lim, const struct bench_simd *simd, int n, const char *buf,
			  size_t bytes, int reps)
{
	double v1[BENCH_READ_KERNELS][DRAM_REPS], vn[BENCH_READ_KERNELS][DRAM_REPS], sink = 0.0;

	lim->n_reads = simd->n_reads;
	lim->dram_reps = reps;
	for (int r = 0; r < reps; r++) {
		for (int k = 0; k < simd->n_reads; k++) {
			v1[k][r] = read_once(simd->reads[k].read, 1, buf, bytes, &sink);
			vn[k][r] = n > 1 ? read_once(simd->reads[k].read, n, buf, bytes, &sink) : v1[k][r];
		}
	}
	__asm__ volatile("" : : "r"(&sink) : "memory");
	for (int k = 0; k < simd->n_reads; k++) {
		struct bench_read_figure *f = &lim->reads[k];

		f->name = simd->reads[k].name;
		f->best_1t = best_of(v1[k], reps);
		f->best = best_of(vn[k], reps);
		f->gbs_1t = bench_median(v1[k], reps);
		f->gbs = bench_median(vn[k], reps);
		if (f->gbs > lim->dram) {
			lim->dram = f->gbs;
			lim->dram_kernel = f->name;
		}
		if (f->gbs_1t > lim->dram_1t)
			lim->dram_1t = f->gbs_1t;
	}
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

static int read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(out, (int)len, f);

	if (f)
		fclose(f);
	if (!ok)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* "32768K", "1M", "512": bytes; 0 when unreadable. */
static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'K': return (uint64_t)v << 10;
	case 'M': return (uint64_t)v << 20;
	case 'G': return (uint64_t)v << 30;
	default: return end == s ? 0 : (uint64_t)v;
	}
}

#define SYSFS_CPU "/sys/devices/system/cpu"
#define MAX_CACHE_INDEX 32
#define MAX_INSTANCES 64
#define MAX_CPUS 4096

/* The largest unified cache of cpu0 (the higher level on a tie), and how
 * many instances of it the online CPUs share among them. */
void bench_read_llc(struct bench_llc *llc)
{
	char path[160], line[256];
	int best = -1;

	*llc = (struct bench_llc){ .source = "none" };
	for (int i = 0; i < MAX_CACHE_INDEX; i++) {
		uint64_t size;
		int level;

		snprintf(path, sizeof(path), SYSFS_CPU "/cpu0/cache/index%d/type", i);
		if (read_line(path, line, sizeof(line)) || strcmp(line, "Unified"))
			continue;
		snprintf(path, sizeof(path), SYSFS_CPU "/cpu0/cache/index%d/level", i);
		level = read_line(path, line, sizeof(line)) ? 0 : atoi(line);
		snprintf(path, sizeof(path), SYSFS_CPU "/cpu0/cache/index%d/size", i);
		size = read_line(path, line, sizeof(line)) ? 0 : parse_size(line);
		if (size == 0 || size < llc->bytes || (size == llc->bytes && level <= llc->level))
			continue;
		best = i;
		llc->bytes = size;
		llc->level = level;
		llc->source = "sysfs";
	}
	if (best >= 0) {
		char seen[MAX_INSTANCES][256];
		int n = 0;

		snprintf(path, sizeof(path), SYSFS_CPU "/cpu0/cache/index%d/shared_cpu_list", best);
		if (read_line(path, llc->shared, sizeof(llc->shared)))
			snprintf(llc->shared, sizeof(llc->shared), "0");
		/* Online CPUs are not always 0..n-1; an offline or absent
		 * CPU has no cache directory and is skipped. */
		for (long c = 0; c < MAX_CPUS && n < MAX_INSTANCES; c++) {
			int dup = 0;

			snprintf(path, sizeof(path), SYSFS_CPU "/cpu%ld/cache/index%d/shared_cpu_list", c, best);
			if (read_line(path, line, sizeof(line)))
				continue;
			for (int i = 0; i < n && !dup; i++)
				dup = !strcmp(seen[i], line);
			if (!dup)
				snprintf(seen[n++], sizeof(seen[0]), "%s", line);
		}
		llc->instances = n > 0 ? n : 1;
	} else {
		long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

		llc->bytes = l3 > 0 ? (uint64_t)l3 : l2 > 0 ? (uint64_t)l2 : 0;
		llc->level = l3 > 0 ? 3 : l2 > 0 ? 2 : 0;
		llc->instances = 1;
		llc->source = llc->bytes ? "sysconf" : "none";
	}
	llc->total = llc->bytes * (uint64_t)llc->instances;
}

uint64_t bench_llc_bytes(void)
{
	struct bench_llc llc;

	bench_read_llc(&llc);
	return llc.total;
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
	struct bench_llc llc;
	size_t bytes = (size_t)DRAM_MIN_MiB << 20;
	char *buf;

	bench_read_llc(&llc);
	if (smoke)
		bytes = (size_t)SMOKE_DRAM_MiB << 20;
	else if (DRAM_LLC_TIMES * llc.total > bytes)
		bytes = (size_t)((DRAM_LLC_TIMES * llc.total + (1u << 20) - 1) >> 20) << 20;
	*lim = (struct bench_limits){
		.isa = simd->isa,
		.threads = threads,
		.llc_bytes = llc.total,
		.llc = llc,
	};
	cpu_model(lim->cpu, sizeof(lim->cpu));
	lim->loadavg = load_average();
	lim->peak_1t = measure_peak(simd, 1, seconds);
	lim->peak = threads > 1 ? measure_peak(simd, threads, seconds) : lim->peak_1t;

	/* A machine short of memory gets a smaller buffer, down to a floor. On
	 * huge pages, as the CPU plugins' buffers of weights are: the probe
	 * must not read slower than the kernels it is the limit of. */
	bytes = (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	while (!(buf = aligned_alloc(2u << 20, bytes)) && !smoke && bytes / 2 >= (size_t)DRAM_FLOOR_MiB << 20)
		bytes /= 2;
	if (!buf)
		return -1;
#ifdef MADV_HUGEPAGE
	madvise(buf, bytes, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
	lim->dram_mib = (double)bytes / BENCH_MiB;
	memset(buf, 1, bytes); /* fault every page in before timing */
	measure_reads(lim, simd, threads, buf, bytes, smoke ? SMOKE_DRAM_REPS : DRAM_REPS);
	free(buf);
	return 0;
}
