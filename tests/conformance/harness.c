/* The conformance harness (harness.h, conf_extra.h): seeded random streams,
 * device tensors through the public API, poisoning, checks that name their
 * offenders, and per-op coverage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "gllmk_plugin.h" /* GLLMK_OPS: the op list coverage counts against */

struct conf_run conf;

/* ---------------------------------------------------------------- random */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t fnv1a64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

void conf_rng_init(struct conf_rng *r, const char *case_name)
{
	uint64_t x = conf.seed ^ fnv1a64(case_name);

	r->s[0] = splitmix64(&x);
	r->s[1] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoroshiro128** */
uint64_t conf_rng_u64(struct conf_rng *r)
{
	uint64_t s0 = r->s[0], s1 = r->s[1];
	uint64_t out = rotl(s0 * 5, 7) * 9;

	s1 ^= s0;
	r->s[0] = rotl(s0, 24) ^ s1 ^ (s1 << 16);
	r->s[1] = rotl(s1, 37);
	return out;
}

double conf_rng_uniform(struct conf_rng *r, double lo, double hi)
{
	double u = (double)(conf_rng_u64(r) >> 11) * 0x1p-53;

	return lo + (hi - lo) * u;
}

int64_t conf_rng_int(struct conf_rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
	uint64_t x, limit;

	if (span == 0) /* the whole 64-bit range */
		return (int64_t)conf_rng_u64(r);
	/* Rejection keeps every value equally likely. */
	limit = UINT64_MAX - UINT64_MAX % span;
	do
		x = conf_rng_u64(r);
	while (x >= limit);
	return (int64_t)((uint64_t)lo + x % span);
}

void conf_fill_uniform(struct conf_rng *r, float *x, size_t n, double lo, double hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)conf_rng_uniform(r, lo, hi);
}

/* ------------------------------------------------------------ failures */

void conf_fail_at(const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	print_error("%s\n", msg);
	_fail(file, line);
}

void conf_ok_at(gllmk_status st, const char *expr, const char *file, int line)
{
	if (st != GLLMK_OK)
		conf_fail_at(file, line, "%s failed: %s (%s)", expr, gllmk_status_string(st), gllmk_last_error());
}

void *conf_xmalloc(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);

	if (!p)
		conf_fail("out of host memory (%zu bytes)", bytes);
	return p;
}

/* ------------------------------------------------------- device tensors */

size_t conf_numel(int32_t ndim, const int64_t *shape)
{
	size_t n = 1;

	for (int d = 0; d < ndim; d++)
		n *= (size_t)shape[d];
	return n;
}

char *conf_shape_str(char *buf, size_t len, int32_t ndim, const int64_t *shape)
{
	size_t at = 0;

	at += (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < ndim && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, d ? ",%lld" : "%lld", (long long)shape[d]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
	return buf;
}

static int64_t row_count(int32_t ndim, const int64_t *shape)
{
	int64_t rows = 1;

	for (int d = 0; d < ndim - 1; d++)
		rows *= shape[d];
	return rows;
}

static uint64_t row_bytes_of(gllmk_dtype dt, int64_t n)
{
	uint64_t bytes = 0;

	conf_ok(gllmk_dtype_row_bytes(dt, n, &bytes));
	return bytes;
}

static uint64_t round_up4(int64_t x)
{
	return ((uint64_t)x + 3) & ~(uint64_t)3;
}

/* The poison pattern for dtype dt, repeated from the buffer's start: NaN for
 * floats (with payloads no conversion produces), INT32_MIN for ids, 0xFF
 * for quant blocks. */
static void poison_pattern(gllmk_dtype dt, uint8_t *dst, size_t bytes)
{
	uint8_t unit[4];
	size_t unit_len;

	switch (dt) {
	case GLLMK_F32:
		memcpy(unit, &(uint32_t){ 0x7fc5a5a5u }, 4);
		unit_len = 4;
		break;
	case GLLMK_I32:
		memcpy(unit, &(uint32_t){ 0x80000000u }, 4);
		unit_len = 4;
		break;
	case GLLMK_F16:
		memcpy(unit, &(uint16_t){ 0x7e5au }, 2);
		unit_len = 2;
		break;
	case GLLMK_BF16:
		memcpy(unit, &(uint16_t){ 0x7fc5u }, 2);
		unit_len = 2;
		break;
	default:
		unit[0] = 0xff;
		unit_len = 1;
		break;
	}
	for (size_t i = 0; i < bytes; i++)
		dst[i] = unit[i % unit_len];
}

static gllmk_buffer *alloc_buffer(uint64_t size)
{
	gllmk_buffer *buf = NULL;

	conf_ok(gllmk_buffer_alloc(conf.ctx, size, &buf));
	return buf;
}

static void write_poison(gllmk_buffer *buf, gllmk_dtype dt)
{
	uint64_t size = gllmk_buffer_size(buf);
	uint8_t *p = conf_xmalloc(size);

	poison_pattern(dt, p, size);
	conf_ok(gllmk_buffer_write(buf, 0, p, size));
	free(p);
}

struct conf_tensor conf_upload(gllmk_dtype dt, int32_t ndim, const int64_t *shape, const void *host)
{
	struct conf_tensor t = { 0 };

	t.bytes = row_bytes_of(dt, shape[ndim - 1]) * (uint64_t)row_count(ndim, shape);
	t.buf = alloc_buffer(t.bytes);
	conf_ok(gllmk_buffer_write(t.buf, 0, host, t.bytes));
	t.t = gllmk_tensor_make(t.buf, 0, dt, ndim, shape);
	return t;
}

struct conf_tensor conf_upload_by_copy(gllmk_dtype dt, int32_t ndim, const int64_t *shape, const void *host,
				       struct conf_tensor *src)
{
	struct conf_tensor t = conf_output(dt, ndim, shape);

	*src = conf_upload(dt, ndim, shape, host);
	conf_ok(gllmk_buffer_copy(t.buf, 0, src->buf, 0, t.bytes));
	return t;
}

struct conf_tensor conf_output(gllmk_dtype dt, int32_t ndim, const int64_t *shape)
{
	struct conf_tensor t = { 0 };

	t.bytes = row_bytes_of(dt, shape[ndim - 1]) * (uint64_t)row_count(ndim, shape);
	t.buf = alloc_buffer(t.bytes);
	t.t = gllmk_tensor_make(t.buf, 0, dt, ndim, shape);
	conf_poison(&t);
	return t;
}

/* A view whose rows start `lead` bytes into a fresh buffer and sit `pad`
 * bytes apart beyond their length, the buffer ending with one more pad. */
static struct conf_tensor padded_view(gllmk_dtype dt, int32_t ndim, const int64_t *shape, int64_t lead,
				      int64_t row_pad)
{
	struct conf_tensor t = { 0 };
	uint64_t rb = row_bytes_of(dt, shape[ndim - 1]);
	uint64_t pad = round_up4(row_pad), off = round_up4(lead);
	int64_t rows = row_count(ndim, shape);

	t.bytes = rb * (uint64_t)rows;
	t.buf = alloc_buffer(off + (rb + pad) * (uint64_t)rows);
	t.t = gllmk_tensor_make(t.buf, off, dt, ndim, shape);
	if (ndim >= 2) {
		t.t.stride[ndim - 2] = (int64_t)(rb + pad);
		for (int d = ndim - 3; d >= 0; d--)
			t.t.stride[d] = t.t.stride[d + 1] * shape[d + 1];
	}
	return t;
}

struct conf_tensor conf_output_padded(gllmk_dtype dt, int32_t ndim, const int64_t *shape, int64_t row_pad)
{
	struct conf_tensor t = padded_view(dt, ndim, shape, row_pad, row_pad);

	conf_poison(&t);
	return t;
}

void conf_poison(struct conf_tensor *t)
{
	write_poison(t->buf, (gllmk_dtype)t->t.dtype);
}

void conf_fill_bytes(struct conf_tensor *t, uint8_t byte)
{
	uint64_t size = gllmk_buffer_size(t->buf);
	uint8_t *p = conf_xmalloc(size);

	memset(p, byte, size);
	conf_ok(gllmk_buffer_write(t->buf, 0, p, size));
	free(p);
}

/* Byte offset of row r of the view, relative to its buffer. */
static uint64_t row_offset(const gllmk_tensor *t, int64_t r)
{
	uint64_t off = t->offset;

	for (int d = t->ndim - 2; d >= 0; d--) {
		off += (uint64_t)((r % t->shape[d]) * t->stride[d]);
		r /= t->shape[d];
	}
	return off;
}

struct conf_tensor conf_upload_strided(gllmk_dtype dt, int32_t ndim, const int64_t *shape, const void *host,
				       int64_t lead, int64_t row_pad)
{
	struct conf_tensor t = padded_view(dt, ndim, shape, lead, row_pad);
	uint64_t size = gllmk_buffer_size(t.buf);
	uint64_t rb = row_bytes_of(dt, shape[ndim - 1]);
	int64_t rows = row_count(ndim, shape);
	uint8_t *img = conf_xmalloc(size);

	poison_pattern(dt, img, size);
	for (int64_t r = 0; r < rows; r++)
		memcpy(img + row_offset(&t.t, r), (const uint8_t *)host + (uint64_t)r * rb, rb);
	conf_ok(gllmk_buffer_write(t.buf, 0, img, size));
	free(img);
	return t;
}

/* One read of the whole span the view covers, then rows gathered by stride:
 * a GPU backend pays one transfer, not one per row. */
void conf_download(const struct conf_tensor *t, void *host)
{
	const gllmk_tensor *v = &t->t;
	uint64_t rb = row_bytes_of((gllmk_dtype)v->dtype, v->shape[v->ndim - 1]);
	int64_t rows = row_count(v->ndim, v->shape);
	uint64_t lo = UINT64_MAX, hi = 0;
	uint8_t *span;

	for (int64_t r = 0; r < rows; r++) {
		uint64_t off = row_offset(v, r);

		lo = off < lo ? off : lo;
		hi = off + rb > hi ? off + rb : hi;
	}
	span = conf_xmalloc(hi - lo);
	conf_ok(gllmk_buffer_read(t->buf, lo, span, hi - lo));
	for (int64_t r = 0; r < rows; r++)
		memcpy((uint8_t *)host + (uint64_t)r * rb, span + (row_offset(v, r) - lo), rb);
	free(span);
}

void conf_check_padding(const struct conf_tensor *t)
{
	const gllmk_tensor *v = &t->t;
	uint64_t size = gllmk_buffer_size(t->buf);
	uint64_t rb = row_bytes_of((gllmk_dtype)v->dtype, v->shape[v->ndim - 1]);
	int64_t rows = row_count(v->ndim, v->shape);
	uint8_t *got = conf_xmalloc(size), *want = conf_xmalloc(size), *inside = calloc(size, 1);
	size_t bad = 0;

	assert_non_null(inside);
	conf_ok(gllmk_buffer_read(t->buf, 0, got, size));
	poison_pattern((gllmk_dtype)v->dtype, want, size);
	for (int64_t r = 0; r < rows; r++)
		memset(inside + row_offset(v, r), 1, rb);
	for (uint64_t i = 0; i < size; i++) {
		if (inside[i] || got[i] == want[i])
			continue;
		if (bad < 8)
			print_error("  padding byte %llu written: 0x%02x (poison 0x%02x)\n", (unsigned long long)i,
				    got[i], want[i]);
		bad++;
	}
	free(got);
	free(want);
	free(inside);
	if (bad)
		conf_fail("%zu bytes outside the view were written", bad);
}

void conf_free(struct conf_tensor *t)
{
	if (t->buf)
		gllmk_buffer_free(t->buf);
	*t = (struct conf_tensor){ 0 };
}

/* ------------------------------------------------------------- checking */

#define CONF_SHOW 8 /* offenders printed per check */

/* One element against its reference; returns 0 when it passes. */
static int element_fails(float got, double want, double tol)
{
	if (isnan(want))
		return !isnan(got);
	if (isnan(got))
		return 1;
	if (isinf(want))
		return (double)got != want;
	/* Written so that a NaN tolerance (a broken reference) fails too. */
	return !(fabs((double)got - want) <= tol);
}

static void report_offenders(const char *what, size_t bad, size_t n, double worst, size_t worst_at)
{
	if (bad)
		conf_fail("%s: %zu of %zu elements out of tolerance (worst excess at [%zu], |err| - tol = %.3g)",
			  what, bad, n, worst_at, worst);
}

void conf_check_close(const char *what, const float *got, const double *want, size_t n, double atol,
		      double rtol)
{
	size_t bad = 0, worst_at = 0;
	double worst = -1;

	for (size_t i = 0; i < n; i++) {
		double tol = atol + rtol * fabs(want[i]);
		double excess;

		if (!element_fails(got[i], want[i], tol))
			continue;
		excess = fabs((double)got[i] - want[i]) - tol;
		if (bad < CONF_SHOW)
			print_error("  %s[%zu]: got %.9g want %.9g tol %.3g (atol %.3g rtol %.3g)\n", what, i,
				    (double)got[i], want[i], tol, atol, rtol);
		if (!(excess <= worst)) {
			worst = excess;
			worst_at = i;
		}
		bad++;
	}
	report_offenders(what, bad, n, worst, worst_at);
}

void conf_check_within(const char *what, const float *got, const double *want, const double *tol, size_t n)
{
	size_t bad = 0, worst_at = 0;
	double worst = -1;

	for (size_t i = 0; i < n; i++) {
		double excess;

		if (!element_fails(got[i], want[i], tol[i]))
			continue;
		excess = fabs((double)got[i] - want[i]) - tol[i];
		if (bad < CONF_SHOW)
			print_error("  %s[%zu]: got %.9g want %.9g tol %.3g\n", what, i, (double)got[i], want[i],
				    tol[i]);
		if (!(excess <= worst)) {
			worst = excess;
			worst_at = i;
		}
		bad++;
	}
	report_offenders(what, bad, n, worst, worst_at);
}

void conf_check_rel_norm(const char *what, const float *got, const double *want, size_t n, double rtol)
{
	double err2 = 0, ref2 = 0, rel;
	size_t nonfinite = 0;

	for (size_t i = 0; i < n; i++) {
		double d = (double)got[i] - want[i];

		if (!isfinite(got[i])) {
			if (nonfinite < CONF_SHOW)
				print_error("  %s[%zu]: got %.9g want %.9g (not finite)\n", what, i, (double)got[i],
					    want[i]);
			nonfinite++;
			continue;
		}
		err2 += d * d;
		ref2 += want[i] * want[i];
	}
	if (nonfinite)
		conf_fail("%s: %zu of %zu elements not finite", what, nonfinite, n);
	rel = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
	if (!(rel <= rtol))
		conf_fail("%s: relative norm error %.3g > %.3g over %zu elements", what, rel, rtol, n);
}

void conf_check_equal_i32(const char *what, const int32_t *got, const int32_t *want, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (got[i] == want[i])
			continue;
		if (bad < CONF_SHOW)
			print_error("  %s[%zu]: got %d want %d\n", what, i, got[i], want[i]);
		bad++;
	}
	if (bad)
		conf_fail("%s: %zu of %zu values differ", what, bad, n);
}

void conf_check_equal_bytes(const char *what, const void *got, const void *want, size_t n)
{
	const uint8_t *g = got, *w = want;
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (g[i] == w[i])
			continue;
		if (bad < CONF_SHOW)
			print_error("  %s byte %zu: got 0x%02x want 0x%02x\n", what, i, g[i], w[i]);
		bad++;
	}
	if (bad)
		conf_fail("%s: %zu of %zu bytes differ", what, bad, n);
}

/* ------------------------------------------------- shapes and coverage */

/* 262147 floats (1 MiB) per row is past a 1 MiB L2 and a prime, so no
 * vector width or tile divides it. */
const int64_t conf_lengths[] = { 1, 7, 33, 4097, 262147 };
const size_t conf_lengths_count = sizeof(conf_lengths) / sizeof(conf_lengths[0]);

double conf_reduce_tol(int64_t n)
{
	return 0x1p-21 + 0x1p-23 * sqrt((double)n);
}

size_t conf_lengths_active(void)
{
	return conf.quick ? conf_lengths_count - 1 : conf_lengths_count;
}

#define CONF_OP_NAME(name, type) #name,
static const char *const op_names[] = { GLLMK_OPS(CONF_OP_NAME) GLLMK_SLOTS_V1_2(CONF_OP_NAME) };
#define OP_COUNT ((int)(sizeof(op_names) / sizeof(op_names[0])))
_Static_assert(OP_COUNT == GLLMK_OP_COUNT_V1_1 + 1, "coverage counts every ABI v1 op and weights_prepare");

/* Per op: tests that named it, and tests that reached their end. */
static struct {
	int begun, done;
} op_tally[OP_COUNT];

static int op_index(const char *op)
{
	for (int i = 0; i < OP_COUNT; i++)
		if (strcmp(op_names[i], op) == 0)
			return i;
	conf_fail("coverage: '%s' is not an ABI v1 op", op);
	return -1;
}

void conf_begin(const char *op)
{
	op_tally[op_index(op)].begun++;
}

void conf_covered(const char *op)
{
	int i = op_index(op);

	if (op_tally[i].done >= op_tally[i].begun)
		conf_fail("coverage: conf_covered(\"%s\") without conf_begin", op);
	op_tally[i].done++;
}

int conf_coverage_total(void)
{
	return OP_COUNT;
}

int conf_coverage_report(FILE *out)
{
	int covered = 0;

	for (int i = 0; i < OP_COUNT; i++) {
		if (op_tally[i].begun > 0 && op_tally[i].done == op_tally[i].begun) {
			covered++;
		} else if (op_tally[i].begun == 0) {
			fprintf(out, "  not covered: %s (no test ran it)\n", op_names[i]);
		} else {
			fprintf(out, "  not covered: %s (%d of %d tests failed or did not finish)\n", op_names[i],
				op_tally[i].begun - op_tally[i].done, op_tally[i].begun);
		}
	}
	return covered;
}

/* ------------------------------------------------------ per-dtype tests */

/* Every row of abi/gllmk_dtypes.def, in its order. */
static const struct {
	gllmk_dtype dt;
	const char *name;
	int weight;
} def_rows[] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) { e, #name, weight },
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};
#define DEF_ROWS (sizeof(def_rows) / sizeof(def_rows[0]))

int conf_weight_dtype(gllmk_dtype dt)
{
	for (size_t i = 0; i < DEF_ROWS; i++)
		if (def_rows[i].dt == dt)
			return def_rows[i].weight;
	return 0;
}

/* One expanded test: its run() and dtype, its name's storage. */
struct dtype_case {
	void (*run)(gllmk_dtype dt);
	gllmk_dtype dt;
	char name[64];
};

void conf_dtype_tests_entry(void **state)
{
	const struct dtype_case *c = *state;

	c->run(c->dt);
}

/* The tests one entry stands for, written from `out` on (NULL: counted only). */
static size_t expand_entry(const struct CMUnitTest *entry, struct CMUnitTest *out)
{
	const struct conf_dtype_tests *d = entry->initial_state;
	size_t n = 0;

	for (size_t i = 0; i < DEF_ROWS; i++) {
		if (!d->keep(def_rows[i].dt))
			continue;
		if (out) {
			struct dtype_case *c = conf_xmalloc(sizeof(*c));

			c->run = d->run;
			c->dt = def_rows[i].dt;
			snprintf(c->name, sizeof(c->name), "%s_%s", d->prefix, def_rows[i].name);
			out[n] = (struct CMUnitTest){ .name = c->name, .test_func = conf_dtype_tests_entry,
						      .initial_state = c };
		}
		n++;
	}
	return n;
}

struct CMUnitTest *conf_expand_dtype_tests(const struct CMUnitTest *tests, size_t n, size_t *count)
{
	size_t total = 0, at = 0;
	struct CMUnitTest *out;

	for (size_t i = 0; i < n; i++)
		total += tests[i].test_func == conf_dtype_tests_entry ? expand_entry(&tests[i], NULL) : 1;
	out = conf_xmalloc((total ? total : 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (tests[i].test_func == conf_dtype_tests_entry)
			at += expand_entry(&tests[i], out + at);
		else
			out[at++] = tests[i];
	}
	*count = total;
	return out;
}

void conf_free_expanded_tests(struct CMUnitTest *tests, size_t count)
{
	/* every entry left with this function is an expanded one */
	for (size_t i = 0; i < count; i++)
		if (tests[i].test_func == conf_dtype_tests_entry)
			free(tests[i].initial_state);
	free(tests);
}
