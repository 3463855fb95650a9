/* The attention inner loops, written once against simd.h and compiled
 * like rows_simd.c: into avx2_* (AVX2 + FMA + F16C), avx512_* (AVX-512
 * F/BW/VL/DQ) and neon_* (AdvSIMD). f16, bf16, q8_0 and q4_0 K and V rows
 * are converted in registers (vcvtph2ps, fcvtl, a shift, widened bytes
 * times the block's scale) instead of being decoded to a buffer first.
 * Contracts: cpu_cntx.h (axpy_f32, dot_f32_f16, axpy_f16, attn). Every
 * loop runs whole vectors, then one masked partial vector: no access past n.
 *
 * The chunk kernels (attn[f32, f16, bf16, q8_0, q4_0]) work on a chunk of tokens for
 * the query heads of one GQA group, so that each K or V element is loaded
 * and converted once per group instead of once per query head:
 *   scores: a block of hb heads × VEC_WIDTH/hb tokens keeps VEC_WIDTH dot
 *     accumulators in registers; one K vector feeds hb FMAs. The block's
 *     VEC_WIDTH dots are reduced together (sum_lanes: a transpose-add
 *     tree, about two shuffles per dot instead of a full reduction each).
 *   accum: a tile of hb heads × ACC_VECS vectors of acc stays in registers
 *     over the chunk's tokens; one V vector feeds hb FMAs, the weights are
 *     broadcast from memory.
 *   scores_t (a prompt's block of queries): the scores of R query rows (a
 *     few queries × the group's heads) as an outer product, R in the
 *     vector lanes: the rows come as a panel qt[e][r] (transposed once per
 *     work item by the framework), each K element of a few tokens decoded
 *     once and broadcast into ST_RVT row vectors. No lane reductions: the
 *     dot form above runs at about a third of the FMA peak on Zen 3.
 * The blocks are always_inline with constant sizes, so the compiler keeps
 * the tiles in registers.
 */
#include <string.h>

#include "attn_simd.h"
#include "cpu_cntx.h"
#include "simd.h"

void SIMD_NAME(avx2_axpy_f32, avx512_axpy_f32, neon_axpy_f32)(float *y, float a, const float *x, int64_t n)
{
	const vf va = vf_set1(a);
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		vf_store(y + i, vf_fma(va, vf_load(x + i), vf_load(y + i)));
		vf_store(y + i + VEC_WIDTH, vf_fma(va, vf_load(x + i + VEC_WIDTH), vf_load(y + i + VEC_WIDTH)));
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		vf_store(y + i, vf_fma(va, vf_load(x + i), vf_load(y + i)));
	if (i < n)
		vf_store_n(y + i, vf_fma(va, vf_load_n(x + i, n - i), vf_load_n(y + i, n - i)), n - i);
}

void SIMD_NAME(avx2_axpy_f16, avx512_axpy_f16, neon_axpy_f16)(float *y, float a, const uint16_t *x, int64_t n)
{
	const vf va = vf_set1(a);
	int64_t i = 0;

	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		vf_store(y + i, vf_fma(va, vf_load_f16(x + i), vf_load(y + i)));
	if (i < n)
		vf_store_n(y + i, vf_fma(va, vf_load_f16_n(x + i, n - i), vf_load_n(y + i, n - i)), n - i);
}

float SIMD_NAME(avx2_dot_f32_f16, avx512_dot_f32_f16, neon_dot_f32_f16)(int64_t n, const float *a, const uint16_t *b)
{
	vf s0 = vf_zero(), s1 = vf_zero();
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		s0 = vf_fma(vf_load(a + i), vf_load_f16(b + i), s0);
		s1 = vf_fma(vf_load(a + i + VEC_WIDTH), vf_load_f16(b + i + VEC_WIDTH), s1);
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		s0 = vf_fma(vf_load(a + i), vf_load_f16(b + i), s0);
	if (i < n)
		s1 = vf_fma(vf_load_n(a + i, n - i), vf_load_f16_n(b + i, n - i), s1);
	return vf_hsum(vf_add(s0, s1));
}

/* ------------------------------------------------------- chunk kernels */

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* V vectors a tile of acc spans: 4 heads × ACC_VECS accumulators must fit
 * the register file with room for the V vectors (16 ymm on AVX2, 32 zmm). */
#if VEC_WIDTH == 8
#define ACC_VECS 2
#else
#define ACC_VECS 4
#endif

/* Lane j of the result is the sum of v[j]'s lanes, j < VEC_WIDTH. */
static ALWAYS_INLINE vf sum_lanes(const vf *v)
{
#if VEC_WIDTH == 16 && defined(__AVX512F__)
	__m512 x[8], y[4];

	/* halves: x[i] = (v[i] lo + hi | v[i+8] lo + hi) */
	for (int i = 0; i < 8; i++)
		x[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[i], v[i + 8], 0x44),
				     _mm512_shuffle_f32x4(v[i], v[i + 8], 0xee));
	/* quarters: y[i] blocks = (v[i], v[i+8], v[i+4], v[i+12]) */
	for (int i = 0; i < 4; i++)
		y[i] = _mm512_add_ps(_mm512_shuffle_f32x4(x[i], x[i + 4], 0x88),
				     _mm512_shuffle_f32x4(x[i], x[i + 4], 0xdd));
	/* inside each 128-bit block: 4 vectors' partial sums to 4 sums */
	__m512 a = _mm512_add_ps(_mm512_unpacklo_ps(y[0], y[1]), _mm512_unpackhi_ps(y[0], y[1]));
	__m512 b = _mm512_add_ps(_mm512_unpacklo_ps(y[2], y[3]), _mm512_unpackhi_ps(y[2], y[3]));
	__m512 c = _mm512_add_ps(_mm512_shuffle_ps(a, b, 0x44), _mm512_shuffle_ps(a, b, 0xee));

	/* blocks hold v[0..3], v[8..11], v[4..7], v[12..15] */
	return _mm512_shuffle_f32x4(c, c, 0xd8);
#elif VEC_WIDTH == 8 && defined(__AVX2__)
	__m256 h01 = _mm256_hadd_ps(v[0], v[1]), h23 = _mm256_hadd_ps(v[2], v[3]);
	__m256 h45 = _mm256_hadd_ps(v[4], v[5]), h67 = _mm256_hadd_ps(v[6], v[7]);
	__m256 lo = _mm256_hadd_ps(h01, h23), hi = _mm256_hadd_ps(h45, h67);

	/* lo's 128-bit halves hold v[0..3]'s partial sums, hi's v[4..7]'s */
	return _mm256_add_ps(_mm256_permute2f128_ps(lo, hi, 0x20), _mm256_permute2f128_ps(lo, hi, 0x31));
#else
	float sums[VEC_WIDTH];

	for (int i = 0; i < VEC_WIDTH; i++)
		sums[i] = vf_hsum(v[i]);
	return vf_load(sums);
#endif
}

/* How a K or V row is stored: the chunk kernels are instantiated once per
 * kind, so every switch below folds away. */
enum kv_kind {
	KV_F32,
	KV_F16,
	KV_BF16,
	KV_Q8_0,        /* blocks of 32: f16 d, 32 int8;  x = d·q */
	KV_Q4_0,        /* blocks of 32: f16 d, 16 bytes; x = d·(nibble − 8), element j < 16 in
			 * byte j's low nibble, j >= 16 in byte j − 16's high one */
};

/* Bytes of a row of n elements (n a multiple of 32 for the block kinds). */
static ALWAYS_INLINE int64_t kv_row_bytes(int kind, int64_t n)
{
	switch (kind) {
	case KV_F32:
		return n * 4;
	case KV_Q8_0:
		return n / 32 * 34;
	case KV_Q4_0:
		return n / 32 * 18;
	default:
		return n * 2;
	}
}

static ALWAYS_INLINE uint16_t load_u16(const uint8_t *p)
{
	uint16_t h;

	memcpy(&h, p, sizeof(h));
	return h;
}

/* Elements e .. e + m of a K or V row (m <= VEC_WIDTH; m < VEC_WIDTH
 * reads only m), decoded in registers. A block kind's rows are whole
 * blocks (D a multiple of 32, which VEC_WIDTH divides), so its vectors
 * never straddle a block and m is always VEC_WIDTH. */
static ALWAYS_INLINE vf load_kv(int kind, const void *row, int64_t e, int64_t m)
{
	const uint8_t *blk;

	switch (kind) {
	case KV_F16:
		return m == VEC_WIDTH ? vf_load_f16((const uint16_t *)row + e)
				      : vf_load_f16_n((const uint16_t *)row + e, m);
	case KV_BF16:
		return m == VEC_WIDTH ? vf_load_bf16((const uint16_t *)row + e)
				      : vf_load_bf16_n((const uint16_t *)row + e, m);
	case KV_Q8_0:
		blk = (const uint8_t *)row + e / 32 * 34;
		return vf_mul(vf_set1_f16(load_u16(blk)), vi_to_vf(vi_widen_i8((const int8_t *)blk + 2 + e % 32)));
	case KV_Q4_0: {
		vi b;

		blk = (const uint8_t *)row + e / 32 * 18;
		b = vi_widen_u8(blk + 2 + e % 16);
		b = e % 32 < 16 ? vi_and(b, vi_set1(15)) : vi_srli(b, 4);
		return vf_mul(vf_set1_f16(load_u16(blk)), vi_to_vf(vi_sub(b, vi_set1(8))));
	}
	default:
		return m == VEC_WIDTH ? vf_load((const float *)row + e) : vf_load_n((const float *)row + e, m);
	}
}

/* The lines still to prefetch of rows pf[0 .. npf), in address order, so
 * that a kernel can spread them over its steps: a burst of prefetches at
 * the start of a block stalls on the fill buffers with the block's work
 * queued behind it, while one or two per step overlap with the work. */
struct pf_cursor {
	const void *const *row;         /* the next row */
	int64_t left, bytes;            /* rows left after the current one, bytes per row */
	const char *at, *end;           /* the current row's next line, its end */
};

static ALWAYS_INLINE void prefetch_lines(struct pf_cursor *c, int64_t lines)
{
	for (; lines > 0; lines--) {
		if (c->at >= c->end) {
			if (c->left == 0)
				return;
			c->at = (const char *)((uintptr_t)*c->row & ~(uintptr_t)63);
			c->end = (const char *)*c->row + c->bytes;
			c->row++;
			c->left--;
		}
		__builtin_prefetch(c->at, 0, 2);
		c->at += 64;
	}
}

/* Lines per step to cover the cursor's rows (aligned) in `steps` steps. */
static ALWAYS_INLINE int64_t lines_per_step(const struct pf_cursor *c, int64_t steps)
{
	return steps > 0 ? (c->left * ((c->bytes + 63) / 64) + steps - 1) / steps : 0;
}

/* One vector step of a scores block: elements e .. e + m of every dot. */
static ALWAYS_INLINE void dot_step(int kind, int hb, vf *acc, const float *q, int64_t qs, const void *const *row,
				   int64_t e, int64_t m)
{
	const int tb = VEC_WIDTH / hb;
	vf kv[VEC_WIDTH];

	for (int t = 0; t < tb; t++)
		kv[t] = load_kv(kind, row[t], e, m);
	for (int h = 0; h < hb; h++) {
		const vf qv = m == VEC_WIDTH ? vf_load(q + h * qs + e) : vf_load_n(q + h * qs + e, m);

		for (int t = 0; t < tb; t++)
			acc[h * tb + t] = vf_fma(qv, kv[t], acc[h * tb + t]);
	}
}

/* Scores of hb heads × the nt (<= VEC_WIDTH/hb) tokens k[0..nt), with
 * per_step lines of pc prefetched a step. */
static ALWAYS_INLINE void scores_block(int kind, int hb, float *s, int64_t ss, const float *q, int64_t qs,
				       const void *const *k, int64_t nt, int64_t d, struct pf_cursor *pc,
				       int64_t per_step)
{
	const int tb = VEC_WIDTH / hb;
	const void *row[VEC_WIDTH];
	vf acc[VEC_WIDTH];
	int64_t e = 0;

	for (int t = 0; t < tb; t++)    /* a short block repeats its last row */
		row[t] = k[t < nt ? t : nt - 1];
	for (int i = 0; i < VEC_WIDTH; i++)
		acc[i] = vf_zero();
	for (; e + VEC_WIDTH <= d; e += VEC_WIDTH) {
		prefetch_lines(pc, per_step);
		dot_step(kind, hb, acc, q, qs, row, e, VEC_WIDTH);
	}
	if (e < d) {
		prefetch_lines(pc, per_step);
		dot_step(kind, hb, acc, q, qs, row, e, d - e);
	}

	const vf r = sum_lanes(acc);

	if (hb == 1) {
		vf_store_n(s, r, nt);
		return;
	}
	float out[VEC_WIDTH];

	vf_store(out, r);
	if (nt == tb) {         /* constant sizes: plain moves, no memcpy call */
		for (int h = 0; h < hb; h++)
			for (int t = 0; t < tb; t++)
				s[h * ss + t] = out[h * tb + t];
		return;
	}
	for (int h = 0; h < hb; h++)
		for (int t = 0; t < nt; t++)
			s[h * ss + t] = out[h * tb + t];
}

/* The prefetches of pf[0 .. npf) are spread in address order over the
 * blocks' steps (the pace divided out once a call: once a block, the
 * division cost a decode's attention 2-5 %). */
static ALWAYS_INLINE void scores_heads(int kind, int hb, float *s, int64_t ss, const float *q, int64_t qs,
				       const void *const *k, int64_t n, int64_t d, const void *const *pf,
				       int64_t npf)
{
	const int tb = VEC_WIDTH / hb;
	const int64_t steps = (d + VEC_WIDTH - 1) / VEC_WIDTH;
	struct pf_cursor pc = { .row = pf, .left = npf, .bytes = kv_row_bytes(kind, d) };
	const int64_t per_step = lines_per_step(&pc, (n + tb - 1) / tb * steps);

	for (int64_t t = 0; t < n; t += tb) {
		const int64_t nt = n - t < tb ? n - t : tb;

		scores_block(kind, hb, s + t, ss, q, qs, k + t, nt, d, &pc, per_step);
	}
	prefetch_lines(&pc, INT64_MAX);         /* what misalignment left */
}

/* acc[h][e0 .. e0 + (nv - 1)·VEC_WIDTH + m) += Σ_t p[h][t]·v_t[..] for hb
 * heads: the tile stays in registers over the n tokens. */
static ALWAYS_INLINE void accum_tile(int kind, int hb, int nv, int64_t m, float *acc, int64_t as, const float *p,
				     int64_t ps, const void *const *v, int64_t n, int64_t e0, struct pf_cursor *pc,
				     int64_t per_step)
{
	vf a[4 * ACC_VECS];

	for (int h = 0; h < hb; h++)
		for (int j = 0; j < nv; j++) {
			const float *src = acc + h * as + e0 + j * VEC_WIDTH;

			a[h * nv + j] = j < nv - 1 || m == VEC_WIDTH ? vf_load(src) : vf_load_n(src, m);
		}
	for (int64_t t = 0; t < n; t++) {
		vf x[ACC_VECS];

		prefetch_lines(pc, per_step);
		for (int j = 0; j < nv; j++)
			x[j] = load_kv(kind, v[t], e0 + j * VEC_WIDTH, j < nv - 1 ? VEC_WIDTH : m);
		for (int h = 0; h < hb; h++) {
			const vf w = vf_set1(p[h * ps + t]);

			for (int j = 0; j < nv; j++)
				a[h * nv + j] = vf_fma(w, x[j], a[h * nv + j]);
		}
	}
	for (int h = 0; h < hb; h++)
		for (int j = 0; j < nv; j++) {
			float *dst = acc + h * as + e0 + j * VEC_WIDTH;

			if (j < nv - 1 || m == VEC_WIDTH)
				vf_store(dst, a[h * nv + j]);
			else
				vf_store_n(dst, a[h * nv + j], m);
		}
}

/* The prefetches of pf[0 .. npf) are spread in address order over the
 * tiles' token steps. */
static ALWAYS_INLINE void accum_heads(int kind, int hb, float *acc, int64_t as, const float *p, int64_t ps,
				      const void *const *v, int64_t n, int64_t dv, const void *const *pf,
				      int64_t npf)
{
	const int64_t tw = ACC_VECS * VEC_WIDTH;
	const int64_t tiles = dv / tw + dv % tw / VEC_WIDTH + (dv % VEC_WIDTH != 0);
	struct pf_cursor pc = { .row = pf, .left = npf, .bytes = kv_row_bytes(kind, dv) };
	const int64_t per_step = lines_per_step(&pc, tiles * n);
	int64_t e = 0;

	for (; e + tw <= dv; e += tw)
		accum_tile(kind, hb, ACC_VECS, VEC_WIDTH, acc, as, p, ps, v, n, e, &pc, per_step);
	for (; e + VEC_WIDTH <= dv; e += VEC_WIDTH)
		accum_tile(kind, hb, 1, VEC_WIDTH, acc, as, p, ps, v, n, e, &pc, per_step);
	if (e < dv)
		accum_tile(kind, hb, 1, dv - e, acc, as, p, ps, v, n, e, &pc, per_step);
	prefetch_lines(&pc, INT64_MAX);         /* what misalignment left */
}

/* One pass of a chunk kernel over hb heads: scores (out = s, in = q) or
 * accum (out = acc, in = p); the two have the same shape. */
static ALWAYS_INLINE void heads_pass(int kind, int accum, int hb, float *out, int64_t os, const float *in,
				     int64_t is, const void *const *rows, int64_t n, int64_t len,
				     const void *const *pf, int64_t npf)
{
	if (accum)
		accum_heads(kind, hb, out, os, in, is, rows, n, len, pf, npf);
	else
		scores_heads(kind, hb, out, os, in, is, rows, n, len, pf, npf);
}

/* The heads [0, nh) in blocks of 4, then 2, then 1 (hb a constant in each
 * pass, so that its tiles stay in registers). The first pass over the
 * tokens prefetches, the others reread the same rows. */
static ALWAYS_INLINE void chunk_kernel(int kind, int accum, float *out, int64_t os, const float *in, int64_t is,
				       int64_t nh, const void *const *rows, int64_t n, int64_t len,
				       const void *const *pf, int64_t npf)
{
	int64_t h = 0;

	for (; h + 4 <= nh; h += 4, npf = 0)
		heads_pass(kind, accum, 4, out + h * os, os, in + h * is, is, rows, n, len, pf, npf);
	if (h + 2 <= nh) {
		heads_pass(kind, accum, 2, out + h * os, os, in + h * is, is, rows, n, len, pf, npf);
		h += 2;
		npf = 0;
	}
	if (h < nh)
		heads_pass(kind, accum, 1, out + h * os, os, in + h * is, is, rows, n, len, pf, npf);
}

/* ---------------------------------------------- prompt scores (S^T) */

/* A tile of scores_t: ST_TB tokens × ST_RVT row vectors of accumulators,
 * plus ST_RVT row vectors and one broadcast (15 of AVX2's 16 registers). */
#define ST_TB CPU_ATTN_ST_TOKENS
#define ST_RVT 2

/* Row r of k (d elements) decoded to f32 into dst. */
static ALWAYS_INLINE void decode_kv_row(int kind, const void *row, int64_t d, float *dst)
{
	int64_t e = 0;

	for (; e + VEC_WIDTH <= d; e += VEC_WIDTH)
		vf_store(dst + e, load_kv(kind, row, e, VEC_WIDTH));
	if (e < d)
		vf_store_n(dst + e, load_kv(kind, row, e, d - e), d - e);
}

/* tmp[t][j·VEC_WIDTH + l] = Σ_e kb[t·d + e]·qt[e·rp + j·VEC_WIDTH + l] for
 * the ST_TB tokens of kb and rvt row vectors of qt. */
static ALWAYS_INLINE void st_tile(int rvt, float *tmp, const float *kb, const float *qt, int64_t rp, int64_t d)
{
	vf acc[ST_TB][ST_RVT];

	for (int t = 0; t < ST_TB; t++)
		for (int j = 0; j < rvt; j++)
			acc[t][j] = vf_zero();
	for (int64_t e = 0; e < d; e++) {
		vf qv[ST_RVT];

		for (int j = 0; j < rvt; j++)
			qv[j] = vf_load(qt + e * rp + j * VEC_WIDTH);
		for (int t = 0; t < ST_TB; t++) {
			const vf kv = vf_set1(kb[t * d + e]);

			for (int j = 0; j < rvt; j++)
				acc[t][j] = vf_fma(kv, qv[j], acc[t][j]);
		}
	}
	for (int t = 0; t < ST_TB; t++)
		for (int j = 0; j < rvt; j++)
			vf_store(tmp + (t * ST_RVT + j) * VEC_WIDTH, acc[t][j]);
}

/* s[r][t] = q_r · k_t for r < rows, t < n (cpu_cntx.h, scores_t); pf[t]
 * (pf_bytes each, NULL: none) prefetched with token t's block. */
static ALWAYS_INLINE void scores_t(int kind, float *const *s, int64_t rows, const float *qt, int64_t rp,
				   const void *const *k, int64_t n, int64_t d, float *kbuf, const void *const *pf,
				   int64_t pf_bytes)
{
	const int64_t rv = (rows + VEC_WIDTH - 1) / VEC_WIDTH;
	_Alignas(64) float tmp[ST_TB * ST_RVT * VEC_WIDTH];

	for (int64_t t0 = 0; t0 < n; t0 += ST_TB) {
		const int64_t tb = n - t0 < ST_TB ? n - t0 : ST_TB;

		/* the next block's rows, fetched while this one's tiles run
		 * (they come from L2 or L3: the first touch of this item) */
		for (int64_t t = t0 + ST_TB; t < t0 + 2 * ST_TB && t < n; t++)
			for (int64_t b = 0; b < kv_row_bytes(kind, d); b += 64)
				__builtin_prefetch((const char *)k[t] + b, 0, 3);
		for (int64_t t = t0; pf && t < t0 + tb; t++)
			for (int64_t b = 0; b < pf_bytes; b += 64)
				__builtin_prefetch((const char *)pf[t] + b, 0, 3);
		for (int t = 0; t < ST_TB; t++)         /* a short block repeats its last row */
			decode_kv_row(kind, k[t0 + (t < tb ? t : tb - 1)], d, kbuf + t * d);
		for (int64_t j0 = 0; j0 < rv; j0 += ST_RVT) {
			const int64_t rvt = rv - j0 < ST_RVT ? rv - j0 : ST_RVT;
			const int64_t r0 = j0 * VEC_WIDTH, r1 = r0 + rvt * VEC_WIDTH < rows ? r0 + rvt * VEC_WIDTH : rows;

			if (rvt == ST_RVT)
				st_tile(ST_RVT, tmp, kbuf, qt + r0, rp, d);
			else
				st_tile(1, tmp, kbuf, qt + r0, rp, d);
			for (int64_t r = r0; r < r1; r++)
				for (int64_t t = 0; t < tb; t++)
					s[r][t0 + t] = tmp[t * ST_RVT * VEC_WIDTH + r - r0];
		}
	}
}

/* The exported kernels: one per dtype, the kind folded at compile time. */
#define ATTN_CHUNK_KERNELS(scores, accum, scores_tr, kind)                                                   \
	void scores(float *s, int64_t ss, const float *q, int64_t qs, int64_t nh,           \
				      const void *const *k, int64_t n, int64_t d, const void *const *pf,       \
				      int64_t npf)                                                            \
	{                                                                                                   \
		chunk_kernel(kind, 0, s, ss, q, qs, nh, k, n, d, pf, npf);                                   \
	}                                                                                                   \
	void accum(float *acc, int64_t as, const float *p, int64_t ps, int64_t nh,          \
				     const void *const *v, int64_t n, int64_t dv, const void *const *pf,      \
				     int64_t npf)                                                             \
	{                                                                                                   \
		chunk_kernel(kind, 1, acc, as, p, ps, nh, v, n, dv, pf, npf);                                \
	}                                                                                                   \
	void scores_tr(float *const *s, int64_t rows, const float *qt, int64_t rp, const void *const *k,  \
		       int64_t n, int64_t d, float *kbuf, const void *const *pf, int64_t pf_bytes)          \
	{                                                                                                   \
		scores_t(kind, s, rows, qt, rp, k, n, d, kbuf, pf, pf_bytes);                                \
	}

ATTN_CHUNK_KERNELS(SIMD_NAME(avx2_attn_scores_f32, avx512_attn_scores_f32, neon_attn_scores_f32),
		   SIMD_NAME(avx2_attn_accum_f32, avx512_attn_accum_f32, neon_attn_accum_f32),
		   SIMD_NAME(avx2_attn_scores_t_f32, avx512_attn_scores_t_f32, neon_attn_scores_t_f32), KV_F32)
ATTN_CHUNK_KERNELS(SIMD_NAME(avx2_attn_scores_f16, avx512_attn_scores_f16, neon_attn_scores_f16),
		   SIMD_NAME(avx2_attn_accum_f16, avx512_attn_accum_f16, neon_attn_accum_f16),
		   SIMD_NAME(avx2_attn_scores_t_f16, avx512_attn_scores_t_f16, neon_attn_scores_t_f16), KV_F16)
ATTN_CHUNK_KERNELS(SIMD_NAME(avx2_attn_scores_bf16, avx512_attn_scores_bf16, neon_attn_scores_bf16),
		   SIMD_NAME(avx2_attn_accum_bf16, avx512_attn_accum_bf16, neon_attn_accum_bf16),
		   SIMD_NAME(avx2_attn_scores_t_bf16, avx512_attn_scores_t_bf16, neon_attn_scores_t_bf16), KV_BF16)
ATTN_CHUNK_KERNELS(SIMD_NAME(avx2_attn_scores_q8_0, avx512_attn_scores_q8_0, neon_attn_scores_q8_0),
		   SIMD_NAME(avx2_attn_accum_q8_0, avx512_attn_accum_q8_0, neon_attn_accum_q8_0),
		   SIMD_NAME(avx2_attn_scores_t_q8_0, avx512_attn_scores_t_q8_0, neon_attn_scores_t_q8_0), KV_Q8_0)
ATTN_CHUNK_KERNELS(SIMD_NAME(avx2_attn_scores_q4_0, avx512_attn_scores_q4_0, neon_attn_scores_q4_0),
		   SIMD_NAME(avx2_attn_accum_q4_0, avx512_attn_accum_q4_0, neon_attn_accum_q4_0),
		   SIMD_NAME(avx2_attn_scores_t_q4_0, avx512_attn_scores_t_q4_0, neon_attn_scores_t_q4_0), KV_Q4_0)
