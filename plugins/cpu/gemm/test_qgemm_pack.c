/* An ISA's B packers (cpu-avx512/qgemm_pack_avx512.c,
 * cpu-avx2/qgemm_pack_avx2.c, cpu-neon/qgemm_pack_neon.c) write the same bytes as the framework's
 * cpu_qgemm_pack_b (the reference), unsigned (w_bias 0) and signed
 * (w_bias c, the format's): random blocks of every dtype with a packer, f16 scales random finite values
 * (subnormals included), full and partial panels, kc of one chunk to
 * CPU_QGEMM_KC_MAX, a row stride longer than the packed part. Built once
 * per ISA (plugins/meson.build): ISA is avx512, avx2 or neon, ISA_HEADER
 * its kernels' header, ISA_ISC defined where the ISA has isc packers
 * (pack_b_isc), whose panels are checked against cpu_qgemm_pack_b followed
 * by cpu_qgemm_isc_scales the same way. Exit 77 (skipped) on an x86 CPU
 * that cannot run the ISA (AdvSIMD is AArch64's baseline).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include ISA_HEADER
#include "gemm/qgemm.h"
#include "gemm/test_rng.h"
#include "quant_blocks.h"
#ifdef __x86_64__
#include "x86/x86_features.h"
#endif

#define PACKER_(isa, t) isa##_qgemm_pack_##t
#define ISC_PACKER_(isa, t) isa##_qgemm_pack_isc_##t
#define ISC_PACKER(isa, t) ISC_PACKER_(isa, t)
#define PACKER(isa, t) PACKER_(isa, t)
#define CAN_RUN_(isa) x86_can_run_##isa
#define CAN_RUN(isa) CAN_RUN_(isa)
#define STR_(x) #x
#define STR(x) STR_(x)
#define ISA_NAME STR(ISA)

static uint32_t rng = 12345;

static uint32_t next(void)
{
	return test_xorshift32(&rng);
}

/* A finite f16: any sign and mantissa, exponent 0..30. */
static void put_f16(uint8_t *p)
{
	const uint16_t h = (uint16_t)((next() & 0x83ff) | (next() % 31) << 10);

	memcpy(p, &h, 2);
}

struct case_ {
	const char *name;
	int32_t t;
	cpu_qgemm_pack_fn pack;
	int block, block_bytes;
	int f16_at[2];          /* offsets of the block's f16 fields, −1: none */
};

/* w_bias < 0: the isc packing (c->pack an isc packer). */
static int check(const struct case_ *c, int64_t rows, int64_t kc, int w_bias)
{
	const int64_t row_bytes = (kc / c->block + 1) * c->block_bytes;
	const struct cpu_qgemm_format *f = cpu_qgemm_format(c->t);
	const int64_t len = kc / f->sb * CPU_QGEMM_B_SB_BYTES(f->sb, f->has_min) +
			    (w_bias < 0 ? kc / QK_K * CPU_QGEMM_ISC_TRAILER(f->sb) : 0);
	const int64_t panel_bytes = len + 64; /* the 64 past it: left alone */
	uint8_t *w = malloc((size_t)(rows * row_bytes)), *want = malloc((size_t)panel_bytes),
		*got = malloc((size_t)panel_bytes);
	int bad;

	for (int64_t i = 0; i < rows * row_bytes; i++)
		w[i] = (uint8_t)next();
	for (int64_t r = 0; r < rows; r++)
		for (int64_t b = 0; b < row_bytes / c->block_bytes; b++)
			for (int f = 0; f < 2; f++)
				if (c->f16_at[f] >= 0)
					put_f16(w + r * row_bytes + b * c->block_bytes + c->f16_at[f]);
	memset(want, 0xaa, (size_t)panel_bytes);
	memset(got, 0xaa, (size_t)panel_bytes);
	memset(got, 0x55, (size_t)len); /* a byte the packer leaves differs */
	cpu_qgemm_pack_b(c->t, w_bias < 0 ? 0 : w_bias, w, row_bytes, rows, kc, want);
	if (w_bias < 0)
		cpu_qgemm_isc_scales(c->t, w, row_bytes, rows, kc, want);
	c->pack(w, row_bytes, rows, kc, w_bias < 0 ? 0 : w_bias, got);
	bad = memcmp(want, got, (size_t)panel_bytes) != 0;
	if (bad) {
		int64_t i = 0;

		while (want[i] == got[i])
			i++;
		fprintf(stderr, "%s rows %lld kc %lld w_bias %d: byte %lld of %lld differs (%02x, want %02x)\n",
			c->name, (long long)rows, (long long)kc, w_bias, (long long)i, (long long)len, got[i], want[i]);
	}
	free(w);
	free(want);
	free(got);
	return bad;
}

int main(void)
{
#define CASE(t, T, block, bytes, f16a, f16b) { #t, GLLMK_##T, PACKER(ISA, t), block, bytes, { f16a, f16b } }
	static const struct case_ cases[] = {
		CASE(q4_0, Q4_0, 32, 18, 0, -1),     CASE(iq4_nl, IQ4_NL, 32, 18, 0, -1),
		CASE(q8_0, Q8_0, 32, 34, 0, -1),     CASE(iq4_xs, IQ4_XS, 256, 136, 0, -1),
		CASE(q4_K, Q4_K, 256, 144, 0, 2),    CASE(q5_K, Q5_K, 256, 176, 0, 2),
		CASE(q6_K, Q6_K, 256, 210, 208, -1), CASE(q3_K, Q3_K, 256, 110, 108, -1),
		CASE(q2_K, Q2_K, 256, 84, 80, 82),
	};
	static const int64_t rows[] = { 16, 15, 7, 1 }, kcs[] = { 64, 192, 256, 512 };
	int fails = 0;

#ifdef __x86_64__
	/* the plugin's own verdict (CPUID and the OS's XCR0), not the compiler's */
	struct x86_features f;
	char why[256];

	x86_features_read(&f);
	if (!CAN_RUN(ISA)(&f, why, sizeof(why))) {
		printf("skipped: the %s packers cannot run here: %s\n", ISA_NAME, why);
		return 77;
	}
#endif
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
			for (size_t k = 0; k < sizeof(kcs) / sizeof(kcs[0]); k++)
				for (int rep = 0; rep < 4; rep++)
					if (kcs[k] % cases[i].block == 0) {
						fails += check(&cases[i], rows[r], kcs[k], 0);
						fails += check(&cases[i], rows[r], kcs[k],
							       cpu_qgemm_format(cases[i].t)->c);
					}
#ifdef ISA_ISC
#define ISC_CASE(t, T, block, bytes, f16a, f16b) { #t " isc", GLLMK_##T, ISC_PACKER(ISA, t), block, bytes, { f16a, f16b } }
	static const struct case_ isc_cases[] = {
		ISC_CASE(q4_K, Q4_K, 256, 144, 0, 2),    ISC_CASE(q5_K, Q5_K, 256, 176, 0, 2),
		ISC_CASE(q6_K, Q6_K, 256, 210, 208, -1), ISC_CASE(q3_K, Q3_K, 256, 110, 108, -1),
		ISC_CASE(q2_K, Q2_K, 256, 84, 80, 82),
	};

	for (size_t i = 0; i < sizeof(isc_cases) / sizeof(isc_cases[0]); i++)
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
			for (size_t k = 0; k < sizeof(kcs) / sizeof(kcs[0]); k++)
				for (int rep = 0; rep < 4; rep++)
					if (kcs[k] % QK_K == 0)
						fails += check(&isc_cases[i], rows[r], kcs[k], -1);
#endif
	printf("%s: %s\n", ISA_NAME, fails ? "FAIL" : "ok: every packer writes the reference's bytes");
	return fails != 0;
}
