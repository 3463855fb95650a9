/* gllmk-probe: device tensors in an arena, and host-side encoders. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_tensor.h"

uint64_t tensor_elems(const gllmk_tensor *t)
{
	uint64_t n = 1;

	for (int32_t d = 0; d < t->ndim; d++)
		n *= (uint64_t)t->shape[d];
	return n;
}

uint64_t tensor_bytes(const gllmk_tensor *t)
{
	int64_t inner = t->shape[t->ndim - 1];
	uint64_t row = 0;

	if (gllmk_dtype_row_bytes((gllmk_dtype)t->dtype, inner, &row) != GLLMK_OK)
		return 0;
	return row * (tensor_elems(t) / (uint64_t)inner);
}

gllmk_status arena_check(struct arena *a, gllmk_status st)
{
	if (st != GLLMK_OK && a->st == GLLMK_OK) {
		a->st = st;
		snprintf(a->err, sizeof(a->err), "%s", gllmk_last_error());
	}
	return st;
}

gllmk_status arena_fail(struct arena *a, gllmk_status st, const char *msg)
{
	if (a->st == GLLMK_OK) {
		a->st = st;
		snprintf(a->err, sizeof(a->err), "%s", msg);
	}
	return st;
}

static gllmk_tensor *arena_slot(struct arena *a)
{
	if (a->st != GLLMK_OK)
		return NULL;
	if (a->n == ARENA_MAX) {
		arena_fail(a, GLLMK_E_NO_MEMORY, "gllmk-probe: more than ARENA_MAX tensors in one run");
		return NULL;
	}
	a->bufs[a->n] = NULL;
	return &a->t[a->n];
}

const gllmk_tensor *arena_new(struct arena *a, gllmk_dtype dt, const void *host, int32_t ndim,
			      const int64_t *shape)
{
	gllmk_tensor *t = arena_slot(a);
	gllmk_buffer *buf;
	uint64_t bytes;
	void *zeros = NULL;

	if (!t)
		return NULL;
	*t = gllmk_tensor_make(NULL, 0, dt, ndim, shape);
	bytes = tensor_bytes(t);
	if (arena_check(a, gllmk_buffer_alloc(a->ctx, bytes, &buf)))
		return NULL;
	a->bufs[a->n++] = buf;
	t->buf = buf;
	if (!host)
		host = zeros = calloc(1, bytes);
	if (!host) {
		arena_fail(a, GLLMK_E_NO_MEMORY, "gllmk-probe: out of host memory");
		return NULL;
	}
	arena_check(a, gllmk_buffer_write(buf, 0, host, bytes));
	free(zeros);
	return a->st == GLLMK_OK ? t : NULL;
}

const gllmk_tensor *arena_view(struct arena *a, const gllmk_tensor *base, uint64_t offset, gllmk_dtype dt,
			       int32_t ndim, const int64_t *shape)
{
	gllmk_tensor *t = base ? arena_slot(a) : NULL;

	if (!t)
		return NULL;
	*t = gllmk_tensor_make(base->buf, base->offset + offset, dt, ndim, shape);
	a->n++;
	return t;
}

gllmk_status arena_read(struct arena *a, const gllmk_tensor *t, void *host)
{
	return arena_check(a, gllmk_buffer_read(t->buf, t->offset, host, tensor_bytes(t)));
}

void arena_free(struct arena *a)
{
	for (int i = 0; i < a->n; i++)
		if (a->bufs[i]) /* views own no buffer */
			gllmk_buffer_free(a->bufs[i]);
	a->n = 0;
}

/* ---------------------------------------------------------- host data */

/* xorshift64*: reproducible and good enough for test data. */
double prng_uniform(struct prng *r, double lo, double hi)
{
	uint64_t x = r->s ? r->s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return lo + (hi - lo) * (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

void prng_fill(struct prng *r, float *x, size_t n, double lo, double hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)prng_uniform(r, lo, hi);
}

float *prng_floats(uint64_t seed, size_t n, double lo, double hi)
{
	struct prng r = { seed };
	float *x = malloc(n * sizeof(float));

	if (x)
		prng_fill(&r, x, n, lo, hi);
	return x;
}

/* IEEE binary16 in portable C (no _Float16, which clang lacks on x86-64
 * before version 15): round to nearest even via nearbyintf in the default
 * rounding mode; written apart from the plugins' fp16.h so the self-test
 * compares two implementations. */
uint16_t f32_to_f16(float x)
{
	const uint16_t sign = signbit(x) ? 0x8000 : 0;
	const float a = fabsf(x);
	int e, biased;
	uint32_t r;

	if (isnan(x))
		return sign | 0x7e00;
	if (a >= 65520.0f) /* rounds past the largest half, 65504 */
		return sign | 0x7c00;
	if (a < 0x1p-14f) /* subnormal: whole units of 2^-24 (1024 rounds up to the smallest normal) */
		return sign | (uint16_t)nearbyintf(a * 0x1p24f);
	frexpf(a, &e);                               /* a = m·2^e, m in [0.5, 1) */
	r = (uint32_t)nearbyintf(ldexpf(a, 11 - e)); /* 11 significant bits: 1024..2048 */
	biased = e - 1 + 15;
	if (r == 2048) {
		r = 1024;
		biased++;
	}
	return sign | (uint16_t)(biased << 10) | (uint16_t)(r - 1024);
}

float f16_to_f32(uint16_t bits)
{
	const int biased = (bits >> 10) & 31, frac = bits & 1023;
	const float sign = (bits & 0x8000) ? -1.0f : 1.0f;

	if (biased == 31)
		return frac ? copysignf(NAN, sign) : sign * INFINITY;
	if (biased == 0)
		return sign * ldexpf((float)frac, -24);
	return sign * ldexpf((float)(frac + 1024), biased - 25);
}

uint16_t f32_to_bf16(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

void q8_0_encode(const float *x, uint8_t *q, size_t n)
{
	for (size_t b = 0; b < n / Q8_0_BLOCK; b++, x += Q8_0_BLOCK, q += Q8_0_BYTES) {
		float amax = 0.0f, d, id;
		uint16_t dh;

		for (int i = 0; i < Q8_0_BLOCK; i++)
			amax = fmaxf(amax, fabsf(x[i]));
		d = amax / 127.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		dh = f32_to_f16(d);
		memcpy(q, &dh, sizeof(dh));
		for (int i = 0; i < Q8_0_BLOCK; i++)
			q[2 + i] = (uint8_t)(int8_t)roundf(x[i] * id);
	}
}

void q8_0_decode(const uint8_t *q, double *x, size_t n)
{
	for (size_t b = 0; b < n / Q8_0_BLOCK; b++, x += Q8_0_BLOCK, q += Q8_0_BYTES) {
		uint16_t dh;
		double d;

		memcpy(&dh, q, sizeof(dh));
		d = f16_to_f32(dh);
		for (int i = 0; i < Q8_0_BLOCK; i++)
			x[i] = d * (int8_t)q[2 + i];
	}
}

double rel_error(const float *got, const double *ref, size_t n)
{
	double num = 0.0, den = 0.0;

	for (size_t i = 0; i < n; i++) {
		double e = (double)got[i] - ref[i];

		if (!isfinite(got[i]))
			return INFINITY;
		num += e * e;
		den += ref[i] * ref[i];
	}
	return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

double rel_error_f(const float *got, const float *ref, size_t n)
{
	double num = 0.0, den = 0.0;

	for (size_t i = 0; i < n; i++) {
		double e = (double)got[i] - ref[i];

		if (!isfinite(got[i]) || !isfinite(ref[i]))
			return INFINITY;
		num += e * e;
		den += (double)ref[i] * ref[i];
	}
	return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

double checksum(const float *x, size_t n)
{
	double s = 0.0;

	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}
