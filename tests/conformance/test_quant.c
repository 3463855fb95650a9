/* dequantize and quantize against the references of ref_quant.c.
 *
 * dequantize: every dtype, random valid blocks (random bits with finite,
 * moderate scales; any finite f32/f16/bf16 bit pattern, subnormals
 * included), rows of one block and of many, 1-D to 3-D, strided input and
 * output; exact or within 1 ulp of f32.
 * quantize: q8_0 and q8_K from blocks built to hit the encoders' corners
 * (zero blocks, exact rounding ties, equal-magnitude maxima of opposite
 * sign, subnormal f16 scales, outliers); bytes compared with ggml's
 * reference encoders (ref_compare_q8 states the one allowed deviation).
 * Row lengths that are not a multiple of the block: GLLMK_E_BLOCK.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_quant.h"

struct quant_case {
	int32_t ndim;
	int64_t shape[3];  /* in blocks for the innermost dim */
	int strided;       /* input rows padded, output rows padded */
	int big;           /* dropped to a smaller row in quick mode */
};

static const struct quant_case quant_cases[] = {
	{ 1, { 1 }, 0, 0 },
	{ 2, { 1, 1 }, 0, 0 },
	{ 2, { 7, 16 }, 1, 0 },
	{ 2, { 33, 1 }, 1, 0 },
	{ 3, { 2, 3, 2 }, 0, 0 },
	{ 2, { 3, 33 }, 1, 0 },    /* odd lengths: SIMD tails, odd block counts */
	{ 1, { 4097 }, 0, 0 },
	{ 2, { 33, 4096 }, 0, 1 }, /* 4096 elements a row (whole blocks for every dtype) */
};

/* Innermost length in elements: shape[ndim-1] counts blocks, except the
 * big case, which counts elements (4096, or 1024 when quick). */
static int64_t row_elems(const struct quant_case *c, int64_t qk)
{
	int64_t n = c->shape[c->ndim - 1];

	if (c->big)
		return conf.quick ? 1024 : n;
	return n * qk;
}

static int64_t count_rows(const struct quant_case *c)
{
	int64_t rows = 1;

	for (int32_t d = 0; d < c->ndim - 1; d++)
		rows *= c->shape[d];
	return rows;
}

static void case_shape(const struct quant_case *c, int64_t qk, int64_t *shape)
{
	for (int32_t d = 0; d < c->ndim; d++)
		shape[d] = c->shape[d];
	shape[c->ndim - 1] = row_elems(c, qk);
}

static void case_name(char *buf, size_t len, const char *op, gllmk_dtype dt, const int64_t *shape, int32_t ndim,
		      int strided)
{
	int at = snprintf(buf, len, "%s %s [", op, ref_dtype_name(dt));

	for (int32_t d = 0; d < ndim && at < (int)len; d++)
		at += snprintf(buf + at, len - (size_t)at, d ? ",%lld" : "%lld", (long long)shape[d]);
	if (at < (int)len)
		snprintf(buf + at, len - (size_t)at, "]%s", strided ? " strided" : "");
}

/* ----------------------------------------------------------- dequantize */

/* Any finite bit pattern (subnormals included) for f32/f16/bf16: decoding
 * them is a conversion that must be exact over the whole range. */
static void random_finite_bits(gllmk_dtype dt, struct conf_rng *r, void *dst, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		uint64_t u = conf_rng_u64(r);

		if (dt == GLLMK_F32) {
			uint32_t v = (uint32_t)u;

			if ((v & 0x7f800000) == 0x7f800000)
				v &= 0xbfffffff; /* exponent 255 -> 127 */
			memcpy((uint32_t *)dst + i, &v, sizeof(v));
		} else {
			uint16_t v = (uint16_t)u;
			uint16_t exp_mask = dt == GLLMK_F16 ? 0x7c00 : 0x7f80;

			if ((v & exp_mask) == exp_mask)
				v &= (uint16_t)~(exp_mask & (exp_mask >> 1) & ~(exp_mask >> 2));
			((uint16_t *)dst)[i] = v;
		}
	}
}

static void dequantize_one(gllmk_dtype dt, const struct quant_case *c)
{
	int64_t qk = ref_block_elems(dt), shape[3], n, rows;
	struct conf_rng r;
	char what[96];

	case_shape(c, qk, shape);
	n = shape[c->ndim - 1];
	rows = count_rows(c);
	case_name(what, sizeof(what), "dequantize", dt, shape, c->ndim, c->strided);
	conf_rng_init(&r, what);

	size_t row_bytes = ref_row_bytes(dt, n);
	uint8_t *host = conf_xmalloc(row_bytes * (size_t)rows);
	float *got = conf_xmalloc(sizeof(float) * (size_t)(rows * n));
	double *want = conf_xmalloc(sizeof(double) * (size_t)(rows * n));
	double *tol = conf_xmalloc(sizeof(double) * (size_t)(rows * n));

	if (qk == 1)
		random_finite_bits(dt, &r, host, rows * n);
	else
		ref_random_row(dt, &r, host, rows * n);
	for (int64_t i = 0; i < rows; i++)
		ref_decode_row(dt, host + (size_t)i * row_bytes, want + i * n, n);
	ref_ulp_tolerance(want, tol, (size_t)(rows * n));

	struct conf_tensor x = c->strided ? conf_upload_strided(dt, c->ndim, shape, host, 4, ref_block_bytes(dt))
					  : conf_upload(dt, c->ndim, shape, host);
	struct conf_tensor y = c->strided ? conf_output_padded(GLLMK_F32, c->ndim, shape, 12)
					  : conf_output(GLLMK_F32, c->ndim, shape);

	conf_ok(gllmk_dequantize(conf.ctx, &y.t, &x.t));
	conf_download(&y, got);
	conf_check_within(what, got, want, tol, (size_t)(rows * n));
	if (c->strided)
		conf_check_padding(&y);
	conf_free(&x);
	conf_free(&y);
	free(host);
	free(got);
	free(want);
	free(tol);
}

static void dequantize_dtype(gllmk_dtype dt)
{
	conf_begin("dequantize");
	for (size_t i = 0; i < sizeof(quant_cases) / sizeof(quant_cases[0]); i++)
		dequantize_one(dt, &quant_cases[i]);
	conf_covered("dequantize");
}

/* ------------------------------------------------------------- quantize */

enum block_kind {
	BLOCK_UNIFORM,  /* uniform in [-s, s], s = 10^(-4 .. 2) */
	BLOCK_ZERO,     /* all zero (signed zeros): d = 0, q = 0 */
	BLOCK_TIES,     /* max |x| = 127 so the step is exactly 1; k + 0.5 elsewhere */
	BLOCK_TWIN_MAX, /* -m before +m, both the largest |x|: q8_K takes the first */
	BLOCK_TINY,     /* amax ~ 1e-6: q8_0's d is an f16 subnormal */
	BLOCK_OUTLIER,  /* uniform in [-1, 1) with one element ×8 */
	BLOCK_KINDS
};

static void fill_block(struct conf_rng *r, float *x, int64_t qk, enum block_kind kind)
{
	double s = pow(10.0, conf_rng_uniform(r, -4.0, 2.0));

	switch (kind) {
	case BLOCK_UNIFORM:
		conf_fill_uniform(r, x, (size_t)qk, -s, s);
		break;
	case BLOCK_ZERO:
		for (int64_t i = 0; i < qk; i++)
			x[i] = (conf_rng_u64(r) & 1) ? -0.0f : 0.0f;
		break;
	case BLOCK_TIES:
		for (int64_t i = 0; i < qk; i++)
			x[i] = (float)conf_rng_int(r, -126, 125) + 0.5f;
		x[conf_rng_int(r, 0, qk - 1)] = (conf_rng_u64(r) & 1) ? 127.0f : -127.0f;
		break;
	case BLOCK_TWIN_MAX: {
		int64_t a = conf_rng_int(r, 0, qk - 2), b = conf_rng_int(r, a + 1, qk - 1);

		conf_fill_uniform(r, x, (size_t)qk, -1.0, 1.0);
		x[a] = -2.0f;
		x[b] = 2.0f;
		break;
	}
	case BLOCK_TINY:
		conf_fill_uniform(r, x, (size_t)qk, -1e-6, 1e-6);
		break;
	case BLOCK_OUTLIER:
		conf_fill_uniform(r, x, (size_t)qk, -1.0, 1.0);
		x[conf_rng_int(r, 0, qk - 1)] *= 8.0f;
		break;
	default:
		break;
	}
}

static void quantize_one(gllmk_dtype dt, const struct quant_case *c)
{
	int64_t qk = ref_block_elems(dt), shape[3], n, rows;
	struct conf_rng r;
	char what[96], msg[256];

	case_shape(c, qk, shape);
	n = shape[c->ndim - 1];
	rows = count_rows(c);
	case_name(what, sizeof(what), "quantize", dt, shape, c->ndim, c->strided);
	conf_rng_init(&r, what);

	size_t row_bytes = ref_row_bytes(dt, n);
	float *x = conf_xmalloc(sizeof(float) * (size_t)(rows * n));
	uint8_t *got = conf_xmalloc(row_bytes * (size_t)rows);
	uint8_t *want = conf_xmalloc(row_bytes * (size_t)rows);

	/* every kind appears in the first blocks, then random kinds */
	for (int64_t b = 0; b < rows * n / qk; b++)
		fill_block(&r, x + b * qk, qk,
			   b < BLOCK_KINDS ? (enum block_kind)b : (enum block_kind)conf_rng_int(&r, 0, BLOCK_KINDS - 1));
	for (int64_t i = 0; i < rows; i++) {
		if (dt == GLLMK_Q8_0)
			ref_quantize_q8_0(x + i * n, want + (size_t)i * row_bytes, n);
		else
			ref_quantize_q8_K(x + i * n, want + (size_t)i * row_bytes, n);
	}

	struct conf_tensor xt = c->strided ? conf_upload_strided(GLLMK_F32, c->ndim, shape, x, 8, 4 * qk)
					   : conf_upload(GLLMK_F32, c->ndim, shape, x);
	struct conf_tensor yt = c->strided ? conf_output_padded(dt, c->ndim, shape, 4) : conf_output(dt, c->ndim, shape);

	conf_ok(gllmk_quantize(conf.ctx, &yt.t, &xt.t));
	conf_download(&yt, got);
	for (int64_t i = 0; i < rows; i++) {
		if (ref_compare_q8(dt, x + i * n, got + (size_t)i * row_bytes, want + (size_t)i * row_bytes, n, msg,
				   sizeof(msg)))
			conf_fail("%s: row %lld: %s", what, (long long)i, msg);
	}
	if (c->strided)
		conf_check_padding(&yt);
	conf_free(&xt);
	conf_free(&yt);
	free(x);
	free(got);
	free(want);
}

static void quantize_dtype(gllmk_dtype dt)
{
	conf_begin("quantize");
	for (size_t i = 0; i < sizeof(quant_cases) / sizeof(quant_cases[0]); i++)
		quantize_one(dt, &quant_cases[i]);
	conf_covered("quantize");
}

/* ------------------------------------------------ K not a block multiple */

static void expect_block_error(gllmk_status st, const char *call)
{
	if (st != GLLMK_E_BLOCK)
		conf_fail("%s: got %s (%s), want GLLMK_E_BLOCK", call, gllmk_status_string(st), gllmk_last_error());
}

/* A view of dtype dt whose rows are n elements, n not a multiple of the
 * block, inside a buffer big enough for whole blocks. */
static gllmk_tensor ragged_view(gllmk_buffer *buf, gllmk_dtype dt, int64_t rows, int64_t n)
{
	int64_t shape[2] = { rows, n };

	return gllmk_tensor_make(buf, 0, dt, 2, shape);
}

static void quant_block_rejected(void **state)
{
	gllmk_buffer *src, *dst;
	gllmk_tensor x, y;

	(void)state;
	conf_begin("dequantize");
	conf_begin("quantize");
	conf_ok(gllmk_buffer_alloc(conf.ctx, 1 << 16, &src));
	conf_ok(gllmk_buffer_alloc(conf.ctx, 1 << 16, &dst));

	x = ragged_view(src, GLLMK_Q4_0, 2, 48);
	y = ragged_view(dst, GLLMK_F32, 2, 48);
	expect_block_error(gllmk_dequantize(conf.ctx, &y, &x), "dequantize q4_0 [2,48]");
	x = ragged_view(src, GLLMK_Q6_K, 1, 300);
	y = ragged_view(dst, GLLMK_F32, 1, 300);
	expect_block_error(gllmk_dequantize(conf.ctx, &y, &x), "dequantize q6_K [1,300]");
	x = ragged_view(src, GLLMK_F32, 2, 40);
	y = ragged_view(dst, GLLMK_Q8_0, 2, 40);
	expect_block_error(gllmk_quantize(conf.ctx, &y, &x), "quantize q8_0 [2,40]");
	x = ragged_view(src, GLLMK_F32, 1, 288);
	y = ragged_view(dst, GLLMK_Q8_K, 1, 288);
	expect_block_error(gllmk_quantize(conf.ctx, &y, &x), "quantize q8_K [1,288]");

	gllmk_buffer_free(src);
	gllmk_buffer_free(dst);
	conf_covered("dequantize");
	conf_covered("quantize");
}

/* ------------------------------------------------------------ the group */

#define QUANT_DTYPES(X) X(q8_0, GLLMK_Q8_0) X(q8_K, GLLMK_Q8_K)

#define QUANT_TEST(name, dt)                          \
	static void quantize_##name(void **state)     \
	{                                             \
		(void)state;                          \
		quantize_dtype(dt);                   \
	}
QUANT_DTYPES(QUANT_TEST)

#define QUANT_ENTRY(name, dt) cmocka_unit_test(quantize_##name),

CONF_GROUP(quant) = {
	CONF_DTYPE_TESTS("dequantize", dequantize_dtype, conf_weight_dtype),
	QUANT_DTYPES(QUANT_ENTRY)
	cmocka_unit_test(quant_block_rejected),
};
CONF_GROUP_END(quant);
