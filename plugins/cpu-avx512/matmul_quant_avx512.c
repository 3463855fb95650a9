/* Block weights against activations encoded once per matmul (q8_0 for
 * q8_0/q4_0, q8_K for q4_K/q6_K), in integer arithmetic: each zmm of 64
 * weight bytes (unsigned) meets 64 activation bytes (signed) in one
 * u8×s8 → i32 dot of 4-byte groups, then the block scales apply in f32.
 *
 * Built twice (meson.build): with -mavx512vnni that dot is vpdpbusd and the
 * functions are avx512vnni_*; without, vpmaddubsw + vpmaddwd (exact here:
 * every pair sum stays below 2^15) and they are avx512_*.
 */
#include "avx512_blocks.h"
#include "avx512_kernels.h"

#ifdef __AVX512VNNI__
#define ISA(name) avx512vnni_##name
static inline __m512i dot_u8s8(__m512i u, __m512i s)
{
	return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, s);
}
#else
#define ISA(name) avx512_##name
static inline __m512i dot_u8s8(__m512i u, __m512i s)
{
	return _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1));
}
#endif

/* Two 32-byte halves, the second possibly absent (an odd block count). */
static inline __m512i load_pair(const int8_t *a, const int8_t *b)
{
	const __m256i hi = b ? _mm256_loadu_si256((const __m256i *)b) : _mm256_setzero_si256();

	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)), hi, 1);
}

/* Weights stream from DRAM once per matmul, one row per call: at the few
 * instructions per byte these dots take, the hardware prefetcher alone
 * leaves the loads waiting on memory (perf: the stalls sit on the first
 * use of each run's scales; q4_0 and q4_K ran at 35-40% of DRAM speed).
 * Each loop iteration prefetches the `bytes` it consumes, PREFETCH_RUNS
 * iterations ahead (2 KiB for q4_0/q4_K, 3 KiB q6_K, 3.7 KiB q8_0; on
 * Sapphire Rapids one fixed distance of 1, 2 or 4 KiB for all was at best
 * as fast, and slower for some format). Past the row's end it fetches the next row, which is
 * the next call's. */
#define PREFETCH_RUNS 14

static inline void prefetch_run(const void *p, int bytes)
{
	const char *c = (const char *)p + PREFETCH_RUNS * bytes;

	for (int o = 0; o < bytes; o += 64)
		_mm_prefetch(c + o, _MM_HINT_T0);
}

/* -------------------------------------------------- 32-element blocks */

/* The f16 scales of 8 consecutive blocks of `stride` bytes (even, the
 * scale at byte 0 of each): words 0, s, .., 7s (s = stride / 2) picked out
 * by word permutes, then widened. Reads no byte past the 8 blocks: 128
 * bytes when 7s < 64 (q4_0), else 256 (q8_0: 272 bytes of blocks). */
static inline __m256 scales8(const void *p, int stride)
{
	const int s = stride / 2;
	const char *b = p;
	const __m512i z0 = _mm512_loadu_si512(b), z1 = _mm512_loadu_si512(b + 64);
	__m128i h;

	if (7 * s < 64) {
		const __m128i idx = _mm_setr_epi16(0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s);

		h = _mm512_castsi512_si128(_mm512_permutex2var_epi16(z0, _mm512_castsi128_si512(idx), z1));
	} else {
		/* words 4s.. sit in the 128 bytes at 128, as 4s − 64.. */
		const __m128i idx = _mm_setr_epi16(0, s, 2 * s, 3 * s, 4 * s - 64, 5 * s - 64, 6 * s - 64, 7 * s - 64);
		const __m512i z2 = _mm512_loadu_si512(b + 128), z3 = _mm512_loadu_si512(b + 192);
		const __m512i lo = _mm512_permutex2var_epi16(z0, _mm512_castsi128_si512(idx), z1);
		const __m512i hi = _mm512_permutex2var_epi16(z2, _mm512_castsi128_si512(idx), z3);

		h = _mm_mask_blend_epi16(0xf0, _mm512_castsi512_si128(lo), _mm512_castsi512_si128(hi));
	}
	return _mm256_cvtph_ps(h);
}

/* Lanes 0..7 s[2p], 8..15 s[2p+1]: the scales of pair p of 8 blocks. */
static inline __m512 pair_scale(__m256 s, int p)
{
	const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);

	return _mm512_permutexvar_ps(_mm512_add_epi32(idx, _mm512_set1_epi32(2 * p)), _mm512_castps256_ps512(s));
}

/* q8_0 × q8_0 pair: |w| (unsigned) against x with w's sign. */
static inline __m512i q8_0_pair(const struct block_q8_0 *w, const struct block_q8_0 *x, int both)
{
	const __m512i wz = load_pair(w[0].qs, both ? w[1].qs : NULL);
	const __m512i xz = load_pair(x[0].qs, both ? x[1].qs : NULL);
	const __m512i sx = _mm512_mask_sub_epi8(xz, _mm512_movepi8_mask(wz), _mm512_setzero_si512(), xz);

	return dot_u8s8(_mm512_abs_epi8(wz), sx);
}

/* q4_0 × q8_0 pair: Σ(q − 8)·x = Σ q·x − Σ 8·x, both unsigned × signed. */
static inline __m512i q4_0_pair(const struct block_q4_0 *w, const struct block_q8_0 *x, int both)
{
	const __m512i wz = q4_0_pair_bytes(&w[0], both ? &w[1] : &w[0]);
	const __m512i xz = load_pair(x[0].qs, both ? x[1].qs : NULL);

	return _mm512_sub_epi32(dot_u8s8(wz, xz), dot_u8s8(_mm512_set1_epi8(8), xz));
}

/* The same for one pair (or a last single block) at the row's end. */
static inline __m512 pair_scalar_scale(const struct block_q8_0 *x, uint16_t wd0, uint16_t wd1, int both)
{
	const float sa = f16_scalar(wd0) * f16_scalar(x[0].d);
	const float sb = both ? f16_scalar(wd1) * f16_scalar(x[1].d) : 0.0f;

	return _mm512_insertf32x8(_mm512_set1_ps(sa), _mm256_set1_ps(sb), 1);
}

/* The row in runs of 8 blocks, whose 16 scales come in two vector
 * gathers; the last < 8 blocks pair by pair with scalar scales. */
#define DEFINE_DOT_32(wt, wblock)                                                                   \
	float ISA(vec_dot_##wt)(int64_t n, const void *wv, const void *xv)                          \
	{                                                                                           \
		const struct wblock *w = wv;                                                        \
		const struct block_q8_0 *x = xv;                                                    \
		const int64_t nb = n / QK8_0;                                                       \
		__m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;                                     \
		int64_t i = 0;                                                                      \
                                                                                                    \
		for (; i + 8 <= nb; i += 8) {                                                       \
			const __m256 s = _mm256_mul_ps(scales8(w + i, sizeof(*w)), scales8(x + i, sizeof(*x))); \
                                                                                                    \
			prefetch_run(w + i, 8 * sizeof(*w));                                        \
                                                                                                    \
			for (int p = 0; p < 4; p += 2) {                                            \
				const __m512i d0 = wt##_pair(w + i + 2 * p, x + i + 2 * p, 1);      \
				const __m512i d1 = wt##_pair(w + i + 2 * p + 2, x + i + 2 * p + 2, 1); \
                                                                                                    \
				acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), pair_scale(s, p), acc0); \
				acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), pair_scale(s, p + 1), acc1); \
			}                                                                           \
		}                                                                                   \
		for (; i < nb; i += 2) {                                                            \
			const int both = i + 1 < nb;                                                \
			const __m512 sc = pair_scalar_scale(x + i, w[i].d, both ? w[i + 1].d : 0, both); \
                                                                                                    \
			acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(wt##_pair(w + i, x + i, both)), sc, acc0); \
		}                                                                                   \
		return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));                             \
	}

DEFINE_DOT_32(q8_0, block_q8_0)
DEFINE_DOT_32(q4_0, block_q4_0)

/* ----------------------------------------------------------- K-quants */

static inline float hsum256(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* Lane l of the result: s[base + l / per], the scale of the group that
 * i32 lane l of a 64-byte dot belongs to. */
static inline __m512 spread_scales(__m512 s, int base, int per)
{
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(base),
					     _mm512_srlv_epi32(lane, _mm512_set1_epi32(__builtin_ctz(per))));

	return _mm512_permutexvar_ps(idx, s);
}

/* q4_K × q8_K: d·dx·Σ sc_s·Σ q·x − dmin·dx·Σ m_s·Σ x, the sums of x per
 * 32 from the activation's bsums. */
float ISA(vec_dot_q4_K)(int64_t n, const void *wv, const void *xv)
{
	const struct block_q4_K *w = wv;
	const struct block_q8_K *x = xv;
	__m512 acc = _mm512_setzero_ps();
	__m256 macc = _mm256_setzero_ps();

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_scalar(w[i].d) * x[i].d, dmin = f16_scalar(w[i].dmin) * x[i].d;
		uint8_t sc[8], m[8];

		prefetch_run(&w[i], sizeof(w[i]));
		q4_K_scales(&w[i], sc, m);

		const __m256i bs = _mm256_loadu_si256((const __m256i *)x[i].bsums);
		const __m256i xsum = _mm256_madd_epi16(bs, _mm256_set1_epi16(1));       /* Σx per 32 */
		const __m256i mins = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)m));

		macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(xsum, mins)), _mm256_set1_ps(dmin), macc);

		const __m512 scales = _mm512_mul_ps(_mm512_set1_ps(d),
			_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)sc))));

		for (int j = 0; j < 4; j++) {
			const __m512i p = dot_u8s8(q4_K_quarter(&w[i], j), _mm512_loadu_si512(x[i].qs + 64 * j));

			acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), spread_scales(scales, 2 * j, 8), acc);
		}
	}
	return _mm512_reduce_add_ps(acc) - hsum256(macc);
}

/* q6_K × q8_K: d·dx·Σ_g sc_g·(Σ q·x − 32·Σ x) over the 16 groups of 16,
 * Σ x per group being the activation's bsums. */
float ISA(vec_dot_q6_K)(int64_t n, const void *wv, const void *xv)
{
	const struct block_q6_K *w = wv;
	const struct block_q8_K *x = xv;
	__m512 acc = _mm512_setzero_ps();
	__m256 bacc = _mm256_setzero_ps();

	for (int64_t i = 0; i < n / QK_K; i++) {
		const float d = f16_scalar(w[i].d) * x[i].d;
		const __m128i sc8 = _mm_loadu_si128((const __m128i *)w[i].scales);

		prefetch_run(&w[i], sizeof(w[i]));
		const __m256i bs = _mm256_loadu_si256((const __m256i *)x[i].bsums);
		const __m256i bias = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bs);  /* Σ sc·Σx, pairs */

		bacc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bias), _mm256_set1_ps(32.0f * d), bacc);

		const __m512 scales = _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc8)));

		for (int h = 0; h < 2; h++) {
			const int8_t *xq = x[i].qs + 128 * h;
			__m512i lo, hi;

			q6_K_half(&w[i], h, &lo, &hi);
			acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(lo, _mm512_loadu_si512(xq))),
					      spread_scales(scales, 8 * h, 4), acc);
			acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_u8s8(hi, _mm512_loadu_si512(xq + 64))),
					      spread_scales(scales, 8 * h + 4, 4), acc);
		}
	}
	return _mm512_reduce_add_ps(acc) - hsum256(bacc);
}
