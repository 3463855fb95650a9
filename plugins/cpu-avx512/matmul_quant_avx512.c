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
#include "x86/prepared_x86.h"

#ifdef __AVX512VNNI__
/* q8_0 × q8_0 with vpdpbusd: w + 128 (unsigned) against x, from the
 * −128·Σ x per 4 bytes that every row starts from. */
static inline struct x_pair x_pair_q8_0(const struct block_q8_0 *x, int both)
{
	const __m512i q = load_pair(x[0].qs, both ? x[1].qs : NULL);

	return (struct x_pair){ q, _mm512_sub_epi32(_mm512_setzero_si512(), dot_u8s8(_mm512_set1_epi8(-128), q)) };
}
#else
static inline struct x_pair x_pair_q8_0(const struct block_q8_0 *x, int both)
{
	return (struct x_pair){ load_pair(x[0].qs, both ? x[1].qs : NULL), _mm512_setzero_si512() };
}
#endif

static inline struct x_pair x_pair_q4_0(const struct block_q8_0 *x, int both)
{
	const __m512i q = load_pair(x[0].qs, both ? x[1].qs : NULL);

	return (struct x_pair){ q, _mm512_sub_epi32(_mm512_setzero_si512(), dot_u8s8(_mm512_set1_epi8(8), q)) };
}

#ifdef __AVX512VNNI__
static inline __m512i row_pair_q8_0(const struct block_q8_0 *w, struct x_pair x, int both)
{
	const __m512i wz = load_pair(w[0].qs, both ? w[1].qs : NULL);

	return dot_u8s8_acc(x.start, _mm512_xor_si512(wz, _mm512_set1_epi8(-128)), x.q);
}
#else
/* q8_0 × q8_0 pair without VNNI: |w| (unsigned) against x with w's sign
 * (vpmaddubsw's pair sums of (w + 128)·x could saturate). */
static inline __m512i row_pair_q8_0(const struct block_q8_0 *w, struct x_pair x, int both)
{
	const __m512i wz = load_pair(w[0].qs, both ? w[1].qs : NULL);
	const __m512i sx = _mm512_mask_sub_epi8(x.q, _mm512_movepi8_mask(wz), _mm512_setzero_si512(), x.q);

	return dot_u8s8(_mm512_abs_epi8(wz), sx);
}
#endif

/* q4_0 × q8_0 pair: Σ(q − 8)·x = Σ q·x − Σ 8·x, both unsigned × signed. */
static inline __m512i row_pair_q4_0(const struct block_q4_0 *w, struct x_pair x, int both)
{
	return dot_u8s8_acc(x.start, q4_0_pair_bytes(&w[0], both ? &w[1] : &w[0]), x.q);
}

DEFINE_DOT_32(q8_0_rows, q8_0, block_q8_0)

/* q4_0 four blocks (72 bytes, every field at an even offset) a step: one
 * word permute gathers their 64 qs bytes, whose low nibbles (elements
 * 0..15 of each block) and high nibbles (16..31) meet the activation's
 * halves gathered the same way, both dots into one i32 vector whose 4-lane
 * groups are the 4 blocks; one cvt, one scale permute (of the 8 scales
 * that scales8 gives per run) and one fma per row and 4 blocks, where
 * DEFINE_DOT_32's pairs take two of each (in L2: 31 GB/s a core against
 * 21). One accumulator per row: 8 rows are enough independent chains, and
 * two spilled. */
#define Q4_0_QIDX _mm512_set_epi16(63, 62, 61, 60, 31, 30, 29, 28, 26, 25, 24, 23, 22, 21, 20, 19, 17, 16, 15, 14, 13, 12, 11, 10, 8, 7, 6, 5, 4, 3, 2, 1)

/* Bytes 0..15 (half 0) or 16..31 (half 1) of the qs of 4 q8_0 blocks. */
static inline __m512i x_quad_half(const struct block_q8_0 *x, int half)
{
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(x[0].qs + 16 * half)));

	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(x[1].qs + 16 * half)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(x[2].qs + 16 * half)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(x[3].qs + 16 * half)), 3);
}

static DOT_ALWAYS_INLINE void q4_0_rows(int64_t n, const void *wv, int64_t stride, const void *xv, float *out,
					 const int rows)
{
	const struct block_q8_0 *x = xv;
	const int64_t nb = n / QK8_0;
	const __m512i m4 = _mm512_set1_epi8(0x0f), qidx = Q4_0_QIDX;
	const __m512i quad = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
	__m512 acc[AVX512_Q4_0_DOT_ROWS][2];
	int64_t i = 0;

	FOR_ROWS(r)
		acc[r][0] = acc[r][1] = _mm512_setzero_ps();
	for (; i + 8 <= nb; i += 8) {
		const __m256 xs = scales8(x + i, sizeof(*x));
		__m512 s[AVX512_Q4_0_DOT_ROWS];

		dot_prefetch_rows_far(wv, stride, rows, nb * (int64_t)sizeof(struct block_q4_0),
				      i * (int64_t)sizeof(struct block_q4_0), 8 * sizeof(struct block_q4_0),
				      DOT_32_PREFETCH_AHEAD);
		FOR_ROWS(r)
			s[r] = _mm512_castps256_ps512(_mm256_mul_ps(
				scales8((const struct block_q4_0 *)dot_row_at(wv, stride, r) + i, sizeof(struct block_q4_0)), xs));
		for (int g = 0; g < 2; g++) {
			const __m512i xlo = x_quad_half(x + i + 4 * g, 0), xhi = x_quad_half(x + i + 4 * g, 1);
			/* −Σ 8·x per 4-byte group, the − 8 of every weight quant */
			const __m512i start = _mm512_sub_epi32(_mm512_setzero_si512(),
				dot_u8s8_acc(dot_u8s8(_mm512_set1_epi8(8), xlo), _mm512_set1_epi8(8), xhi));
			const __m512i sidx = _mm512_add_epi32(quad, _mm512_set1_epi32(4 * g));

			FOR_ROWS(r) {
				const char *w = (const char *)((const struct block_q4_0 *)dot_row_at(wv, stride, r) + i + 4 * g);
				const __m512i z0 = _mm512_loadu_si512(w), z1 = _mm512_loadu_si512(w + 8);
				const __m512i q = _mm512_permutex2var_epi16(z0, qidx, z1);
				const __m512i d = dot_u8s8_acc(dot_u8s8_acc(start, _mm512_and_si512(q, m4), xlo),
							       _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), xhi);

				acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), _mm512_permutexvar_ps(sidx, s[r]), acc[r][0]);
			}
		}
	}
	DOT_32_TAIL_ROWS(q4_0, block_q4_0, DOT_32_F16_SCALE)
	FOR_ROWS(r)
		out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));
}

DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_q8_0, avx512_vec_dot_q8_0),
		   DOT_NAME(avx512vnni_vec_dot_rows_q8_0, avx512_vec_dot_rows_q8_0),
		   q8_0_rows, n / QK8_0 * (int64_t)sizeof(struct block_q8_0), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx512vnni_vec_dot_q4_0, avx512_vec_dot_q4_0),
		   DOT_NAME(avx512vnni_vec_dot_rows_q4_0, avx512_vec_dot_rows_q4_0),
		   q4_0_rows, n / QK4_0 * (int64_t)sizeof(struct block_q4_0), AVX512_Q4_0_DOT_ROWS)

/* Prepared q4_0 weights (plugins/cpu/prepared.h): cpu-avx2's 256-bit group
 * kernel, with AVX512-VNNI's vpdpbusd in the VNNI build. */
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx512vnni_dot_q4_0x8, avx512_dot_q4_0x8), q4_0x8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx512vnni_dot_q4_Kx8, avx512_dot_q4_Kx8), q4_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx512vnni_dot_q5_Kx8, avx512_dot_q5_Kx8), q5_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx512vnni_dot_iq4_xsx8, avx512_dot_iq4_xsx8), iq4_xsx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx512vnni_dot_q2_Kx8, avx512_dot_q2_Kx8), q2_Kx8_dot_body)
CPU_DEFINE_DOT_GROUP(DOT_NAME(avx512vnni_dot_q3_Kx8, avx512_dot_q3_Kx8), q3_Kx8_dot_body)
