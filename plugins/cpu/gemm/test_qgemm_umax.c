/* struct cpu_qgemm_format.umax bounds every byte its decoder writes: the
 * narrow int8 microkernels (cpu_qgemm_kernels.ukernel_narrow) rely on it to
 * sum vpmaddubsw's pairs in i16 without saturating. Random blocks of every
 * dtype with an int8 packing (random bytes reach every code, grid index
 * and sign), decoded by the framework's decoder; also checks that umax is
 * not loose by more than 2x (a looser bound would send the format to a
 * slower class of kernels without anyone noticing).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemm/qgemm.h"
#include "gemm/test_rng.h"
#include "quant_blocks.h"

static uint32_t rng = 2024;

static uint32_t next(void)
{
	return test_xorshift32(&rng);
}

int main(void)
{
	enum { N = CPU_QGEMM_KC_MAX, ROWS = 2000 };
	int fails = 0, formats = 0;

	for (int32_t t = 0; t < GLLMK_DTYPE_LIMIT; t++) {
		const struct cpu_qgemm_format *f = cpu_qgemm_format(t);
		uint8_t src[N * 2], u[N];
		float scale[N / 16], off[N / 16];
		int max = 0;

		if (!f)
			continue;
		formats++;
		for (int r = 0; r < ROWS; r++) {
			for (int64_t i = 0; i < cpu_row_bytes(t, N); i++)
				src[i] = (uint8_t)next();
			f->decode(src, N, u, scale, off);
			for (int i = 0; i < N; i++)
				max = u[i] > max ? u[i] : max;
		}
		if (max > f->umax || 2 * max < f->umax) {
			fprintf(stderr, "dtype %d: decoded bytes reach %d, umax says %d\n", (int)t, max, f->umax);
			fails++;
		}
	}
	if (formats < 20) {
		fprintf(stderr, "only %d dtypes have an int8 packing\n", formats);
		fails++;
	}
	printf("%s (%d formats)\n", fails ? "FAIL" : "ok: every decoded byte is within its format's umax", formats);
	return fails != 0;
}
