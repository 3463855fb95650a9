/* The conformance suite's harness: one context on the plugin under test,
 * seeded random inputs, device tensors poisoned before each call, and
 * comparisons against double-precision references with stated tolerances.
 *
 * Every test file contributes an array of cmocka tests (CONF_GROUP below);
 * main.c runs them all once per plugin named on the command line:
 *   gllmk-conformance --plugin NAME --plugin-dir DIR [--vectors DIR] [--seed N] [--quick]
 */
#ifndef GLLMK_CONF_HARNESS_H
#define GLLMK_CONF_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gllmk.h"

/* --------------------------------------------------------------- the run */

struct conf_run {
	gllmk_context *ctx;
	const char *plugin;      /* name under test */
	const char *vectors_dir; /* ggml vectors folder, or NULL when absent */
	const char *plugin_dir;  /* where it was loaded from (a second context: test_bf16_act.c) */
	uint64_t seed;
	int quick;               /* smaller shapes (emulators, sanitizers) */
	/* conf.ctx permits bf16 activations (GLLMK_OPEN_BF16_ACTIVATIONS):
	 * ref_matmul's bounds for bf16 weights are the looser ones then. */
	int bf16_act;
};
extern struct conf_run conf; /* filled by main before any test runs */

/* ---------------------------------------------------------------- random */

/* A fresh, reproducible stream per test case: seeded from conf.seed and the
 * case's name, so one failing case can be rerun alone. */
struct conf_rng {
	uint64_t s[2];
};
void conf_rng_init(struct conf_rng *r, const char *case_name);
uint64_t conf_rng_u64(struct conf_rng *r);
double conf_rng_uniform(struct conf_rng *r, double lo, double hi);   /* [lo, hi) */
int64_t conf_rng_int(struct conf_rng *r, int64_t lo, int64_t hi);    /* [lo, hi] */
void conf_fill_uniform(struct conf_rng *r, float *x, size_t n, double lo, double hi);

/* ------------------------------------------------------- device tensors */

/* A buffer holding exactly one contiguous tensor (offset 0), or a view with
 * padding when made by conf_tensor_padded. */
struct conf_tensor {
	gllmk_buffer *buf;
	gllmk_tensor t;
	uint64_t bytes; /* of the tensor's data */
};

/* Allocates and uploads `host` (contiguous, dtype's layout). */
struct conf_tensor conf_upload(gllmk_dtype dt, int32_t ndim, const int64_t *shape, const void *host);
/* The same, but the data arrives by a device-side copy (gllmk_buffer_copy)
 * from a second upload, *src, which the caller frees with the result: on a
 * GPU plugin the copy is still pending when the next op is recorded, so
 * index data made so can only be checked on the device. */
struct conf_tensor conf_upload_by_copy(gllmk_dtype dt, int32_t ndim, const int64_t *shape, const void *host,
				       struct conf_tensor *src);
/* Allocates an output and poisons it: f32 with NaN, f16/bf16 with NaN, i32
 * with INT32_MIN, block dtypes with 0xFF bytes. */
struct conf_tensor conf_output(gllmk_dtype dt, int32_t ndim, const int64_t *shape);
/* An output whose rows sit `row_pad` bytes apart beyond their length, in a
 * buffer poisoned everywhere: checks that strides are honoured and that
 * nothing is written between rows (conf_check_padding). */
struct conf_tensor conf_output_padded(gllmk_dtype dt, int32_t ndim, const int64_t *shape, int64_t row_pad);
/* Re-poisons an output before reusing it for another call. */
void conf_poison(struct conf_tensor *t);
/* Reads the tensor back contiguously into host (rows gathered by stride). */
void conf_download(const struct conf_tensor *t, void *host);
/* Asserts every padding byte of a conf_output_padded is still poison. */
void conf_check_padding(const struct conf_tensor *t);
void conf_free(struct conf_tensor *t);

/* Asserts st == GLLMK_OK, printing gllmk_last_error() otherwise. */
#define conf_ok(expr) conf_ok_at((expr), #expr, __FILE__, __LINE__)
void conf_ok_at(gllmk_status st, const char *expr, const char *file, int line);

/* ------------------------------------------------------------- checking */

/* Element-wise: |got - want| <= atol + rtol·|want| for every element, and
 * got never NaN unless want is NaN (so an unwritten, poisoned element always
 * fails). Prints the first offenders with their index. */
void conf_check_close(const char *what, const float *got, const double *want, size_t n, double atol,
		      double rtol);
/* Norm-wise: ||got - want||₂ / ||want||₂ <= rtol, all elements finite. */
void conf_check_rel_norm(const char *what, const float *got, const double *want, size_t n, double rtol);
/* Exact equality (ints: ids, quantized bytes). */
void conf_check_equal_i32(const char *what, const int32_t *got, const int32_t *want, size_t n);
void conf_check_equal_bytes(const char *what, const void *got, const void *want, size_t n);

/* ------------------------------------------------- shapes and coverage */

/* The lengths every suite draws from (SPEC/TOLERANCES.md): 1, 7, 33, 4097
 * and sizes crossing the caches; with conf.quick the largest are dropped. */
extern const int64_t conf_lengths[];
extern const size_t conf_lengths_count;

/* Each test names the ABI op it covers before its first check and calls
 * conf_covered(op) when it ends; an op counts as covered when every test
 * that named it got to the end. main prints per plugin:
 *   coverage <plugin>: <ops passed>/<ops in ABI v1> ops   */
void conf_begin(const char *op);
void conf_covered(const char *op);

/* ------------------------------------------------------ per-dtype tests */

/* The dtypes of abi/gllmk_dtypes.def, its one list: a test file never
 * lists dtypes itself. A group entry
 *   CONF_DTYPE_TESTS("matmul", matmul_dtype, conf_weight_dtype)
 * becomes, at run time (main.c), one cmocka test per dtype that keep()
 * accepts, in the .def's order, named <prefix>_<dtype name> (matmul_q4_K)
 * and calling run(dtype). */
struct conf_dtype_tests {
	const char *prefix;
	void (*run)(gllmk_dtype dt);
	int (*keep)(gllmk_dtype dt);
};
/* The entry's test function: main.c expands the entry instead of running it. */
void conf_dtype_tests_entry(void **state);
#define CONF_DTYPE_TESTS(prefix_, run_, keep_)                                                    \
	{ .name = prefix_, .test_func = conf_dtype_tests_entry,                                   \
	  .initial_state = (void *)&(const struct conf_dtype_tests){ prefix_, run_, keep_ } }
/* Expands the group's CONF_DTYPE_TESTS entries: a fresh array (count in
 * *count) to free with conf_free_expanded_tests. */
struct CMUnitTest *conf_expand_dtype_tests(const struct CMUnitTest *tests, size_t n, size_t *count);
void conf_free_expanded_tests(struct CMUnitTest *tests, size_t count);
/* A keep() for CONF_DTYPE_TESTS: the .def's weight dtypes (WEIGHT 1:
 * matmul's w, dequantize's x, get_rows' table). */
int conf_weight_dtype(gllmk_dtype dt);

/* Each test file: `CONF_GROUP(elementwise) = { cmocka_unit_test(...), ... };`
 * and an entry in main.c's group list. */
#define CONF_GROUP(group)                                              \
	extern const struct CMUnitTest conf_group_##group[];           \
	extern const size_t conf_group_##group##_count;                \
	const struct CMUnitTest conf_group_##group[]
#define CONF_GROUP_END(group)                                          \
	const size_t conf_group_##group##_count =                      \
		sizeof(conf_group_##group) / sizeof(conf_group_##group[0])

#endif
