/* Integer dot products of quantized weight rows with quantized activation
 * rows (ggml's scheme, SPEC/OPERATORS.md): here q8_0 and q4_0 weights
 * against q8_0 activations; the other 32-element formats are
 * matmul_legacy_avx2.c's, the K-quants matmul_kquant_avx2.c's. Every
 * block's integer dot is exact; the block's scales multiply it in f32 and
 * f32 accumulators sum the blocks.
 *
 * Built twice (meson.build, avx2_dot.h): as avx2_* with vpmaddubsw +
 * vpmaddwd, which any AVX2 CPU has, and with -mavxvnni -DAVX2_VNNI as
 * avx2vnni_*, where the u8·s8 dot is one vpdpbusd.
 *
 * Every format is one always-inline body over `rows` weight rows against
 * one activation row (dot_kernel.h), instantiated for vec_dot (1 row) and
 * vec_dot_rows (AVX2_DOT_ROWS): the activation's scales, per-block sums and
 * bytes are loaded once for all rows, and each row's accumulator is an
 * independent chain. Prepared q4_0 weights (plugins/cpu/prepared.h) have
 * their own group kernel, as prepared q4_K weights: x86/prepared_x86.h.
 */
#include "avx2_dot.h"
#include "x86/prepared_x86.h"

#define x_block_q8_0 x_block_plain

static inline struct x_block x_block_q4_0(const struct block_q8_0 *x)
{
	return x_block_offset(x, 8);
}

static inline __m256 row_block_q8_0(const struct block_q8_0 *w, struct x_block x)
{
	return _mm256_cvtepi32_ps(dot_s8s8(_mm256_loadu_si256((const __m256i *)w->qs), x.q));
}

/* Σ (u − 8)·x of one q4_0 block, as Σ u·x − Σ 8·x with u = 0..15. */
static inline __m256 row_block_q4_0(const struct block_q4_0 *w, struct x_block x)
{
	return row_block_offset(nibbles32(w->qs), x);
}

DEFINE_DOT_32(q8_0_rows, q8_0, block_q8_0, 0)
DEFINE_DOT_32(q4_0_rows, q4_0, block_q4_0, 0)
DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_q8_0, avx2_vec_dot_q8_0),
		   DOT_NAME(avx2vnni_vec_dot_rows_q8_0, avx2_vec_dot_rows_q8_0),
		   q8_0_rows, n / QK8_0 * (int64_t)sizeof(struct block_q8_0), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_q4_0, avx2_vec_dot_q4_0),
		   DOT_NAME(avx2vnni_vec_dot_rows_q4_0, avx2_vec_dot_rows_q4_0),
		   q4_0_rows, n / QK4_0 * (int64_t)sizeof(struct block_q4_0), DOT_ROWS)

CPU_DEFINE_DOT_GROUP(DOT_NAME(avx2vnni_dot_q4_0x8, avx2_dot_q4_0x8), q4_0x8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx2vnni_dot_q4_Kx8, avx2_dot_q4_Kx8), q4_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx2vnni_dot_q5_Kx8, avx2_dot_q5_Kx8), q5_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx2vnni_dot_iq4_xsx8, avx2_dot_iq4_xsx8), iq4_xsx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx2vnni_dot_q2_Kx8, avx2_dot_q2_Kx8), q2_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx2vnni_dot_q3_Kx8, avx2_dot_q3_Kx8), q3_Kx8_dot_body)
