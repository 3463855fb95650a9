/* Integer dot products of quantized weight rows with quantized activation
 * rows (ggml's scheme, SPEC/OPERATORS.md): q8_0 and q4_0 weights against
 * q8_0 activations, q4_K and q6_K against q8_K. Every block's integer dot
 * is exact; the block's scales multiply it in f32 and f32 accumulators sum
 * the blocks.
 *
 * Compiled twice (meson.build): as avx2_* with vpmaddubsw + vpmaddwd, which
 * any AVX2 CPU has, and with -mavxvnni -DAVX2_VNNI as avx2vnni_*, where the
 * u8·s8 dot of the 32-element blocks is one vpdpbusd. The K-quants keep
 * vpmaddubsw in both: their sub-block scale rides on the vpmaddwd that
 * follows it for free, which vpdpbusd would have to pay for with a
 * vpmulld.
 *
 * Every format is one always-inline body over `rows` weight rows against
 * one activation row (dot_rows.h), instantiated for vec_dot (1 row) and
 * vec_dot_rows (AVX2_DOT_ROWS): the activation's scales, per-block sums and
 * (32-element blocks) bytes are loaded once for all rows, and each row's
 * accumulator is an independent chain.
 */
#include <immintrin.h>

#include "avx2_kernels.h"
#include "dot_rows.h"
#include "quant_blocks.h"

#ifdef AVX2_VNNI
#define ISA(name) avx2vnni_##name
#else
#define ISA(name) avx2_##name
#endif

/* ------------------------------------------------------------ helpers */

static inline float hsum_ps(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline float hsum_ps128(__m128 s)
{
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline float f16(uint16_t h)
{
	return _cvtsh_ss(h);
}

/* Σ u·s over each group of 4 bytes, u unsigned, s signed: 8 i32 lanes. */
static inline __m256i dot_u8s8(__m256i u, __m256i s)
{
#ifdef AVX2_VNNI
	return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
	/* pairs of u·s fit i16: |u| <= 128, |s| <= 127 */
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/* -------------------------------------------------- 32-element blocks */

/* An activation block as every row meets it: its bytes and what each
 * row's dot starts from (q4_0: Σ 8·x, the − 8 of every weight quant,
 * once for all rows; as vpmaddubsw's i16 pairs, or vpdpbusd's negated
 * i32 groups). */
struct x_block {
	__m256i q, start;
};

static inline struct x_block x_block_q8_0(const struct block_q8_0 *x)
{
	return (struct x_block){ _mm256_loadu_si256((const __m256i *)x->qs), _mm256_setzero_si256() };
}

static inline struct x_block x_block_q4_0(const struct block_q8_0 *x)
{
	const __m256i q = _mm256_loadu_si256((const __m256i *)x->qs);

#ifdef AVX2_VNNI
	return (struct x_block){ q, _mm256_sub_epi32(_mm256_setzero_si256(), dot_u8s8(_mm256_set1_epi8(8), q)) };
#else
	return (struct x_block){ q, _mm256_maddubs_epi16(_mm256_set1_epi8(8), q) };
#endif
}

/* Σ w·x of one q8_0 block pair: |w| against x with w's sign moved onto x. */
static inline __m256 row_block_q8_0(const struct block_q8_0 *w, struct x_block x)
{
	const __m256i wq = _mm256_loadu_si256((const __m256i *)w->qs);

	return _mm256_cvtepi32_ps(dot_u8s8(_mm256_sign_epi8(wq, wq), _mm256_sign_epi8(x.q, wq)));
}

/* Σ (u − 8)·x of one q4_0 block, as Σ u·x − Σ 8·x with u = 0..15
 * unsigned: low nibbles are elements 0..15, high nibbles 16..31. */
static inline __m256 row_block_q4_0(const struct block_q4_0 *w, struct x_block x)
{
	/* the 16 bytes in both halves, the upper half shifted down a nibble:
	 * no cross-lane shuffle (port 5) */
	const __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)w->qs));
	const __m256i u = _mm256_and_si256(_mm256_srlv_epi32(q, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
					   _mm256_set1_epi8(0x0f));

#ifdef AVX2_VNNI
	return _mm256_cvtepi32_ps(_mm256_dpbusd_avx_epi32(x.start, u, x.q));
#else
	/* pairs of u·x and of 8·x fit i16, and so does their difference */
	const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(u, x.q), x.start);

	return _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
#endif
}

/* The f16 scales of 8 consecutive blocks (stride bytes apart) as f32:
 * eight 16-bit inserts and one vcvtph2ps. Scalar conversions cost a
 * quarter of a block's work at memory speed; this costs a few uops. Not
 * vpgatherdd: microcoded and slow where the Downfall (GDS) mitigation is
 * on, and qemu 7.2's TCG computes it wrong in the multi-row loops (the
 * CI's Haswell run). */
static inline __m256 f16_scales8(const uint16_t *d0, int stride)
{
	const char *p = (const char *)d0;
	__m128i h = _mm_cvtsi32_si128(*d0);

	h = _mm_insert_epi16(h, *(const uint16_t *)(p + stride), 1);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 2 * stride), 2);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 3 * stride), 3);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 4 * stride), 4);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 5 * stride), 5);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 6 * stride), 6);
	h = _mm_insert_epi16(h, *(const uint16_t *)(p + 7 * stride), 7);
	return _mm256_cvtph_ps(h);
}

/* Groups of 8 blocks: their 8 scale products per row computed at once,
 * then each block's integer dot scaled into its row's accumulator (the
 * rows are the independent chains). */
#define DEFINE_DOT_32(t, wblock)                                                                    \
	static DOT_ALWAYS_INLINE void t##_rows(int64_t n, const void *wv, int64_t stride, const void *xv, \
					       float *out, const int rows)                              \
	{                                                                                           \
		const struct block_q8_0 *x = xv;                                                    \
		const int64_t nb = n / QK8_0;                                                       \
		__m256 acc[AVX2_DOT_ROWS][2];                                                       \
		_Alignas(32) float d[AVX2_DOT_ROWS][8];                                             \
		int64_t i = 0;                                                                      \
                                                                                                    \
		FOR_ROWS(r)                                                                         \
			acc[r][0] = acc[r][1] = _mm256_setzero_ps();                                \
		for (; i + 8 <= nb; i += 8) {                                                       \
			const __m256 xs = f16_scales8(&x[i].d, sizeof(*x));                         \
                                                                                                    \
			dot_prefetch_rows(wv, stride, rows, nb * (int64_t)sizeof(struct wblock),    \
					  i * (int64_t)sizeof(struct wblock), 8 * sizeof(struct wblock)); \
			FOR_ROWS(r) {                                                               \
				const struct wblock *w = dot_row_at(wv, stride, r);                 \
                                                                                                    \
				_mm256_store_ps(d[r], _mm256_mul_ps(f16_scales8(&w[i].d, sizeof(*w)), xs)); \
			}                                                                           \
			for (int u = 0; u < 8; u++) {                                               \
				const struct x_block xb = x_block_##t(&x[i + u]);                   \
                                                                                                    \
				FOR_ROWS(r) {                                                       \
					const struct wblock *w = dot_row_at(wv, stride, r);         \
                                                                                                    \
					acc[r][u & 1] = _mm256_fmadd_ps(_mm256_broadcast_ss(&d[r][u]), \
						row_block_##t(&w[i + u], xb), acc[r][u & 1]);       \
				}                                                                   \
			}                                                                           \
		}                                                                                   \
		for (; i < nb; i++) {                                                               \
			const struct x_block xb = x_block_##t(&x[i]);                               \
                                                                                                    \
			FOR_ROWS(r) {                                                               \
				const struct wblock *w = dot_row_at(wv, stride, r);                 \
                                                                                                    \
				acc[r][0] = _mm256_fmadd_ps(_mm256_set1_ps(f16(w[i].d) * f16(x[i].d)), \
							    row_block_##t(&w[i], xb), acc[r][0]);   \
			}                                                                           \
		}                                                                                   \
		FOR_ROWS(r)                                                                         \
			out[r] = hsum_ps(_mm256_add_ps(acc[r][0], acc[r][1]));                      \
	}

DEFINE_DOT_32(q8_0, block_q8_0)
DEFINE_DOT_32(q4_0, block_q4_0)
DEFINE_DOT_ENTRIES(ISA, q8_0, n / QK8_0 * (int64_t)sizeof(struct block_q8_0), AVX2_DOT_ROWS)
DEFINE_DOT_ENTRIES(ISA, q4_0, n / QK4_0 * (int64_t)sizeof(struct block_q4_0), AVX2_DOT_ROWS)

/* ---------------------------------------------------------- K-quants */

/* vpshufb patterns broadcasting 16-bit lane j of a 128-bit half to all 8
 * lanes (the same in both halves). */
#define SPLAT_W16(j) 2 * (j), 2 * (j) + 1
#define SPLAT_W16_X8(j) SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j), \
			SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j), SPLAT_W16(j)
static const uint8_t splat_w16[8][32] __attribute__((aligned(32))) = {
#define SPLAT_ROW(j) { SPLAT_W16_X8(j), SPLAT_W16_X8(j) }
	SPLAT_ROW(0), SPLAT_ROW(1), SPLAT_ROW(2), SPLAT_ROW(3),
	SPLAT_ROW(4), SPLAT_ROW(5), SPLAT_ROW(6), SPLAT_ROW(7),
#undef SPLAT_ROW
};

/* vpshufb patterns for q6_K: bytes 2g eight times, then 2g + 1 eight times
 * (the scales of the two 16-element groups of 32-element chunk g). */
#define REP8(b) b, b, b, b, b, b, b, b
static const uint8_t pair_of_scales[8][16] __attribute__((aligned(16))) = {
#define PAIR_ROW(g) { REP8(2 * (g)), REP8(2 * (g) + 1) }
	PAIR_ROW(0), PAIR_ROW(1), PAIR_ROW(2), PAIR_ROW(3),
	PAIR_ROW(4), PAIR_ROW(5), PAIR_ROW(6), PAIR_ROW(7),
#undef PAIR_ROW
};

/* q4_K's 12 bytes of 6-bit scales and mins as 8 scales then 8 mins, one
 * byte each (the packing: SPEC/QUANT.md; k4_scale_min in quant_ref.c). */
static inline void q4_K_scales(const uint8_t s[K_SCALE_SIZE], uint32_t out[4])
{
	const uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, low2 = 0x03030303;
	uint32_t u[3];

	__builtin_memcpy(u, s, sizeof(u));
	out[0] = u[0] & low6;                                           /* scales 0..3 */
	out[1] = (u[2] & low4) | ((u[0] >> 6) & low2) << 4;             /* scales 4..7 */
	out[2] = u[1] & low6;                                           /* mins 0..3 */
	out[3] = ((u[2] >> 4) & low4) | ((u[1] >> 6) & low2) << 4;      /* mins 4..7 */
}

/* One q4_K block of one row: Σ_j d·sc_j·Σ q·x into acc, − dmin·Σ_j m_j·Σ x
 * into acc_min, the sums of x per 32 (bsums) shared by the rows. */
static DOT_ALWAYS_INLINE void q4_K_block(const struct block_q4_K *w, const struct block_q8_K *x, __m128i bsums,
					 __m256 *acc, __m128 *acc_min)
{
	const __m256i low4 = _mm256_set1_epi8(0x0f);
	uint32_t sm[4];

	q4_K_scales(w->scales, sm);

	const __m128i mins = _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, (int)sm[3], (int)sm[2]));
	const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_set_epi32(0, 0, (int)sm[1], (int)sm[0])));
	const uint8_t *q = w->qs;
	const int8_t *xq = x->qs;
	__m256i sum = _mm256_setzero_si256();

	*acc_min = _mm_fmadd_ps(_mm_set1_ps(-x->d * f16(w->dmin)), _mm_cvtepi32_ps(_mm_madd_epi16(mins, bsums)),
				*acc_min);
	for (int j = 0; j < 4; j++, q += 32, xq += 64) {
		const __m256i qv = _mm256_loadu_si256((const __m256i *)q);
		const __m256i lo = _mm256_and_si256(qv, low4);
		const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(qv, 4), low4);
		const __m256i sc_lo = _mm256_shuffle_epi8(scales, _mm256_load_si256((const __m256i *)splat_w16[2 * j]));
		const __m256i sc_hi = _mm256_shuffle_epi8(scales, _mm256_load_si256((const __m256i *)splat_w16[2 * j + 1]));
		/* pairs of q·x <= 2·15·127 fit i16 */
		const __m256i p_lo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)xq));
		const __m256i p_hi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(xq + 32)));

		sum = _mm256_add_epi32(sum, _mm256_add_epi32(_mm256_madd_epi16(p_lo, sc_lo), _mm256_madd_epi16(p_hi, sc_hi)));
	}
	*acc = _mm256_fmadd_ps(_mm256_set1_ps(x->d * f16(w->d)), _mm256_cvtepi32_ps(sum), *acc);
}

static DOT_ALWAYS_INLINE void q4_K_rows(int64_t n, const void *wv, int64_t stride, const void *xv, float *out,
					const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K;
	__m256 acc[AVX2_DOT_ROWS];
	__m128 acc_min[AVX2_DOT_ROWS];

	FOR_ROWS(r) {
		acc[r] = _mm256_setzero_ps();
		acc_min[r] = _mm_setzero_ps();
	}
	for (int64_t i = 0; i < nb; i++) {
		const __m128i bsums = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)x[i].bsums),
						     _mm_loadu_si128((const __m128i *)(x[i].bsums + 8)));

		dot_prefetch_rows(wv, stride, rows, nb * (int64_t)sizeof(struct block_q4_K),
				  i * (int64_t)sizeof(struct block_q4_K), sizeof(struct block_q4_K));
		FOR_ROWS(r)
			q4_K_block((const struct block_q4_K *)dot_row_at(wv, stride, r) + i, &x[i], bsums, &acc[r],
				   &acc_min[r]);
	}
	FOR_ROWS(r)
		out[r] = hsum_ps(acc[r]) + hsum_ps128(acc_min[r]);
}

/* q6_K: 6-bit q = 0..63 stands for q − 32; Σ sc_g·Σ (q − 32)·x over the
 * 16 groups of 16 = Σ sc_g·Σ q·x − 32·Σ sc_g·bsum_g (bsums shared by the
 * rows). */
static DOT_ALWAYS_INLINE void q6_K_block(const struct block_q6_K *w, const struct block_q8_K *x, __m256i bsums,
					 __m256 *acc)
{
	const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
	const __m128i sc8 = _mm_loadu_si128((const __m128i *)w->scales);
	const __m256i bias = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), bsums);
	const int8_t *xq = x->qs;
	__m256i sum = _mm256_setzero_si256();

	for (int h = 0; h < 2; h++) {
		const uint8_t *ql = w->ql + 64 * h, *qh = w->qh + 32 * h;
		const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
		const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
		const __m256i hb = _mm256_loadu_si256((const __m256i *)qh);
		/* elements 0..31, 32..63, 64..95, 96..127 of this half:
		 * a nibble of ql and 2 bits of qh moved to bits 4..5 */
		const __m256i q[4] = {
			_mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), bits45)),
			_mm256_or_si256(_mm256_and_si256(l1, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), bits45)),
			_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4), _mm256_and_si256(hb, bits45)),
			_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
					_mm256_and_si256(_mm256_srli_epi16(hb, 2), bits45)),
		};

		for (int c = 0; c < 4; c++, xq += 32) {
			const __m256i sc = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(
				sc8, _mm_load_si128((const __m128i *)pair_of_scales[4 * h + c])));
			/* pairs of q·x <= 2·63·127 fit i16 */
			const __m256i p = _mm256_maddubs_epi16(q[c], _mm256_loadu_si256((const __m256i *)xq));

			sum = _mm256_add_epi32(sum, _mm256_madd_epi16(p, sc));
		}
	}
	sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(bias, 5));
	*acc = _mm256_fmadd_ps(_mm256_set1_ps(x->d * f16(w->d)), _mm256_cvtepi32_ps(sum), *acc);
}

static DOT_ALWAYS_INLINE void q6_K_rows(int64_t n, const void *wv, int64_t stride, const void *xv, float *out,
					const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K;
	__m256 acc[AVX2_DOT_ROWS];

	FOR_ROWS(r)
		acc[r] = _mm256_setzero_ps();
	for (int64_t i = 0; i < nb; i++) {
		const __m256i bsums = _mm256_loadu_si256((const __m256i *)x[i].bsums);

		dot_prefetch_rows(wv, stride, rows, nb * (int64_t)sizeof(struct block_q6_K),
				  i * (int64_t)sizeof(struct block_q6_K), sizeof(struct block_q6_K));
		FOR_ROWS(r)
			q6_K_block((const struct block_q6_K *)dot_row_at(wv, stride, r) + i, &x[i], bsums, &acc[r]);
	}
	FOR_ROWS(r)
		out[r] = hsum_ps(acc[r]);
}

DEFINE_DOT_ENTRIES(ISA, q4_K, n / QK_K * (int64_t)sizeof(struct block_q4_K), AVX2_DOT_ROWS)
DEFINE_DOT_ENTRIES(ISA, q6_K, n / QK_K * (int64_t)sizeof(struct block_q6_K), AVX2_DOT_ROWS)
