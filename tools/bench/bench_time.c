/* Repetitions and statistics: one warm-up, then timed repetitions until the
 * requested count, stopping early once the time budget is spent and at least
 * BENCH_MIN_REPS ran, so a slow plugin still finishes the default run in
 * minutes. Every repetition ends with gllmk_sync: the time is the work's.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

#define BENCH_MIN_REPS 3
#define BENCH_BUDGET 4.0       /* seconds of timed repetitions per benchmark */
#define BENCH_SMOKE_BUDGET 0.2

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	if (n < 1)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

gllmk_status bench_time(const struct bench *b, bench_call_fn fn, void *arg, struct bench_stats *st)
{
	int want = b->opt->reps, least = want < BENCH_MIN_REPS ? want : BENCH_MIN_REPS;
	double budget = b->opt->smoke ? BENCH_SMOKE_BUDGET : BENCH_BUDGET;
	double *times = calloc((size_t)want, sizeof(*times)), spent = 0.0;
	gllmk_status s;
	int n = 0;

	if (!times)
		return GLLMK_E_NO_MEMORY;
	s = fn(arg, 0);
	if (s == GLLMK_OK)
		s = gllmk_sync(b->ctx);
	while (s == GLLMK_OK && n < want && (n < least || spent < budget)) {
		double t0 = bench_now();

		s = fn(arg, n + 1);
		if (s == GLLMK_OK)
			s = gllmk_sync(b->ctx);
		times[n] = bench_now() - t0;
		spent += times[n++];
	}
	if (s == GLLMK_OK) {
		st->median = bench_median(times, n);
		st->min = times[0];
		st->max = times[n - 1];
		st->reps = n;
	}
	free(times);
	return s;
}

void bench_rate(struct bench_result *r, const struct bench_stats *st, double work)
{
	r->median = work / st->median;
	r->min = work / st->max;
	r->max = work / st->min;
	r->reps = st->reps;
}
