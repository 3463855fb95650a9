/* The AVX-512 B packers (qgemm_pack_avx512.c) write the same bytes as the
 * framework's cpu_qgemm_pack_b (the reference): random blocks of every
 * dtype with a packer, f16 scales random finite values (subnormals
 * included), full and partial panels, kc of one chunk to CPU_QGEMM_KC_MAX,
 * a row stride longer than the packed part. Exit 77 (skipped) on a CPU
 * without AVX-512 BW/VL/DQ.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avx512_kernels.h"
#include "gemm/qgemm.h"
#include "gemm/test_rng.h"
#include "quant_blocks.h"
#include "x86/x86_features.h"

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

static int check(const struct case_ *c, int64_t rows, int64_t kc)
{
	const int64_t row_bytes = (kc / c->block + 1) * c->block_bytes;
	const struct cpu_qgemm_format *f = cpu_qgemm_format(c->t);
	const int64_t len = kc / f->sb * (f->sb + (f->has_min ? 8 : 4)) * CPU_QGEMM_NR;
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
	cpu_qgemm_pack_b(c->t, 0, w, row_bytes, rows, kc, want); /* unsigned, as vpdpbusd's */
	c->pack(w, row_bytes, rows, kc, got);
	bad = memcmp(want, got, (size_t)panel_bytes) != 0;
	if (bad) {
		int64_t i = 0;

		while (want[i] == got[i])
			i++;
		fprintf(stderr, "%s rows %lld kc %lld: byte %lld of %lld differs (%02x, want %02x)\n", c->name,
			(long long)rows, (long long)kc, (long long)i, (long long)len, got[i], want[i]);
	}
	free(w);
	free(want);
	free(got);
	return bad;
}

int main(void)
{
	static const struct case_ cases[] = {
		{ "q4_0", GLLMK_Q4_0, avx512_qgemm_pack_q4_0, 32, 18, { 0, -1 } },
		{ "iq4_nl", GLLMK_IQ4_NL, avx512_qgemm_pack_iq4_nl, 32, 18, { 0, -1 } },
		{ "q8_0", GLLMK_Q8_0, avx512_qgemm_pack_q8_0, 32, 34, { 0, -1 } },
		{ "iq4_xs", GLLMK_IQ4_XS, avx512_qgemm_pack_iq4_xs, 256, 136, { 0, -1 } },
		{ "q4_K", GLLMK_Q4_K, avx512_qgemm_pack_q4_K, 256, 144, { 0, 2 } },
		{ "q5_K", GLLMK_Q5_K, avx512_qgemm_pack_q5_K, 256, 176, { 0, 2 } },
		{ "q6_K", GLLMK_Q6_K, avx512_qgemm_pack_q6_K, 256, 210, { 208, -1 } },
		{ "q3_K", GLLMK_Q3_K, avx512_qgemm_pack_q3_K, 256, 110, { 108, -1 } },
		{ "q2_K", GLLMK_Q2_K, avx512_qgemm_pack_q2_K, 256, 84, { 80, 82 } },
	};
	static const int64_t rows[] = { 16, 15, 7, 1 }, kcs[] = { 64, 192, 256, 512 };
	int fails = 0;

	/* the plugin's own verdict (CPUID and the OS's XCR0), not the compiler's */
	struct x86_features f;
	char why[256];

	x86_features_read(&f);
	if (!x86_can_run_avx512(&f, why, sizeof(why))) {
		printf("skipped: cpu-avx512 cannot run here: %s\n", why);
		return 77;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
			for (size_t k = 0; k < sizeof(kcs) / sizeof(kcs[0]); k++)
				for (int rep = 0; rep < 4; rep++)
					if (kcs[k] % cases[i].block == 0)
						fails += check(&cases[i], rows[r], kcs[k]);
	printf("%s\n", fails ? "FAIL" : "ok: every packer writes the reference's bytes");
	return fails != 0;
}
