/* Block weights against activations encoded once per matmul (here q8_0
 * and q4_0 against q8_0; the K-quants against q8_K are
 * matmul_kquant_avx512.c's), in integer arithmetic: each zmm of 64 weight
 * bytes (unsigned) meets 64 activation bytes (signed) in one u8×s8 → i32
 * dot of 4-byte groups, then the block scales apply in f32.
 *
 * Built twice (meson.build): with -mavx512vnni that dot is vpdpbusd and the
 * functions are avx512vnni_*; without, vpmaddubsw + vpmaddwd (exact here:
 * every pair sum stays below 2^15) and they are avx512_*.
 *
 * Every format is one always-inline body over `rows` weight rows against
 * one activation row, instantiated for 1 row (vec_dot) and for DOT_ROWS
 * (vec_dot_rows): the activation's bytes, scales and per-block sums are
 * loaded and converted once for all rows, and the rows' accumulators are
 * independent chains. One row a call was latency-bound at M = 1 (55-80 %
 * of DRAM speed): each call re-derived everything from the activation.
 */
#include "avx512_dot.h"

static inline struct x_pair x_pair_q8_0(const struct block_q8_0 *x, int both)
{
	return (struct x_pair){ load_pair(x[0].qs, both ? x[1].qs : NULL), _mm512_setzero_si512() };
}

static inline struct x_pair x_pair_q4_0(const struct block_q8_0 *x, int both)
{
	const __m512i q = load_pair(x[0].qs, both ? x[1].qs : NULL);

	return (struct x_pair){ q, _mm512_sub_epi32(_mm512_setzero_si512(), dot_u8s8(_mm512_set1_epi8(8), q)) };
}

/* q8_0 × q8_0 pair: |w| (unsigned) against x with w's sign. */
static inline __m512i row_pair_q8_0(const struct block_q8_0 *w, struct x_pair x, int both)
{
	const __m512i wz = load_pair(w[0].qs, both ? w[1].qs : NULL);
	const __m512i sx = _mm512_mask_sub_epi8(x.q, _mm512_movepi8_mask(wz), _mm512_setzero_si512(), x.q);

	return dot_u8s8(_mm512_abs_epi8(wz), sx);
}

/* q4_0 × q8_0 pair: Σ(q − 8)·x = Σ q·x − Σ 8·x, both unsigned × signed. */
static inline __m512i row_pair_q4_0(const struct block_q4_0 *w, struct x_pair x, int both)
{
	return dot_u8s8_acc(x.start, q4_0_pair_bytes(&w[0], both ? &w[1] : &w[0]), x.q);
}

DEFINE_DOT_32(q8_0, block_q8_0)
DEFINE_DOT_32(q4_0, block_q4_0)
DEFINE_DOT_ENTRIES(ISA, q8_0, n / QK8_0 * (int64_t)sizeof(struct block_q8_0), DOT_ROWS)
DEFINE_DOT_ENTRIES(ISA, q4_0, n / QK4_0 * (int64_t)sizeof(struct block_q4_0), DOT_ROWS)
