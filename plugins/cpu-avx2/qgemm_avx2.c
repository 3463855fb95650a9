/* cpu-avx2's int8 GEMM microkernels (the framework: plugins/cpu/gemm/qgemm.c,
 * layouts: gemm/qgemm.h): AVX2_QGEMM_MR = 4 activation rows × 16 weight
 * rows, each row's 16 int32 sums in two ymm. Per 4 bytes of K: two ymm
 * loads of the weights (16 rows × 4 bytes), then per activation row its 4
 * bytes broadcast and one integer dot per ymm; per sub-block the int32 sums
 * become f32: acc += cvt(sum)·xs·scale (+ offset·xs·Σxq with a min).
 *
 * This file is built twice (meson.build):
 *   avx2_qgemm_s8_4x16_*     any AVX2 CPU: the signed packing (weights as
 *                            s8 bytes w = u − c), vpmaddubsw + vpmaddwd;
 *   avx2_qgemm_u8_4x16_*_u<j>  any AVX2 CPU, the weights whose bytes are
 *                            narrow (below): unsigned, no sign trick;
 *   avx2_qgemm_u8_4x16_isc_<t> the K-quants in the isc mode (below);
 *   avxvnni_qgemm_u8_4x16_*  with -mavxvnni -DAVX2_VNNI: the unsigned
 *                            packing (u8 bytes u), vpdpbusd, which sums four
 *                            u8×s8 products into int32 without saturating.
 *
 * Why vpmaddubsw cannot saturate here. vpmaddubsw multiplies unsigned bytes
 * by signed bytes and adds each pair into an int16 with saturation. The
 * unsigned packing's u reaches 255 (q8_0, iq4_nl, iq4_xs): 2·255·127 =
 * 64770 would saturate. So this kernel takes the signed packing, w in
 * [−128, 127] (gemm/qgemm.h), and moves w's sign onto x (ggml's trick):
 *   w·x = |w| · (sign(w)·x),  |w| in [0, 128] as u8, sign(w)·x as s8.
 * x is a q8_0 byte: x = round(v/d) with d = max|v|/127, so |x| ≤ 127 (never
 * −128, so sign(w)·x is a valid s8 and |sign(w)·x| ≤ 127). Each pair sum is
 * then at most 2·128·127 = 32512 < 32767 in magnitude: no saturation, for
 * every format. vpmaddwd by ones adds pairs of those int16 into int32
 * (|sum| ≤ 65024), and a sub-block (≤ 32 elements) sums at most 32·128·127
 * = 520192 in its int32 lanes.
 */
#include <immintrin.h>

#include "avx2_kernels.h"
#include "cpu_cntx.h"
#include "gemm/qgemm.h"
#include "quant_blocks.h"

#define MR AVX2_QGEMM_MR
#define NR CPU_QGEMM_NR
#define A_SB_BYTES(sb) CPU_QGEMM_A_SB_BYTES(sb, MR)
#define B_SB_BYTES CPU_QGEMM_B_SB_BYTES

typedef int32_t i32_alias __attribute__((may_alias));
typedef float f32_alias __attribute__((may_alias));

#ifndef AVX2_VNNI
/* An empty asm on an accumulator after each add: without it gcc 12
 * reassociates a chain of adds (a narrow run's i16 pair sums, the signed
 * kernel's i32 sums) into a tree, which keeps every group's vpmaddubsw
 * result live at once and spills them: 16 stores and reloads a sub-block
 * in the q4_K kernel, on the vector load ports that its broadcasts need
 * (llvm-mca -mcpu=znver3: 46.6 cycles a sub-block, 33.2 without). 1B
 * prefill layer on Zen 3: q4_0 +31 %, q4_K +23 %, q6_K +12 %, q5_K and
 * iq4_xs +10 % (BENCHMARKS.md, "Session 13"). */
static inline __attribute__((always_inline)) void keep_chain(__m256i *v)
{
	__asm__("" : "+x"(*v));
}
#endif

/* dot[r][h] += the integer dots of 4 bytes of K: the weights' 16 rows
 * (bg: 2 × 32 bytes, rows 8h .. 8h + 7) against activation row r's 4 bytes
 * (ag + 4r); without VNNI each i16 pair sum times the lane's i16 of wsc[h]
 * (1, or the isc mode's sub-block scales). */
static inline __attribute__((always_inline)) void dot_group(__m256i dot[MR][2], const uint8_t *bg,
							    const uint8_t *ag, const __m256i wsc[2])
{
	const __m256i w0 = _mm256_loadu_si256((const __m256i *)bg);
	const __m256i w1 = _mm256_loadu_si256((const __m256i *)(bg + 32));
#ifdef AVX2_VNNI
	(void)wsc;
	for (int r = 0; r < MR; r++) {
		const __m256i x = _mm256_set1_epi32(*(const i32_alias *)(ag + 4 * r));

		dot[r][0] = _mm256_dpbusd_avx_epi32(dot[r][0], w0, x);
		dot[r][1] = _mm256_dpbusd_avx_epi32(dot[r][1], w1, x);
	}
#else
	/* |w| · (sign(w)·x): the header's argument against saturation */
	const __m256i a0 = _mm256_abs_epi8(w0), a1 = _mm256_abs_epi8(w1);

	for (int r = 0; r < MR; r++) {
		const __m256i x = _mm256_set1_epi32(*(const i32_alias *)(ag + 4 * r));
		const __m256i p0 = _mm256_maddubs_epi16(a0, _mm256_sign_epi8(x, w0));
		const __m256i p1 = _mm256_maddubs_epi16(a1, _mm256_sign_epi8(x, w1));

		dot[r][0] = _mm256_add_epi32(dot[r][0], _mm256_madd_epi16(p0, wsc[0]));
		dot[r][1] = _mm256_add_epi32(dot[r][1], _mm256_madd_epi16(p1, wsc[1]));
		keep_chain(&dot[r][0]);
		keep_chain(&dot[r][1]);
	}
#endif
}

static inline __attribute__((always_inline)) void qgemm_body(int64_t nsb, const uint8_t *a, const uint8_t *b,
							     float *c, int64_t ldc, int accumulate, const int sb,
							     const int has_min)
{
	const __m256i ones[2] = { _mm256_set1_epi16(1), _mm256_set1_epi16(1) };
	__m256 acc[MR][2];

	for (int r = 0; r < MR; r++)
		acc[r][0] = acc[r][1] = _mm256_setzero_ps();
	for (int64_t s = 0; s < nsb; s++) {
		const f32_alias *xs = (const f32_alias *)(a + sb * MR);
		const i32_alias *xo = (const i32_alias *)(a + sb * MR + 4 * MR);
		const float *scale = (const float *)(b + NR * sb);
		__m256i dot[MR][2];

		for (int r = 0; r < MR; r++)
			dot[r][0] = dot[r][1] = has_min ? _mm256_setzero_si256() : _mm256_set1_epi32(xo[r]);
		for (int g = 0; g < sb / 4; g++)
			dot_group(dot, b + 4 * NR * g, a + 4 * MR * g, ones);
		for (int r = 0; r < MR; r++)
			for (int h = 0; h < 2; h++) {
				const __m256 sum = _mm256_mul_ps(_mm256_cvtepi32_ps(dot[r][h]), _mm256_set1_ps(xs[r]));

				acc[r][h] = _mm256_fmadd_ps(sum, _mm256_loadu_ps(scale + 8 * h), acc[r][h]);
			}
		if (has_min) {
			const float *off = scale + NR;
			const f32_alias *xsum = (const f32_alias *)xo;

			for (int r = 0; r < MR; r++)
				for (int h = 0; h < 2; h++)
					acc[r][h] = _mm256_fmadd_ps(_mm256_loadu_ps(off + 8 * h), _mm256_set1_ps(xsum[r]),
								    acc[r][h]);
		}
		a += A_SB_BYTES(sb);
		b += B_SB_BYTES(sb, has_min);
	}
	for (int r = 0; r < MR; r++)
		for (int h = 0; h < 2; h++) {
			float *cr = c + r * ldc + 8 * h;

			_mm256_storeu_ps(cr, accumulate ? _mm256_add_ps(acc[r][h], _mm256_loadu_ps(cr)) : acc[r][h]);
		}
}

#ifndef AVX2_VNNI
/* p[r]: the i16 pair sums of groups g0 .. g0 + run − 1 of a sub-block
 * (a, b at its start), weight rows 8h .. 8h + 7 against activation row r. */
static inline __attribute__((always_inline)) void narrow_run(const uint8_t *a, const uint8_t *b, int g0,
							     const int run, const int h, __m256i p[MR])
{
	for (int g = g0; g < g0 + run; g++) {
		const __m256i w = _mm256_loadu_si256((const __m256i *)(b + 4 * NR * g + 32 * h));

		for (int r = 0; r < MR; r++) {
			const __m256i x = _mm256_set1_epi32(*(const i32_alias *)(a + 4 * MR * g + 4 * r));
			const __m256i m = _mm256_maddubs_epi16(w, x);

			p[r] = g == g0 ? m : _mm256_add_epi16(p[r], m);
			keep_chain(&p[r]);
		}
	}
}

/* The narrow microkernels (cpu_qgemm_kernels.ukernel_narrow): weights on
 * the unsigned packing whose bytes stay at or below 2^(4+j) − 1 (class j,
 * struct cpu_qgemm_format.umax). vpmaddubsw then takes u as its unsigned
 * operand as it is, with no sign trick, and its i16 pair sums (at most
 * 2·umax·127 in magnitude) add up in i16 over narrow_run(j) groups of 4
 * bytes of K before one vpmaddwd widens them:
 *   j 0 (u ≤ 15): 8 groups, 8·2·15·127 = 30480;  j 1 (u ≤ 31): 4, 31496;
 *   j 2 (u ≤ 63): 2, 32004;                        j 3 (u ≤ 127): 1, 32258,
 * all below 2^15. Per 32 bytes of weights against one activation row:
 * one vpmaddubsw and a fraction of a vpmaddwd, where the signed kernel
 * above pays a vpsignb, a vpmaddubsw, a vpmaddwd and a vpaddd.
 *
 * The 16 weight rows go in two passes of 8 (h): 4 f32 accumulators, 4
 * i32 sub-block sums and 4 i16 runs fit the 16 ymm registers, where one
 * pass over all 16 rows spilled its sums in the inner loop. The second
 * pass reads the A and B panels again, from L1. */
static inline __attribute__((always_inline)) void narrow_pass(int64_t nsb, const uint8_t *a, const uint8_t *b,
							      float *c, int64_t ldc, int accumulate, const int sb,
							      const int has_min, const int run, const int h)
{
	const __m256i ones = _mm256_set1_epi16(1);
	__m256 acc[MR];

	for (int r = 0; r < MR; r++)
		acc[r] = _mm256_setzero_ps();
	for (int64_t s = 0; s < nsb; s++) {
		const f32_alias *xs = (const f32_alias *)(a + sb * MR);
		const i32_alias *xo = (const i32_alias *)(a + sb * MR + 4 * MR);
		const float *scale = (const float *)(b + NR * sb) + 8 * h;
		__m256i dot[MR];

		for (int r = 0; r < MR; r++)
			dot[r] = has_min ? _mm256_setzero_si256() : _mm256_set1_epi32(xo[r]);
		for (int g0 = 0; g0 < sb / 4; g0 += run) {
			__m256i p[MR];

			narrow_run(a, b, g0, run, h, p);
			for (int r = 0; r < MR; r++)
				dot[r] = _mm256_add_epi32(dot[r], _mm256_madd_epi16(p[r], ones));
		}
		for (int r = 0; r < MR; r++) {
			const __m256 sum = _mm256_mul_ps(_mm256_cvtepi32_ps(dot[r]), _mm256_set1_ps(xs[r]));

			acc[r] = _mm256_fmadd_ps(sum, _mm256_loadu_ps(scale), acc[r]);
		}
		if (has_min) {
			const f32_alias *xsum = (const f32_alias *)xo;

			for (int r = 0; r < MR; r++)
				acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(scale + NR), _mm256_set1_ps(xsum[r]), acc[r]);
		}
		a += A_SB_BYTES(sb);
		b += B_SB_BYTES(sb, has_min);
	}
	for (int r = 0; r < MR; r++) {
		float *cr = c + r * ldc + 8 * h;

		_mm256_storeu_ps(cr, accumulate ? _mm256_add_ps(acc[r], _mm256_loadu_ps(cr)) : acc[r]);
	}
}

/* Groups of 4 bytes of K whose pair sums class j adds in i16 (above),
 * at most a sub-block's. */
#define NARROW_RUN(j, sb) ((8 >> (j)) < (sb) / 4 ? (8 >> (j)) : (sb) / 4)

/* The isc microkernels (cpu_qgemm_kernels.ukernel_isc; gemm/qgemm.h, isc):
 * the narrow kernels' runs of vpmaddubsw, but the vpmaddwd that widens a
 * run multiplies by the sub-block's integer scale (the (sc, sc) lanes of
 * its scale slot) instead of 1, so one int32 sum per row and column
 * covers a whole 256; then Σ k·Σxq by one vpmaddwd per pair of sub-blocks
 * (the trailer's (k_2j, k_2j+1) lanes against xo's (Σxq, Σxq) pair), and
 * per 256 one conversion: without a min the format's c is 2^shift and the
 * two sums meet in int32 (dot − (ksum << shift), exact), with one
 * acc += xs·(d·dot − dmin·ksum). Per sub-block and 8 columns this drops the
 * narrow kernel's conversion, multiply, FMA, xo broadcast and scale load
 * for half a vpmaddwd and a vpaddd: 1.04-1.35x its MAC a cycle on Zen 3,
 * both cores busy (BENCHMARKS.md "Session 17"). Bounds: a run's i16 pair
 * sums stay below 2^15 (the narrow classes); |dot| ≤ 16·(16·63·127)·128
 * < 2^29 for q6_K, the largest; |ksum << 5| ≤ 2^5·16·128·2032 < 2^28. */

static inline __attribute__((always_inline)) void isc_pass(int64_t nsb, const uint8_t *a, const uint8_t *b,
							   float *c, int64_t ldc, int accumulate, const int sb,
							   const int has_min, const int run, const int shift, const int h)
{
	const int nsub = QK_K / sb;
	/* per 256: d[16], dmin[16] f16, then the (k_2j, k_2j+1) pairs [nsub/2][16] */
	const uint8_t *tr = b + nsb * B_SB_BYTES(sb, has_min);
	const __m256i zero = _mm256_setzero_si256();
	__m256 acc[MR];

	for (int r = 0; r < MR; r++)
		acc[r] = _mm256_setzero_ps();
	for (int64_t s0 = 0; s0 < nsb; s0 += nsub, tr += CPU_QGEMM_ISC_TRAILER(sb)) {
		const f32_alias *xs = (const f32_alias *)(a + s0 * A_SB_BYTES(sb) + sb * MR);
		__m256i dot[MR], ksum[MR];

		for (int r = 0; r < MR; r++)
			dot[r] = ksum[r] = zero;
		for (int64_t s = s0; s < s0 + nsub; s++) {
			const uint8_t *as = a + s * A_SB_BYTES(sb), *bs = b + s * B_SB_BYTES(sb, has_min);
			const __m256i sc = _mm256_loadu_si256((const __m256i *)(bs + NR * sb + 32 * h));

			for (int g0 = 0; g0 < sb / 4; g0 += run) {
				__m256i p[MR];

				narrow_run(as, bs, g0, run, h, p);
				for (int r = 0; r < MR; r++) {
					dot[r] = _mm256_add_epi32(dot[r], _mm256_madd_epi16(p[r], sc));
					keep_chain(&dot[r]);
				}
			}
		}
		for (int j = 0; j < nsub / 2; j++) {
			const i32_alias *xo = (const i32_alias *)(a + (s0 + 2 * j) * A_SB_BYTES(sb) + sb * MR + 4 * MR);
			const __m256i k = _mm256_loadu_si256((const __m256i *)(tr + CPU_QGEMM_ISC_KPAIRS(j) + 32 * h));

			for (int r = 0; r < MR; r++) {
				ksum[r] = _mm256_add_epi32(ksum[r], _mm256_madd_epi16(k, _mm256_set1_epi32(xo[r])));
				keep_chain(&ksum[r]);
			}
		}

		const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(tr + CPU_QGEMM_ISC_D + 16 * h)));
		const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(tr + CPU_QGEMM_ISC_DMIN + 16 * h)));

		for (int r = 0; r < MR; r++) {
			const __m256 t = has_min ? _mm256_fnmadd_ps(_mm256_cvtepi32_ps(ksum[r]), dmin,
								    _mm256_mul_ps(_mm256_cvtepi32_ps(dot[r]), d)) :
						   _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(
								   dot[r], _mm256_slli_epi32(ksum[r], shift))), d);

			acc[r] = _mm256_fmadd_ps(t, _mm256_set1_ps(xs[r]), acc[r]);
		}
	}
	for (int r = 0; r < MR; r++) {
		float *cr = c + r * ldc + 8 * h;

		_mm256_storeu_ps(cr, accumulate ? _mm256_add_ps(acc[r], _mm256_loadu_ps(cr)) : acc[r]);
	}
}

/* The isc mode on the signed packing (CPU_QGEMM_ISC_SIGNED_FORMATS: u
 * up to 255, no min): qgemm_body's sign trick, but the vpmaddwd that widens
 * each group's i16 pair sums multiplies them by the sub-block's integer
 * scale (its slot's (sc, sc) lanes) instead of 1, and the int32 sums
 * become f32 once per 256: acc += xs·d·dot. Where qgemm_body converts,
 * scales and adds per sub-block and row, this drops 8 conversions, 8
 * multiplies, 8 FMAs and the xs broadcasts a sub-block: 1.17x its speed on
 * one Zen 3 core in L1 (BENCHMARKS.md "Session 25"). Bounds: a pair sum
 * |p| ≤ 2·127·127 (iq4's |T| ≤ 127), times |sc| ≤ 32, two a lane, 64 groups
 * a 256: 64·2·32258·32 < 2^28. */
static inline __attribute__((always_inline)) void isc_signed_body(int64_t nsb, const uint8_t *a, const uint8_t *b,
								  float *c, int64_t ldc, int accumulate, const int sb)
{
	const int nsub = QK_K / sb;
	const uint8_t *tr = b + nsb * B_SB_BYTES(sb, 0); /* per 256: d[16] f16 (CPU_QGEMM_ISC_D) */
	__m256 acc[MR][2];

	for (int r = 0; r < MR; r++)
		acc[r][0] = acc[r][1] = _mm256_setzero_ps();
	for (int64_t s0 = 0; s0 < nsb; s0 += nsub, tr += CPU_QGEMM_ISC_TRAILER(sb)) {
		const f32_alias *xs = (const f32_alias *)(a + s0 * A_SB_BYTES(sb) + sb * MR);
		__m256i dot[MR][2];

		for (int r = 0; r < MR; r++)
			dot[r][0] = dot[r][1] = _mm256_setzero_si256();
		for (int64_t s = s0; s < s0 + nsub; s++) {
			const uint8_t *as = a + s * A_SB_BYTES(sb), *bs = b + s * B_SB_BYTES(sb, 0);
			const __m256i sc[2] = { _mm256_loadu_si256((const __m256i *)(bs + NR * sb)),
						_mm256_loadu_si256((const __m256i *)(bs + NR * sb + 32)) };

			for (int g = 0; g < sb / 4; g++)
				dot_group(dot, bs + 4 * NR * g, as + 4 * MR * g, sc);
		}
		for (int h = 0; h < 2; h++) {
			const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(tr + CPU_QGEMM_ISC_D + 16 * h)));

			for (int r = 0; r < MR; r++)
				acc[r][h] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(dot[r][h]), d),
							    _mm256_set1_ps(xs[r]), acc[r][h]);
		}
	}
	for (int r = 0; r < MR; r++)
		for (int h = 0; h < 2; h++) {
			float *cr = c + r * ldc + 8 * h;

			_mm256_storeu_ps(cr, accumulate ? _mm256_add_ps(acc[r][h], _mm256_loadu_ps(cr)) : acc[r][h]);
		}
}

#define ISC_SIGNED_UKERNEL(t, T, sb)                                                                          \
	void avx2_qgemm_s8_4x16_isc_##t(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,      \
					 int accumulate)                                                       \
	{                                                                                                     \
		isc_signed_body(nsb, a, b, c, ldc, accumulate, sb);                                           \
	}
CPU_QGEMM_ISC_SIGNED_FORMATS(ISC_SIGNED_UKERNEL)

/* A format's isc microkernel: sb, a min, narrow class j (u ≤ 2^(4+j) − 1),
 * and without a min log2 c (CPU_QGEMM_ISC_FORMATS). */
#define ISC_UKERNEL(t, T, sb, has_min, j, shift)                                                             \
	void avx2_qgemm_u8_4x16_isc_##t(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,     \
					 int accumulate)                                                      \
	{                                                                                                    \
		isc_pass(nsb, a, b, c, ldc, accumulate, sb, has_min, NARROW_RUN(j, sb), shift, 0);            \
		isc_pass(nsb, a, b, c, ldc, accumulate, sb, has_min, NARROW_RUN(j, sb), shift, 1);            \
	}
CPU_QGEMM_ISC_FORMATS(ISC_UKERNEL)

static inline __attribute__((always_inline)) void narrow_body(int64_t nsb, const uint8_t *a, const uint8_t *b,
							      float *c, int64_t ldc, int accumulate, const int sb,
							      const int has_min, const int j)
{
	narrow_pass(nsb, a, b, c, ldc, accumulate, sb, has_min, NARROW_RUN(j, sb), 0);
	narrow_pass(nsb, a, b, c, ldc, accumulate, sb, has_min, NARROW_RUN(j, sb), 1);
}

#define NARROW_UKERNEL(j, sb, has_min, name)                                                          \
	void name(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, int accumulate) \
	{                                                                                             \
		narrow_body(nsb, a, b, c, ldc, accumulate, sb, has_min, j);                           \
	}
#define NARROW_UKERNELS(j)                                                          \
	NARROW_UKERNEL(j, 32, 0, avx2_qgemm_u8_4x16_sb32_u##j)                        \
	NARROW_UKERNEL(j, 32, 1, avx2_qgemm_u8_4x16_sb32_min_u##j)                    \
	NARROW_UKERNEL(j, 16, 0, avx2_qgemm_u8_4x16_sb16_u##j)                        \
	NARROW_UKERNEL(j, 16, 1, avx2_qgemm_u8_4x16_sb16_min_u##j)
NARROW_UKERNELS(0)
NARROW_UKERNELS(1)
NARROW_UKERNELS(2)
NARROW_UKERNELS(3)
#endif

/* One microkernel per sub-block size and offset kind (cpu_qgemm_kernels). */
#ifdef AVX2_VNNI
CPU_QGEMM_UKERNEL(avxvnni_qgemm_u8_4x16_sb32, qgemm_body, 32, 0)
CPU_QGEMM_UKERNEL(avxvnni_qgemm_u8_4x16_sb32_min, qgemm_body, 32, 1)
CPU_QGEMM_UKERNEL(avxvnni_qgemm_u8_4x16_sb16, qgemm_body, 16, 0)
CPU_QGEMM_UKERNEL(avxvnni_qgemm_u8_4x16_sb16_min, qgemm_body, 16, 1)
#else
CPU_QGEMM_UKERNEL(avx2_qgemm_s8_4x16_sb32, qgemm_body, 32, 0)
CPU_QGEMM_UKERNEL(avx2_qgemm_s8_4x16_sb32_min, qgemm_body, 32, 1)
CPU_QGEMM_UKERNEL(avx2_qgemm_s8_4x16_sb16, qgemm_body, 16, 0)
CPU_QGEMM_UKERNEL(avx2_qgemm_s8_4x16_sb16_min, qgemm_body, 16, 1)
#endif
