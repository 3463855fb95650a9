/* Helpers of the conformance harness beyond harness.h (which is frozen):
 * what the suite's own test files need and main.c's bookkeeping. Every
 * function here is implemented in harness.c.
 */
#ifndef GLLMK_CONF_EXTRA_H
#define GLLMK_CONF_EXTRA_H

#include <stdio.h>

#include "harness.h"

/* Tolerances shared by several test files (SPEC/TOLERANCES.md). */
#define CONF_TOL_ROUNDED 0x1p-24 /* a correctly rounded f32 result: half an ulp, relative */
#define CONF_TOL_TRANSC 0x1p-18  /* exp, tanh, erf and what is built on them: 32 ulp, relative */
/* Relative error of a row reduced over n elements in f32 (norms, softmax):
 * a few roundings of the final formula, 2^-21, plus a sum whose error grows
 * as sqrt(n), 2^-23·sqrt(n). */
double conf_reduce_tol(int64_t n);

/* How many of conf_lengths a test walks: all of them, or all but the largest
 * with conf.quick (harness.h's conf_lengths_count is a constant, so the quick
 * cut-off has to be asked for at run time). */
size_t conf_lengths_active(void);

/* malloc that fails the test instead of returning NULL. */
void *conf_xmalloc(size_t bytes);

/* Element-wise with one tolerance per element: |got - want| <= tol[i]; got
 * NaN only where want is NaN, infinities must match exactly. For
 * references whose error bound depends on the element (rope's angle). */
void conf_check_within(const char *what, const float *got, const double *want, const double *tol, size_t n);

/* An input view inside a larger buffer: the view starts `lead` bytes in and
 * its rows sit `row_pad` bytes apart beyond their length; every byte outside
 * the rows is poison, so reading past a row or ignoring a stride shows up as
 * NaN in the result. lead and row_pad are rounded up to 4. */
struct conf_tensor conf_upload_strided(gllmk_dtype dt, int32_t ndim, const int64_t *shape, const void *host,
				       int64_t lead, int64_t row_pad);

/* Overwrites the whole buffer of t with one byte value (a non-NaN prefill,
 * for outputs whose expected value is itself NaN). */
void conf_fill_bytes(struct conf_tensor *t, uint8_t byte);

/* Elements of a shape. */
size_t conf_numel(int32_t ndim, const int64_t *shape);
/* "[3,4097]" into buf (a label for messages); returns buf. */
char *conf_shape_str(char *buf, size_t len, int32_t ndim, const int64_t *shape);

/* The matmul cases of test_matmul.c, and matmul_id's and matmul_batched's
 * of test_matmul_id.c, for weights of dtype wdt on conf.ctx (test_bf16_act.c
 * runs them on a second context). */
void conf_matmul_dtype(gllmk_dtype wdt);
void conf_expert_dtype(gllmk_dtype wdt);
/* A product's output y (n elements, `independent` of them not copies of
 * one another) read back into got and checked as matmul's are
 * (test_matmul.c): each element within its ref_matmul bound, norm-wise from
 * 64 independent elements, a padded y's padding untouched. */
void conf_check_product(const char *what, const struct conf_tensor *y, float *got, const double *want,
			const double *bound, size_t n, size_t independent, gllmk_dtype wdt);

/* Fails the current test after printing a formatted line. */
void conf_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define conf_fail(...) conf_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* Coverage for main: prints the ops not covered (named but some test failed
 * or never finished, or never named) and returns how many are covered. */
int conf_coverage_report(FILE *out);
int conf_coverage_total(void);

#endif
