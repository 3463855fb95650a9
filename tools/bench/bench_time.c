/* Repetitions and statistics: one warm-up, then timed repetitions until the
 * requested count, stopping early once the time budget is spent and at least
 * BENCH_MIN_REPS ran, so a slow plugin still finishes the default run in
 * minutes. Every repetition ends with gllmk_sync: the time is the work's.
 *
 * A repetition is at least BENCH_REP_SECONDS of calls: a call shorter than
 * that (from the warm-up's time) runs several times in a row, each with the
 * next rep index (the rotating benchmarks read the next slice), and the
 * repetition's time is their mean. One timed call of 30 µs moved by ±30 %
 * between repetitions on a shared 2-vCPU host (a thread's wake-up, another
 * tenant), enough to flip a prepared / plain comparison (BENCHMARKS.md,
 * sessions 25-26).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

#define BENCH_MIN_REPS 3
#define BENCH_BUDGET 4.0       /* seconds of timed repetitions per benchmark */
#define BENCH_SMOKE_BUDGET 0.2
#define BENCH_REP_SECONDS 1e-3
#define BENCH_CALLS_MAX 64     /* calls a repetition at most */

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

/* Calls a repetition makes, from one call's time (the warm-up's). */
static int calls_per_rep(double call)
{
	double n = call > 0.0 ? ceil(BENCH_REP_SECONDS / call) : BENCH_CALLS_MAX;

	return n < 1.0 ? 1 : n > BENCH_CALLS_MAX ? BENCH_CALLS_MAX : (int)n;
}

/* One repetition: calls calls from index *next on, then a sync; the mean
 * seconds a call at *seconds. */
static gllmk_status time_rep(const struct bench *b, bench_call_fn fn, void *arg, int calls, int *next,
			     double *seconds)
{
	const double t0 = bench_now();
	gllmk_status s = GLLMK_OK;

	for (int i = 0; i < calls && s == GLLMK_OK; i++)
		s = fn(arg, (*next)++);
	if (s == GLLMK_OK)
		s = gllmk_sync(b->ctx);
	*seconds = (bench_now() - t0) / calls;
	return s;
}

gllmk_status bench_time(const struct bench *b, bench_call_fn fn, void *arg, struct bench_stats *st)
{
	int want = b->opt->reps, least = want < BENCH_MIN_REPS ? want : BENCH_MIN_REPS;
	double budget = b->opt->smoke ? BENCH_SMOKE_BUDGET : BENCH_BUDGET;
	double *times = calloc((size_t)want, sizeof(*times)), spent = 0.0, warm = 0.0;
	int n = 0, next = 0, calls;
	gllmk_status s;

	if (!times)
		return GLLMK_E_NO_MEMORY;
	s = time_rep(b, fn, arg, 1, &next, &warm);
	calls = calls_per_rep(warm);
	while (s == GLLMK_OK && n < want && (n < least || spent < budget)) {
		s = time_rep(b, fn, arg, calls, &next, &times[n]);
		spent += times[n++] * calls;
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
