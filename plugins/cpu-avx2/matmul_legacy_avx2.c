/* The other 32-element formats against q8_0 activations (q4_1, q5_0, q5_1,
 * iq4_nl, mxfp4) and iq4_xs against q8_K, in integer arithmetic as
 * matmul_quant_avx2.c's (built twice the same way, avx2_dot.h), the
 * formulas of cpu-avx512's matmul_legacy_avx512.c:
 *
 *   q4_1, q5_1  Σ (d·q + m)·dx·xq = d·dx·Σ q·xq + m·dx·Σ xq, q unsigned
 *               (0..15, 0..31), Σ xq per block once for all rows;
 *   q5_0        Σ (q − 16)·xq = Σ q·xq − Σ 16·xq, as q4_0;
 *   iq4_nl      the 4-bit indices through the code book by vpshufb: with
 *               vpdpbusd T[i] + 128 (unsigned) against xq, − 128·Σ xq once
 *               for all rows; without, |T[i]| ≤ 127 against xq with
 *               T[i]'s sign, as q8_0 does (dot_s8s8);
 *   iq4_xs      |T[i]| and the sign in both builds: each sub-block's
 *               scale rides on vpmaddwd, as the K-quants' do;
 *   mxfp4       its code book (x86/mxfp4_x86.h) + 12, − 12·Σ xq as q5_0.
 */
#include <stddef.h>

#include "avx2_dot.h"
#include "x86/mxfp4_x86.h"

_Static_assert(offsetof(struct block_q4_1, m) == 2 && offsetof(struct block_q5_1, m) == 2, "DOT_MIN");

#define x_block_q4_1 x_block_plain
#define x_block_q5_1 x_block_plain

static inline struct x_block x_block_q5_0(const struct block_q8_0 *x)
{
	return x_block_offset(x, 16);
}

static inline __m256 row_block_q4_1(const struct block_q4_1 *w, struct x_block x)
{
	return _mm256_cvtepi32_ps(dot_u8s8(nibbles32(w->qs), x.q));
}

/* Nibbles plus 16 where the block's qh bit is set: 0..31. */
static inline __m256i q5_bytes(const uint8_t qs[16], const uint8_t qh[4])
{
	return _mm256_or_si256(nibbles32(qs), bits32_to_bytes(qh, 16));
}

static inline __m256 row_block_q5_0(const struct block_q5_0 *w, struct x_block x)
{
	return row_block_offset(q5_bytes(w->qs, w->qh), x);
}

static inline __m256 row_block_q5_1(const struct block_q5_1 *w, struct x_block x)
{
	return _mm256_cvtepi32_ps(dot_u8s8(q5_bytes(w->qs, w->qh), x.q));
}

/* iq4: the code book T[idx], signed (|T| ≤ 127, never 0). */
static inline __m256i iq4_values(__m256i idx)
{
	const __m256i t = _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
					   -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);

	return _mm256_shuffle_epi8(t, idx);
}

/* iq4_nl's activation block: with vpdpbusd, the start −128·Σ x. */
static inline struct x_block x_block_iq4_nl(const struct block_q8_0 *x)
{
#ifdef AVX2_VNNI
	return x_block_offset(x, (char)0x80);
#else
	return x_block_plain(x);
#endif
}

static inline __m256 row_block_iq4_nl(const struct block_iq4_nl *w, struct x_block x)
{
	const __m256i idx = nibbles32(w->qs);

#ifdef AVX2_VNNI
	/* T + 128: 1..241 */
	const __m256i t = _mm256_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, (char)129, (char)141, (char)153, (char)166,
					   (char)181, (char)197, (char)217, (char)241, 1, 24, 45, 63, 79, 93, 106, 118,
					   (char)129, (char)141, (char)153, (char)166, (char)181, (char)197, (char)217,
					   (char)241);

	return _mm256_cvtepi32_ps(_mm256_dpbusd_avx_epi32(x.start, _mm256_shuffle_epi8(t, idx), x.q));
#else
	return _mm256_cvtepi32_ps(dot_s8s8(iq4_values(idx), x.q));
#endif
}

DEFINE_DOT_32(q4_1_rows, q4_1, block_q4_1, 1)
DEFINE_DOT_32(q5_0_rows, q5_0, block_q5_0, 0)
DEFINE_DOT_32(q5_1_rows, q5_1, block_q5_1, 1)
DEFINE_DOT_32(iq4_nl_rows, iq4_nl, block_iq4_nl, 0)
DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_q4_1, avx2_vec_dot_q4_1),
		   DOT_NAME(avx2vnni_vec_dot_rows_q4_1, avx2_vec_dot_rows_q4_1),
		   q4_1_rows, n / QK4_1 * (int64_t)sizeof(struct block_q4_1), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_q5_0, avx2_vec_dot_q5_0),
		   DOT_NAME(avx2vnni_vec_dot_rows_q5_0, avx2_vec_dot_rows_q5_0),
		   q5_0_rows, n / QK5_0 * (int64_t)sizeof(struct block_q5_0), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_q5_1, avx2_vec_dot_q5_1),
		   DOT_NAME(avx2vnni_vec_dot_rows_q5_1, avx2_vec_dot_rows_q5_1),
		   q5_1_rows, n / QK5_1 * (int64_t)sizeof(struct block_q5_1), DOT_ROWS)
DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_iq4_nl, avx2_vec_dot_iq4_nl),
		   DOT_NAME(avx2vnni_vec_dot_rows_iq4_nl, avx2_vec_dot_rows_iq4_nl),
		   iq4_nl_rows, n / QK4_NL * (int64_t)sizeof(struct block_iq4_nl), DOT_ROWS)

/* mxfp4: its code book + 12 (0..24) through vpshufb against x, − 12·Σ x
 * as q5_0's − 16; E8M0 block scales. */
static inline struct x_block x_block_mxfp4(const struct block_q8_0 *x)
{
	return x_block_offset(x, MXFP4_OFFSET);
}

static inline __m256 row_block_mxfp4(const struct block_mxfp4 *w, struct x_block x)
{
	const __m256i t = _mm256_broadcastsi128_si256(_mm_setr_epi8(MXFP4_VALUES_U8));

	return row_block_offset(_mm256_shuffle_epi8(t, nibbles32(w->qs)), x);
}

DEFINE_DOT_32_SCALED(mxfp4_rows, mxfp4, block_mxfp4, mxfp4_scales8, MXFP4_SCALE)
DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_mxfp4, avx2_vec_dot_mxfp4),
		   DOT_NAME(avx2vnni_vec_dot_rows_mxfp4, avx2_vec_dot_rows_mxfp4),
		   mxfp4_rows, n / QK_MXFP4 * (int64_t)sizeof(struct block_mxfp4), DOT_ROWS)

/* The 8 sub-block scales ls − 32 of an iq4_xs block as i16, both halves
 * [s0 .. s7] (splat16(v, j): sub-block j's). */
static inline __m256i iq4_xs_scales(const struct block_iq4_xs *b)
{
	const __m128i ls = _mm_cvtsi64_si128((long long)dot_iq4_xs_ls(b->scales_h, b->scales_l));

	return _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_sub_epi8(ls, _mm_set1_epi8(32))));
}

/* iq4_xs × q8_K: Σ_j d·(ls_j − 32)·dx·Σ T[q]·xq over the 8 sub-blocks of
 * 32, sub-block j the nibbles of qs[16j .. 16j + 15]. */
static DOT_ALWAYS_INLINE void iq4_xs_rows(int64_t n, const void *wv, int64_t stride, const void *xv, float *out,
					  const int rows)
{
	const struct block_q8_K *x = xv;
	const int64_t nb = n / QK_K;
	__m256 acc[DOT_ROWS];

	FOR_ROWS(r)
		acc[r] = _mm256_setzero_ps();
	for (int64_t i = 0; i < nb; i++) {
		dot_prefetch_rows_far(wv, stride, rows, nb * (int64_t)sizeof(struct block_iq4_xs),
				      i * (int64_t)sizeof(struct block_iq4_xs), sizeof(struct block_iq4_xs),
				      DOT_32_PREFETCH_AHEAD);
		FOR_ROWS(r) {
			const struct block_iq4_xs *w = (const struct block_iq4_xs *)dot_row_at(wv, stride, r) + i;
			const __m256i sc = iq4_xs_scales(w);
			__m256i sum = _mm256_setzero_si256();

			for (int j = 0; j < 8; j++) {
				const __m256i t = iq4_values(nibbles32(w->qs + 16 * j));
				const __m256i xq = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * j));

				sum = _mm256_add_epi32(sum, dot_u8s8_scaled(_mm256_sign_epi8(t, t), _mm256_sign_epi8(xq, t),
									    splat16(sc, j)));
			}
			acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(f16(w->d) * x[i].d), _mm256_cvtepi32_ps(sum), acc[r]);
		}
	}
	FOR_ROWS(r)
		out[r] = hsum_ps(acc[r]);
}

DEFINE_DOT_ENTRIES(DOT_NAME(avx2vnni_vec_dot_iq4_xs, avx2_vec_dot_iq4_xs),
		   DOT_NAME(avx2vnni_vec_dot_rows_iq4_xs, avx2_vec_dot_rows_iq4_xs),
		   iq4_xs_rows, n / QK_K * (int64_t)sizeof(struct block_iq4_xs), DOT_ROWS)
