/* convert (SPEC/OPERATORS.md "Quantization and conversion"): every pair of
 * f32, f16 and bf16, checked bit for bit against the suite's own rounding
 * in double (ref_half.c): round to nearest even, subnormals, overflow to
 * infinity, signed zeros; NaN must stay NaN (any payload). Every f16 and
 * bf16 bit pattern is a source; f32 sources mix random bit patterns with
 * values in f16's range and exact rounding ties. Tolerance: none.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_half.h"

/* The three formats, handled through their bit patterns (widened to u32). */
struct fmt {
	gllmk_dtype dt;
	const char *name;
	size_t size;
	double (*value)(uint32_t bits);
	uint32_t (*encode)(double v);
	int (*is_nan)(uint32_t bits);
};

static double f32_value(uint32_t b)
{
	return ref_f32_value(b);
}

static double f16_value(uint32_t b)
{
	return ref_f16_value((uint16_t)b);
}

static double bf16_value(uint32_t b)
{
	return ref_bf16_value((uint16_t)b);
}

static uint32_t f32_encode(double v)
{
	return ref_f32_bits(v);
}

static uint32_t f16_encode(double v)
{
	return ref_f16_bits(v);
}

static uint32_t bf16_encode(double v)
{
	return ref_bf16_bits(v);
}

static int f32_nan(uint32_t b)
{
	return ref_f32_is_nan(b);
}

static int f16_nan(uint32_t b)
{
	return ref_f16_is_nan((uint16_t)b);
}

static int bf16_nan(uint32_t b)
{
	return ref_bf16_is_nan((uint16_t)b);
}

static const struct fmt fmts[] = {
	{ GLLMK_F32, "f32", 4, f32_value, f32_encode, f32_nan },
	{ GLLMK_F16, "f16", 2, f16_value, f16_encode, f16_nan },
	{ GLLMK_BF16, "bf16", 2, bf16_value, bf16_encode, bf16_nan },
};

static uint32_t load_bits(const struct fmt *f, const void *p, size_t i)
{
	if (f->size == 4)
		return ((const uint32_t *)p)[i];
	return ((const uint16_t *)p)[i];
}

static void store_bits(const struct fmt *f, void *p, size_t i, uint32_t bits)
{
	if (f->size == 4)
		((uint32_t *)p)[i] = bits;
	else
		((uint16_t *)p)[i] = (uint16_t)bits;
}

/* ------------------------------------------------ the reference itself */

/* The rounding in ref_half.c checked on values whose encodings IEEE 754 and
 * bfloat16 fix, and against the compiler's double -> float conversion. */
static void test_convert_reference(void **state)
{
	static const struct {
		double v;
		uint16_t f16, bf16;
	} known[] = {
		{ 1.0, 0x3c00, 0x3f80 },
		{ -2.0, 0xc000, 0xc000 },
		{ 65504.0, 0x7bff, 0x4780 },
		{ 65519.0, 0x7bff, 0x4780 },
		{ 65520.0, 0x7c00, 0x4780 },         /* f16: the tie above 65504 goes to inf */
		{ 0x1p-24, 0x0001, 0x3380 },          /* f16's smallest subnormal */
		{ 0x1p-25, 0x0000, 0x3300 },          /* tie with 0: even is 0 */
		{ 0x3p-25, 0x0002, 0x33c0 },          /* tie between 1 and 2 quanta: 2 */
		{ 0x1p-14, 0x0400, 0x3880 },
		{ 1.0 + 0x1p-11, 0x3c00, 0x3f80 },    /* f16 tie, down to even */
		{ 1.0 + 0x3p-11, 0x3c02, 0x3f80 },    /* f16 tie, up to even */
		{ 1.0 + 0x1p-8, 0x3c04, 0x3f80 },     /* bf16 tie, down to even */
		{ 1.0 + 0x3p-8, 0x3c0c, 0x3f82 },     /* bf16 tie, up to even */
		{ 1.0 / 3.0, 0x3555, 0x3eab },
		{ FLT_MAX, 0x7c00, 0x7f80 },          /* bf16: rounds up to inf */
		{ -0.0, 0x8000, 0x8000 },
		{ INFINITY, 0x7c00, 0x7f80 },
	};
	struct conf_rng rng;

	(void)state;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (ref_f16_bits(known[i].v) != known[i].f16 || ref_bf16_bits(known[i].v) != known[i].bf16)
			conf_fail("reference rounding of %a: f16 0x%04x (want 0x%04x), bf16 0x%04x (want 0x%04x)",
				  known[i].v, ref_f16_bits(known[i].v), known[i].f16, ref_bf16_bits(known[i].v),
				  known[i].bf16);
	}
	conf_rng_init(&rng, "convert reference");
	for (int i = 0; i < 100000; i++) {
		double v = ldexp(conf_rng_uniform(&rng, -1, 1), (int)conf_rng_int(&rng, -160, 130));
		float f = (float)v;
		uint32_t bits;

		memcpy(&bits, &f, 4);
		if (ref_f32_bits(v) != bits || ref_f32_value(bits) != (double)f)
			conf_fail("reference rounding of %a to f32: 0x%08x, the compiler says 0x%08x", v,
				  ref_f32_bits(v), bits);
	}
}

/* ------------------------------------------------------------ sources */

static const uint32_t f32_specials[] = {
	0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
	0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0x7fa00000, /* NaNs, quiet and signalling */
	0x7f7fffff, 0xff7fffff, 0x00000001, 0x80000001, 0x007fffff, 0x00800000,
	0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0xc77ff000,             /* around f16's 65504 / 65520 */
	0x33800000, 0x33000000, 0x33000001, 0x33400000, 0x38800000, 0x387fe000, /* f16 subnormal edges */
	0x3f808000, 0x3f818000, 0x3f808001, 0x3f80ffff, 0x7f7f8000, 0x7f7f7fff, /* bf16 ties, overflow */
	0x3f801000, 0x3f803000, 0x3f801001,                                     /* f16 ties */
};

/* f32 sources: a quarter random bit patterns, a quarter values in f16's
 * range and just outside it, a quarter exact f16 ties, a quarter bf16 ties. */
static void draw_f32(struct conf_rng *rng, uint32_t *dst, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t r = (uint32_t)conf_rng_u64(rng), sign = r & 0x80000000u;
		uint32_t exp;

		switch (conf_rng_int(rng, 0, 3)) {
		case 0:
			dst[i] = r;
			break;
		case 1:
			exp = (uint32_t)conf_rng_int(rng, 127 - 27, 127 + 16);
			dst[i] = sign | exp << 23 | (r & 0x7fffff);
			break;
		case 2:
			exp = (uint32_t)conf_rng_int(rng, 127 - 14, 127 + 15);
			dst[i] = sign | exp << 23 | (r & 0x7fe000) | 0x1000;
			break;
		default:
			dst[i] = (r & 0xffff0000u) | 0x8000;
			break;
		}
	}
	for (size_t i = 0; i < n && i < sizeof(f32_specials) / sizeof(f32_specials[0]); i++)
		dst[i] = f32_specials[i];
}

/* ----------------------------------------------------------- the check */

/* Expected bits of `to` for `bits` of `from`; *nan set when any NaN will do. */
static uint32_t expected(const struct fmt *from, const struct fmt *to, uint32_t bits, int *nan)
{
	*nan = from->is_nan(bits);
	return *nan ? 0 : to->encode(from->value(bits));
}

static void compare(const char *what, const struct fmt *from, const struct fmt *to, const void *src,
		    const void *got, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t in = load_bits(from, src, i), g = load_bits(to, got, i);
		int nan;
		uint32_t want = expected(from, to, in, &nan);

		if (nan ? to->is_nan(g) : g == want)
			continue;
		if (bad < 8) {
			if (nan)
				print_error("  %s[%zu]: 0x%0*x -> 0x%0*x, want a NaN\n", what, i, (int)from->size * 2,
					    in, (int)to->size * 2, g);
			else
				print_error("  %s[%zu]: 0x%0*x (%.9g) -> 0x%0*x, want 0x%0*x\n", what, i,
					    (int)from->size * 2, in, from->value(in), (int)to->size * 2, g,
					    (int)to->size * 2, want);
		}
		bad++;
	}
	if (bad)
		conf_fail("%s: %zu of %zu elements differ", what, bad, n);
}

/* src (n elements of `from`, shaped `shape`) to `to`, twice: into a
 * NaN-poisoned output, then into a zero-filled one, so an element whose
 * expected value is NaN is still proven written. */
static void convert_case(const struct fmt *from, const struct fmt *to, int32_t ndim, const int64_t *shape,
			 const void *src)
{
	size_t n = conf_numel(ndim, shape);
	void *got = conf_xmalloc(n * to->size);
	struct conf_tensor tx = conf_upload(from->dt, ndim, shape, src);
	struct conf_tensor ty = conf_output(to->dt, ndim, shape);
	char what[96], dims[48];

	snprintf(what, sizeof(what), "convert %s->%s %s", from->name, to->name,
		 conf_shape_str(dims, sizeof(dims), ndim, shape));
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			conf_fill_bytes(&ty, 0);
		conf_ok(gllmk_convert(conf.ctx, &ty.t, &tx.t));
		conf_download(&ty, got);
		compare(what, from, to, src, got, n);
	}
	conf_free(&tx);
	conf_free(&ty);
	free(got);
}

static void run_from(const struct fmt *from)
{
	struct conf_rng rng;
	char name[32];
	void *src;

	snprintf(name, sizeof(name), "convert from %s", from->name);
	conf_begin("convert");
	conf_rng_init(&rng, name);
	if (from->size == 2) { /* every bit pattern, as [16, 16, 256] */
		src = conf_xmalloc(65536 * 2);
		for (uint32_t b = 0; b < 65536; b++)
			store_bits(from, src, b, b);
		for (size_t t = 0; t < 3; t++)
			convert_case(from, &fmts[t], 3, (int64_t[]){ 16, 16, 256 }, src);
		free(src);
	}
	for (size_t l = 0; l < conf_lengths_active(); l++) {
		int64_t n = conf_lengths[l];
		int64_t shape2[] = { 3, n };

		src = conf_xmalloc(3 * (size_t)n * 4);
		if (from->size == 4) {
			draw_f32(&rng, src, 3 * (size_t)n);
		} else {
			for (size_t i = 0; i < 3 * (size_t)n; i++)
				store_bits(from, src, i, (uint32_t)conf_rng_u64(&rng) & 0xffff);
		}
		for (size_t t = 0; t < 3; t++) {
			convert_case(from, &fmts[t], 1, &n, src);
			if (n <= 4097)
				convert_case(from, &fmts[t], 2, shape2, src);
		}
		free(src);
	}
	conf_covered("convert");
}

static void test_convert_from_f32(void **state)
{
	(void)state;
	run_from(&fmts[0]);
}

static void test_convert_from_f16(void **state)
{
	(void)state;
	run_from(&fmts[1]);
}

static void test_convert_from_bf16(void **state)
{
	(void)state;
	run_from(&fmts[2]);
}

CONF_GROUP(convert) = {
	cmocka_unit_test(test_convert_reference),
	cmocka_unit_test(test_convert_from_f32),
	cmocka_unit_test(test_convert_from_f16),
	cmocka_unit_test(test_convert_from_bf16),
};
CONF_GROUP_END(convert);
