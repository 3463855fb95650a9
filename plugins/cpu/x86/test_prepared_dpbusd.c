/* The group kernels' VNNI variants (prepared_x86.h with vpdpbusd, here
 * emulated exactly on AVX2: prepared_dpbusd_emu.c) against the portable
 * group kernels (prepared.c), on every layout: random units (any bytes are
 * a unit; the f16 d and dmin drawn finite), random q8_0 / q8_K activation
 * rows (quants in −127..127, their sums), 1 to 4 rows a call, and an
 * extreme unit (every quant byte 0xff, every activation 127) for the
 * widest integer sums. Results agree to f32 rounding: within 1e-5 of the
 * call's largest output (a row's d·Σ and dmin·Σ terms may cancel, and
 * the two kernels round their difference differently). The cpu-avx2 and cpu-avx512 VNNI tables build the same
 * bodies with the real instruction; no CPU or emulator here has it.
 * Exit 77 (skip, said on stdout) on a CPU that cannot run cpu-avx2.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm/test_rng.h"
#include "prepared.h"
#include "quant_blocks.h"
#include "x86/x86_features.h"

cpu_dot_group_fn emu_dot_q4_0x8, emu_dot_q4_Kx8, emu_dot_q5_Kx8, emu_dot_iq4_xsx8, emu_dot_q2_Kx8, emu_dot_q3_Kx8;

static uint32_t rng = 2026;

struct layout_case {
	const char *name;
	cpu_dot_group_fn *emu, *ref;
	size_t unit;       /* bytes of a unit (8 blocks) */
	int64_t elems;     /* of a block */
	int f16_fields;    /* the unit's leading f16 values (d, dmin) */
	int q8_0;          /* activations q8_0 with sums, else q8_K */
};

static const struct layout_case cases[] = {
	{ "q4_0x8", emu_dot_q4_0x8, cpu_ref_dot_q4_0x8, sizeof(struct cpu_q4_0x8), QK4_0, 8, 1 },
	{ "q4_Kx8", emu_dot_q4_Kx8, cpu_ref_dot_q4_Kx8, sizeof(struct cpu_q4_Kx8), QK_K, 16, 0 },
	{ "q5_Kx8", emu_dot_q5_Kx8, cpu_ref_dot_q5_Kx8, sizeof(struct cpu_q5_Kx8), QK_K, 16, 0 },
	{ "iq4_xsx8", emu_dot_iq4_xsx8, cpu_ref_dot_iq4_xsx8, sizeof(struct cpu_iq4_xsx8), QK_K, 8, 0 },
	{ "q2_Kx8", emu_dot_q2_Kx8, cpu_ref_dot_q2_Kx8, sizeof(struct cpu_q2_Kx8), QK_K, 16, 0 },
	{ "q3_Kx8", emu_dot_q3_Kx8, cpu_ref_dot_q3_Kx8, sizeof(struct cpu_q3_Kx8), QK_K, 8, 0 },
};

static void fill_units(const struct layout_case *c, uint8_t *w, int64_t units, int extreme)
{
	for (int64_t u = 0; u < units; u++) {
		uint8_t *p = w + u * (int64_t)c->unit;

		for (size_t i = 0; i < c->unit; i++)
			p[i] = extreme ? 0xff : (uint8_t)test_xorshift32(&rng);
		for (int f = 0; f < c->f16_fields; f++) {
			const uint16_t h = (uint16_t)(0x2800 + test_xorshift32(&rng) % 0x800);

			memcpy(p + 2 * f, &h, 2);
		}
	}
}

static int8_t quant(int extreme)
{
	return (int8_t)(extreme ? 127 : (int)(test_xorshift32(&rng) % 255) - 127);
}

/* rows activation rows of n elements in the layout's format at x, their
 * q8_0 block sums at xsum. */
static void fill_x(const struct layout_case *c, void *x, int32_t *xsum, int64_t n, int rows, int extreme)
{
	for (int64_t b = 0; b < rows * n / c->elems; b++) {
		if (c->q8_0) {
			struct block_q8_0 *q = (struct block_q8_0 *)x + b;
			const uint16_t d = (uint16_t)(0x2000 + test_xorshift32(&rng) % 0x800);

			q->d = d;
			xsum[b] = 0;
			for (int i = 0; i < QK8_0; i++)
				xsum[b] += q->qs[i] = quant(extreme);
			continue;
		}
		struct block_q8_K *q = (struct block_q8_K *)x + b;

		q->d = 1.0f / (float)(1 + test_xorshift32(&rng) % 1000);
		for (int g = 0; g < QK_K / 16; g++) {
			q->bsums[g] = 0;
			for (int i = 0; i < 16; i++)
				q->bsums[g] = (int16_t)(q->bsums[g] + (q->qs[16 * g + i] = quant(extreme)));
		}
	}
}

/* The largest |difference| over the bound for one case, > 1 a failure. */
static double run_case(const struct layout_case *c, int64_t blocks, int xrows, int extreme)
{
	const int64_t n = blocks * c->elems;
	uint8_t *w = malloc(c->unit * (size_t)blocks);
	char *x = malloc((size_t)(xrows * blocks) * sizeof(struct block_q8_K));
	int32_t *xsum = malloc(sizeof(int32_t) * (size_t)(xrows * blocks));
	float got[CPU_GROUP_X_ROWS * CPU_GROUP_ROWS], want[CPU_GROUP_X_ROWS * CPU_GROUP_ROWS];
	double worst = 0.0;

	if (!w || !x || !xsum)
		abort();
	fill_units(c, w, blocks, extreme);
	fill_x(c, x, xsum, n, xrows, extreme);
	for (int i = 0; i < xrows * CPU_GROUP_ROWS; i++)
		got[i] = NAN;
	c->emu(n, w, x, c->q8_0 ? xsum : NULL, xrows, got);
	c->ref(n, w, x, c->q8_0 ? xsum : NULL, xrows, want);
	double scale = 1e-3;

	for (int i = 0; i < xrows * CPU_GROUP_ROWS; i++)
		scale = fmax(scale, fabs(want[i]));
	for (int i = 0; i < xrows * CPU_GROUP_ROWS; i++) {
		const double bound = 1e-5 * scale;

		if (getenv("SHOW"))
			printf("  %s %d: got %.9g want %.9g\n", c->name, i, got[i], want[i]);
		const double e = isnan(got[i]) ? INFINITY : fabs((double)got[i] - want[i]) / bound;

		if (e > worst)
			worst = e;
	}
	free(w);
	free(x);
	free(xsum);
	return worst;
}

int main(void)
{
	int failed = 0, ran = 0;

	struct x86_features f;
	char why[256];

	x86_features_read(&f);
	if (!x86_can_run_avx2(&f, why, sizeof(why))) {
		printf("SKIP prepared-dpbusd: the emulation needs cpu-avx2's ISA: %s\n", why);
		return 77;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int64_t blocks = 1; blocks <= 9; blocks += 4)
			for (int xrows = 1; xrows <= CPU_GROUP_X_ROWS; xrows++)
				for (int extreme = 0; extreme < 2; extreme++) {
					const double e = run_case(&cases[i], blocks, xrows, extreme);

					ran++;
					if (e > 1.0) {
						printf("FAIL %s blocks=%lld xrows=%d%s: %.3g of the bound\n", cases[i].name,
						       (long long)blocks, xrows, extreme ? " extreme" : "", e);
						failed++;
					}
				}
	printf("prepared-dpbusd: %d of %d cases within 1e-5 of the portable kernels\n", ran - failed, ran);
	return failed != 0;
}
