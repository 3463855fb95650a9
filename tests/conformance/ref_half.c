/* IEEE-style rounding of a double into a narrower binary format, done with
 * exact double arithmetic: scaling by a power of two and rint() (the default
 * rounding mode is to nearest, ties to even) are both exact here. */
#include <math.h>

#include "ref_half.h"

struct binfmt {
	int exp_bits;
	int man_bits;
};

static const struct binfmt fmt_f16 = { .exp_bits = 5, .man_bits = 10 };
static const struct binfmt fmt_bf16 = { .exp_bits = 8, .man_bits = 7 };
static const struct binfmt fmt_f32 = { .exp_bits = 8, .man_bits = 23 };

static uint64_t encode(const struct binfmt *f, double v)
{
	int bias = (1 << (f->exp_bits - 1)) - 1;
	uint64_t exp_all = (1u << f->exp_bits) - 1;
	uint64_t sign = (uint64_t)(signbit(v) ? 1 : 0) << (f->exp_bits + f->man_bits);
	uint64_t one = (uint64_t)1 << f->man_bits;
	double a = fabs(v), q;
	int e;

	if (isnan(v))
		return sign | exp_all << f->man_bits | one >> 1; /* quiet NaN */
	if (isinf(v))
		return sign | exp_all << f->man_bits;
	if (a == 0)
		return sign;
	frexp(a, &e);           /* a = m·2^e, m in [0.5, 1) */
	e -= 1;                 /* a = m'·2^e, m' in [1, 2) */
	if (e < 1 - bias) {
		/* Subnormal: a multiple of 2^(1-bias-man_bits); a result of
		 * `one` lands on the smallest normal by itself. */
		q = rint(ldexp(a, f->man_bits - (1 - bias)));
		return sign | (uint64_t)q;
	}
	q = rint(ldexp(a, f->man_bits - e));
	if (q >= (double)(one << 1)) { /* rounded up to the next binade */
		q /= 2;
		e++;
	}
	if (e > bias)
		return sign | exp_all << f->man_bits;
	return sign | (uint64_t)(e + bias) << f->man_bits | ((uint64_t)q - one);
}

static double decode(const struct binfmt *f, uint64_t bits)
{
	int bias = (1 << (f->exp_bits - 1)) - 1;
	uint64_t exp_all = (1u << f->exp_bits) - 1;
	uint64_t man = bits & (((uint64_t)1 << f->man_bits) - 1);
	uint64_t ex = (bits >> f->man_bits) & exp_all;
	int neg = (bits >> (f->exp_bits + f->man_bits)) & 1;
	double a;

	if (ex == exp_all)
		a = man ? NAN : INFINITY;
	else if (ex == 0)
		a = ldexp((double)man, 1 - bias - f->man_bits);
	else
		a = ldexp((double)(man | (uint64_t)1 << f->man_bits), (int)ex - bias - f->man_bits);
	return neg ? -a : a;
}

static int is_nan(const struct binfmt *f, uint64_t bits)
{
	uint64_t exp_all = (1u << f->exp_bits) - 1;

	return ((bits >> f->man_bits) & exp_all) == exp_all && (bits & (((uint64_t)1 << f->man_bits) - 1));
}

uint16_t ref_f16_bits(double v)
{
	return (uint16_t)encode(&fmt_f16, v);
}

uint16_t ref_bf16_bits(double v)
{
	return (uint16_t)encode(&fmt_bf16, v);
}

uint32_t ref_f32_bits(double v)
{
	return (uint32_t)encode(&fmt_f32, v);
}

double ref_f16_value(uint16_t bits)
{
	return decode(&fmt_f16, bits);
}

double ref_bf16_value(uint16_t bits)
{
	return decode(&fmt_bf16, bits);
}

double ref_f32_value(uint32_t bits)
{
	return decode(&fmt_f32, bits);
}

int ref_f16_is_nan(uint16_t bits)
{
	return is_nan(&fmt_f16, bits);
}

int ref_bf16_is_nan(uint16_t bits)
{
	return is_nan(&fmt_bf16, bits);
}

int ref_f32_is_nan(uint32_t bits)
{
	return is_nan(&fmt_f32, bits);
}

