/* The isc mode's integers (gemm/qgemm.h, isc) against the framework's own
 * f32 packing of the same blocks: for every format with isc integers,
 * random blocks (finite f16 d and dmin, every other byte random), full and
 * partial panels, one and two 256s deep: each sub-block's (sc, sc) lanes
 * times the trailer's f16 d give the f32 scale cpu_qgemm_pack_b writes,
 * bit for bit, and −k times dmin the f32 offset (with a min; without one
 * k is sc, 0 for the signed formats, and dmin 0); the u bytes are left
 * alone and rows past the panel's stay zero. And CPU_QGEMM_ISC_FORMATS,
 * the constants the ISAs' isc packers and microkernels are built with,
 * agrees with cpu_qgemm_format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fp16.h"
#include "gemm/qgemm.h"
#include "gemm/test_rng.h"
#include "quant_blocks.h"

typedef int32_t i32_alias __attribute__((may_alias));
typedef float f32_alias __attribute__((may_alias));

static uint32_t rng = 777;

static uint32_t next(void)
{
	return test_xorshift32(&rng);
}

struct isc_case {
	const char *name;
	int32_t t;
	int f16_at[2]; /* offsets of the block's f16 fields, −1: none */
};

static float lane_f32(const uint8_t *slot, int64_t jj)
{
	return ((const f32_alias *)slot)[jj];
}

static uint16_t lane_u16(const uint8_t *slot, int64_t jj)
{
	uint16_t v;

	memcpy(&v, slot + 2 * jj, 2);
	return v;
}

static int32_t lane_i32(const uint8_t *slot, int64_t jj)
{
	return ((const i32_alias *)slot)[jj];
}

/* Row jj of 256 i of the panels: want (f32 packing) against got (isc). */
static int check_block(const struct isc_case *c, const uint8_t *want, const uint8_t *got, int64_t kc, int64_t jj,
		       int64_t i, int present)
{
	const struct cpu_qgemm_format *f = cpu_qgemm_format(c->t);
	const int64_t sb = f->sb, nsub = QK_K / sb, sb_bytes = CPU_QGEMM_B_SB_BYTES(sb, f->has_min);
	const uint8_t *trailer = got + kc / sb * sb_bytes + i * CPU_QGEMM_ISC_TRAILER(sb);
	const uint16_t d16 = lane_u16(trailer + CPU_QGEMM_ISC_D, jj), dmin16 = lane_u16(trailer + CPU_QGEMM_ISC_DMIN, jj);
	const float d = f16_to_f32(d16), dmin = f16_to_f32(dmin16);
	int bad = 0;

	for (int64_t s = 0; s < nsub; s++) {
		const int64_t at = (i * nsub + s) * sb_bytes + CPU_QGEMM_NR * sb;
		const int32_t lanes = lane_i32(got + at, jj);
		const int16_t sc = (int16_t)(lanes & 0xffff);
		const int32_t pair = lane_i32(trailer + CPU_QGEMM_ISC_KPAIRS(s / 2), jj);
		const int16_t k = (int16_t)(s % 2 ? (uint32_t)pair >> 16 : (uint32_t)pair & 0xffff);
		const float scale = (float)sc * d, want_scale = lane_f32(want + at, jj);

		if (!present) {
			bad |= lanes != 0 || pair != 0 || d16 != 0 || dmin16 != 0;
			continue;
		}
		bad |= (lanes >> 16) != sc || memcmp(&scale, &want_scale, 4) != 0;
		if (f->has_min) {
			const float off = -((float)k * dmin), want_off = lane_f32(want + at + 4 * CPU_QGEMM_NR, jj);

			bad |= memcmp(&off, &want_off, 4) != 0;
		} else { /* the signed formats' k 0: no c·Σxq term (gemm/qgemm.h) */
			bad |= k != (f->umax > 127 ? 0 : sc) || dmin16 != 0;
		}
		if (bad) {
			fprintf(stderr, "%s kc %lld row %lld sub-block %lld: sc %d k %d d %g dmin %g, want scale %g\n",
				c->name, (long long)kc, (long long)jj, (long long)(i * nsub + s), sc, k, d, dmin, want_scale);
			return 1;
		}
	}
	return 0;
}

static int check(const struct isc_case *c, int64_t rows, int64_t kc)
{
	const struct cpu_qgemm_format *f = cpu_qgemm_format(c->t);
	const int64_t row_bytes = cpu_row_bytes(c->t, kc) + cpu_row_bytes(c->t, QK_K); /* longer than packed */
	const int64_t sb = f->sb, sb_bytes = CPU_QGEMM_B_SB_BYTES(sb, f->has_min);
	const int64_t len = kc / sb * sb_bytes, panel_bytes = len + kc / QK_K * CPU_QGEMM_ISC_TRAILER(sb);
	uint8_t *w = malloc((size_t)(rows * row_bytes)), *want = malloc((size_t)panel_bytes),
		*got = malloc((size_t)panel_bytes);
	int bad = 0;

	for (int64_t b = 0; b < rows * row_bytes; b++)
		w[b] = (uint8_t)next();
	for (int64_t r = 0; r < rows; r++)
		for (int64_t b = 0; b < row_bytes / cpu_row_bytes(c->t, QK_K); b++)
			for (int h = 0; h < 2; h++)
				if (c->f16_at[h] >= 0) { /* finite: exponent 0..30 */
					const uint16_t v = (uint16_t)((next() & 0x83ff) | (next() % 31) << 10);

					memcpy(w + r * row_bytes + b * cpu_row_bytes(c->t, QK_K) + c->f16_at[h], &v, 2);
				}
	memset(want, 0xaa, (size_t)panel_bytes);
	memset(got, 0x55, (size_t)panel_bytes);
	cpu_qgemm_pack_b(c->t, 0, w, row_bytes, rows, kc, want);
	cpu_qgemm_pack_b(c->t, 0, w, row_bytes, rows, kc, got);
	cpu_qgemm_isc_scales(c->t, w, row_bytes, rows, kc, got);
	for (int64_t s = 0; s < kc / sb; s++) /* the u bytes: untouched */
		bad |= memcmp(want + s * sb_bytes, got + s * sb_bytes, (size_t)(sb * CPU_QGEMM_NR)) != 0;
	if (bad)
		fprintf(stderr, "%s kc %lld: the isc pass changed u bytes\n", c->name, (long long)kc);
	for (int64_t jj = 0; jj < CPU_QGEMM_NR && !bad; jj++)
		for (int64_t i = 0; i < kc / QK_K && !bad; i++)
			bad |= check_block(c, want, got, kc, jj, i, jj < rows);
	free(w);
	free(want);
	free(got);
	return bad;
}

/* 1 (and why) unless `listed` is the number of formats with isc integers. */
static int count_isc_formats(const char *who, size_t listed)
{
	size_t n = 0;

	for (int32_t t = 0; t < GLLMK_DTYPE_LIMIT; t++)
		n += cpu_qgemm_format(t) && cpu_qgemm_format(t)->isc;
	if (n == listed)
		return 0;
	fprintf(stderr, "%zu formats have isc integers, %s lists %zu\n", n, who, listed);
	return 1;
}

/* CPU_QGEMM_ISC_FORMATS (the ISAs' compile-time copy) against
 * cpu_qgemm_format: every isc format listed once, with its sb, has_min,
 * narrow class (the least j with umax ≤ 2^(4+j) − 1) and, without a min,
 * c = 2^shift; CPU_QGEMM_ISC_SIGNED_FORMATS's have no min and u above 127
 * (class 4 here, c = 128: the signed packing's bias). */
static int check_constants(void)
{
	struct listed {
		const char *name;
		int32_t t;
		int sb, has_min, j, shift;
	};
#define LISTED(t, T, sb, has_min, j, shift) { #t, GLLMK_##T, sb, has_min, j, shift },
#define SIGNED(t, T, sb) { #t, GLLMK_##T, sb, 0, 4, 7 },
	static const struct listed list[] = { CPU_QGEMM_ISC_FORMATS(LISTED) CPU_QGEMM_ISC_SIGNED_FORMATS(SIGNED) };
	int bad = count_isc_formats("CPU_QGEMM_ISC_FORMATS and _SIGNED_FORMATS", sizeof(list) / sizeof(list[0]));

	for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
		const struct listed *l = &list[i];
		const struct cpu_qgemm_format *f = cpu_qgemm_format(l->t);
		int j = 0;

		while (f && f->umax > (16 << j) - 1)
			j++;
		if (!f || !f->isc || f->sb != l->sb || f->has_min != l->has_min || j != l->j ||
		    (f->has_min ? l->shift != 0 : f->c != 1 << l->shift)) {
			fprintf(stderr, "CPU_QGEMM_ISC_FORMATS: %s (sb %d, min %d, class %d, shift %d) disagrees with "
				"cpu_qgemm_format\n", l->name, l->sb, l->has_min, l->j, l->shift);
			bad = 1;
		}
	}
	return bad;
}

int main(void)
{
	static const struct isc_case cases[] = {
		{ "q2_K", GLLMK_Q2_K, { 80, 82 } }, { "q3_K", GLLMK_Q3_K, { 108, -1 } },
		{ "q4_K", GLLMK_Q4_K, { 0, 2 } },   { "q5_K", GLLMK_Q5_K, { 0, 2 } },
		{ "q6_K", GLLMK_Q6_K, { 208, -1 } }, { "iq4_xs", GLLMK_IQ4_XS, { 0, -1 } },
	};
	static const int64_t rows[] = { 16, 7, 1 }, kcs[] = { 256, 512 };
	int fails = count_isc_formats("the test", sizeof(cases) / sizeof(cases[0]));

	fails += check_constants();
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
			for (size_t k = 0; k < sizeof(kcs) / sizeof(kcs[0]); k++)
				for (int rep = 0; rep < 8; rep++)
					fails += check(&cases[c], rows[r], kcs[k]);
	printf("%s (%zu formats)\n", fails ? "FAIL" : "ok: the isc integers give the f32 packing's scales and offsets",
	       sizeof(cases) / sizeof(cases[0]));
	return fails != 0;
}
