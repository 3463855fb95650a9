/* Block weights against activations encoded once per matmul (q8_0 for
 * q8_0/q4_0, q8_K for q4_K/q6_K), in integer arithmetic: each zmm of 64
 * weight bytes (unsigned) meets 64 activation bytes (signed) in one
 * u8×s8 → i32 dot of 4-byte groups, then the block scales apply in f32.
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

/* q4_K × q8_K: d·dx·Σ sc_s·Σ q·x − dmin·dx·Σ m_s·Σ x, the sums of x per
 * 32 from the activation's bsums (once for all rows). */
static DOT_ALWAYS_INLINE void q4_K_rows(int64_t n, const void *wv, int64_t stride, const void *xv, float *out,
				    const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K;
	__m512 acc[DOT_ROWS][2];
	__m256 macc[DOT_ROWS];

	FOR_ROWS(r) {
		acc[r][0] = acc[r][1] = _mm512_setzero_ps();
		macc[r] = _mm256_setzero_ps();
	}
	for (int64_t i = 0; i < nb; i++) {
		const __m256i bs = _mm256_loadu_si256((const __m256i *)x[i].bsums);
		const __m256 xsum = _mm256_cvtepi32_ps(_mm256_madd_epi16(bs, _mm256_set1_epi16(1))); /* Σx per 32 */
		__m512i xq[4];

		load_q8_K(&x[i], xq);
		dot_prefetch_rows(wv, stride, rows, nb * (int64_t)sizeof(struct block_q4_K),
			      i * (int64_t)sizeof(struct block_q4_K), sizeof(struct block_q4_K));
		FOR_ROWS(r) {
			const struct block_q4_K *w = (const struct block_q4_K *)dot_row_at(wv, stride, r) + i;
			const float d = f16_scalar(w->d) * x[i].d, dmin = f16_scalar(w->dmin) * x[i].d;
			uint8_t sc[8], m[8];

			q4_K_scales(w, sc, m);

			const __m256 mins = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)m)));
			const __m512 scales = _mm512_mul_ps(_mm512_set1_ps(d),
				_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)sc))));

			macc[r] = _mm256_fmadd_ps(_mm256_mul_ps(xsum, mins), _mm256_set1_ps(dmin), macc[r]);
			for (int j = 0; j < 4; j++) {
				const __m512i p = dot_u8s8(q4_K_quarter(w, j), xq[j]);

				acc[r][j & 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread_scales(scales, 2 * j, 8),
								acc[r][j & 1]);
			}
		}
	}
	FOR_ROWS(r)
		out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1])) - hsum256(macc[r]);
}

/* q6_K × q8_K: d·dx·Σ_g sc_g·(Σ q·x − 32·Σ x) over the 16 groups of 16,
 * Σ x per group being the activation's bsums. */
static DOT_ALWAYS_INLINE void q6_K_rows(int64_t n, const void *wv, int64_t stride, const void *xv, float *out,
				    const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K;
	__m512 acc[DOT_ROWS][2];
	__m256 bacc[DOT_ROWS];

	FOR_ROWS(r) {
		acc[r][0] = acc[r][1] = _mm512_setzero_ps();
		bacc[r] = _mm256_setzero_ps();
	}
	for (int64_t i = 0; i < nb; i++) {
		const __m256i bs = _mm256_loadu_si256((const __m256i *)x[i].bsums);
		__m512i xq[4];

		load_q8_K(&x[i], xq);
		dot_prefetch_rows(wv, stride, rows, nb * (int64_t)sizeof(struct block_q6_K),
			      i * (int64_t)sizeof(struct block_q6_K), sizeof(struct block_q6_K));
		FOR_ROWS(r) {
			const struct block_q6_K *w = (const struct block_q6_K *)dot_row_at(wv, stride, r) + i;
			const float d = f16_scalar(w->d) * x[i].d;
			const __m128i sc8 = _mm_loadu_si128((const __m128i *)w->scales);
			const __m256i bias = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bs); /* Σ sc·Σx, pairs */
			const __m512 scales = _mm512_mul_ps(_mm512_set1_ps(d),
							    _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc8)));

			bacc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bias), _mm256_set1_ps(32.0f * d), bacc[r]);
			for (int h = 0; h < 2; h++) {
				__m512i lo, hi;

				q6_K_half(w, h, &lo, &hi);
				acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(lo, xq[2 * h])),
							    spread_scales(scales, 8 * h, 4), acc[r][0]);
				acc[r][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(hi, xq[2 * h + 1])),
							    spread_scales(scales, 8 * h + 4, 4), acc[r][1]);
			}
		}
	}
	FOR_ROWS(r)
		out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1])) - hsum256(bacc[r]);
}

DEFINE_DOT_ENTRIES(ISA, q4_K, n / QK_K * (int64_t)sizeof(struct block_q4_K), DOT_ROWS)
DEFINE_DOT_ENTRIES(ISA, q6_K, n / QK_K * (int64_t)sizeof(struct block_q6_K), DOT_ROWS)
