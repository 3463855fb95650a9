/* attention_ext and attention_varlen against this file's own double-precision
 * reference (xref_attention below), written from SPEC/OPERATORS.md
 * ("attention_ext", "attention_varlen"), never from a plugin: every score
 * in memory, the options applied in the spec's order (scale, softcap,
 * + ALiBi, + mask, then causal and window), the sink added to the
 * denominator, exp, normalise.
 *
 * Cases: softcap 30 and 50 (scales large enough that tanh bends); sinks
 * (small and dominant ones, and queries that see nothing, which stay 0);
 * ALiBi with 8 and 12 heads (12: ggml's second slope series); windows
 * shorter and longer than the context, with and without causal; shared
 * [Tq, cols] and per-head [Hq, Tq, cols] masks with -inf holes; K/V in
 * f32, f16, bf16, q8_0 and q4_0, contiguous and paged (shuffled blocks of
 * 16, NaN in every slot, block and mask column a plugin must not read);
 * GQA groups 1, 3, 4 and 8; decode shapes split over long KV.
 * varlen: batches of sequences with query/kv lengths 1, 7, 777, an empty
 * sequence and one with no kv tokens (zeros), prefill next to decode, 64
 * decode sequences of different lengths, pages shared between sequences,
 * unused block-table entries of -1, every option above; and index data out
 * of range (GLLMK_E_BOUNDS naming the sequence).
 *
 * The reference decodes the stored K/V bytes (ref_decode_row), so q8_0 and
 * q4_0 are compared with attention on exactly the values the cache holds
 * and the tolerance stays the float one.
 *
 * Tolerance (SPEC/TOLERANCES.md, "attention_ext"), per output element:
 *   2e-5·Σ_t p_t·|v_t| + 1e-6·(Σ_t p_t·m_t·|v_t| + (Σ_t p_t·m_t)·Σ_t p_t·|v_t|)
 * with p the softmax weights and m_t the magnitude of token t's score
 * terms (scale·Σ_d |q_d·k_d| + |ALiBi bias| + |mask| + softcap): an f32
 * score carries an error of about 1e-7·m_t, which moves the output by the
 * second term. A query that sees nothing gives exactly 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_half.h"
#include "ref_quant.h"

#define EXT_RTOL 2e-5
#define EXT_SCORE_RTOL 1e-6
#define PAGE 16
#define MAX_SEQS 80

enum ext_mask {
	MASK_NONE,
	MASK_SHARED,   /* [rows, cols]: uniform(-2, 2), 10% -inf, one row all -inf */
	MASK_PER_HEAD, /* [Hq, Tq, cols], the same law (attention_ext only) */
};

enum ext_layout {
	LAYOUT_BOTH,   /* contiguous and paged (attention_ext) */
	LAYOUT_PAGED,
	LAYOUT_CONTIGUOUS,
};

struct ext_seq {
	int64_t tq, kv_len;
};

struct ext_case {
	int64_t hq, hkv, d, dv;
	gllmk_dtype dt;
	int causal;
	float scale, softcap, max_bias;
	int32_t window;
	int sinks;              /* 1: uniform(-1, 3); 2: one head's sink dominates */
	enum ext_mask mask;
	enum ext_layout layout;
	int64_t extra;          /* contiguous: Tkv = kv_len + extra, passed as kv_len */
	int big;                /* quick mode: kv lengths capped at 513 */
	/* attention_ext: seq[0]; varlen: n_seq sequences, or n_random decode
	 * sequences of kv_len 1 .. seq[0].kv_len */
	int n_seq, n_random;
	struct ext_seq seq[6];
	int share;              /* varlen: sequences share their first pages with sequence 0 */
};

static const struct ext_case ext_cases[] = {
	/* 0: the defaults: gllmk_attention's semantics */
	{ .hq = 8, .hkv = 2, .d = 128, .dv = 128, .dt = GLLMK_F32, .causal = 1, .seq = { { 7, 33 } } },
	/* 1-2: softcap */
	{ .hq = 8, .hkv = 2, .d = 128, .dv = 128, .dt = GLLMK_F16, .causal = 1, .scale = 3.0f, .softcap = 30.0f,
	  .seq = { { 3, 300 } } },
	{ .hq = 4, .hkv = 4, .d = 64, .dv = 64, .dt = GLLMK_BF16, .scale = 6.0f, .softcap = 50.0f, .mask = MASK_SHARED,
	  .seq = { { 7, 777 } } },
	/* 3-4: sinks; a query that sees nothing stays 0 */
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 64, .dt = GLLMK_F32, .causal = 1, .sinks = 1, .seq = { { 7, 33 } } },
	{ .hq = 2, .hkv = 1, .d = 64, .dv = 64, .dt = GLLMK_F16, .causal = 1, .sinks = 2, .seq = { { 7, 1 } } },
	/* 5-6: ALiBi, 8 heads then 12 (two slope series), long decode */
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 64, .dt = GLLMK_F16, .causal = 1, .max_bias = 8.0f,
	  .seq = { { 7, 513 } } },
	{ .hq = 12, .hkv = 4, .d = 128, .dv = 128, .dt = GLLMK_Q8_0, .causal = 1, .max_bias = 8.0f, .big = 1,
	  .layout = LAYOUT_PAGED, .seq = { { 1, 4097 } } },
	/* 7-9: sliding window shorter and longer than the context, and without causal */
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 64, .dt = GLLMK_Q4_0, .causal = 1, .window = 16, .seq = { { 7, 300 } } },
	{ .hq = 4, .hkv = 1, .d = 128, .dv = 128, .dt = GLLMK_F16, .causal = 1, .window = 5000,
	  .seq = { { 1, 1000 } } },
	{ .hq = 6, .hkv = 2, .d = 96, .dv = 64, .dt = GLLMK_Q8_0, .window = 64, .seq = { { 3, 300 } } },
	/* 10-11: per-head masks, odd head dims */
	{ .hq = 6, .hkv = 2, .d = 33, .dv = 40, .dt = GLLMK_F32, .causal = 1, .mask = MASK_PER_HEAD,
	  .seq = { { 7, 33 } } },
	{ .hq = 8, .hkv = 1, .d = 64, .dv = 32, .dt = GLLMK_BF16, .mask = MASK_PER_HEAD, .sinks = 1, .extra = 5,
	  .layout = LAYOUT_CONTIGUOUS, .seq = { { 3, 100 } } },
	/* 12-16: each dtype with everything at once */
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 96, .dt = GLLMK_F32, .causal = 1, .softcap = 30.0f, .max_bias = 4.0f,
	  .window = 40, .sinks = 1, .mask = MASK_SHARED, .extra = 3, .seq = { { 3, 300 } } },
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 96, .dt = GLLMK_F16, .causal = 1, .softcap = 30.0f, .max_bias = 4.0f,
	  .window = 40, .sinks = 1, .mask = MASK_SHARED, .extra = 3, .seq = { { 3, 300 } } },
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 96, .dt = GLLMK_BF16, .causal = 1, .softcap = 30.0f, .max_bias = 4.0f,
	  .window = 40, .sinks = 1, .mask = MASK_SHARED, .extra = 3, .seq = { { 3, 300 } } },
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 96, .dt = GLLMK_Q8_0, .causal = 1, .softcap = 30.0f, .max_bias = 4.0f,
	  .window = 40, .sinks = 1, .mask = MASK_SHARED, .extra = 3, .seq = { { 3, 300 } } },
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 96, .dt = GLLMK_Q4_0, .causal = 1, .softcap = 30.0f, .max_bias = 4.0f,
	  .window = 40, .sinks = 1, .mask = MASK_PER_HEAD, .extra = 3, .seq = { { 3, 300 } } },
	/* 17-19: decode shapes over long KV (split over the tokens): GQA 8, q4_0 / bf16 / q8_0 */
	{ .hq = 16, .hkv = 2, .d = 128, .dv = 128, .dt = GLLMK_Q4_0, .big = 1, .sinks = 1, .layout = LAYOUT_PAGED,
	  .seq = { { 1, 4097 } } },
	{ .hq = 32, .hkv = 8, .d = 128, .dv = 128, .dt = GLLMK_BF16, .big = 1, .window = 1024, .causal = 1,
	  .seq = { { 1, 4097 } } },
	{ .hq = 4, .hkv = 1, .d = 256, .dv = 256, .dt = GLLMK_Q8_0, .softcap = 50.0f, .scale = 1.0f,
	  .seq = { { 1, 1000 } } },
	/* 20-23: prompt shapes (8 queries or more: the CPU plugins' query
	 * blocks, whose scores are one outer-product call) for the block
	 * dtypes and bf16, with the options; GQA 8 (64 rows a block); a
	 * window (no blocks) */
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 96, .dt = GLLMK_Q8_0, .causal = 1, .softcap = 30.0f, .max_bias = 4.0f,
	  .sinks = 1, .mask = MASK_SHARED, .extra = 3, .seq = { { 20, 300 } } },
	{ .hq = 8, .hkv = 2, .d = 96, .dv = 64, .dt = GLLMK_Q4_0, .causal = 1, .mask = MASK_PER_HEAD,
	  .seq = { { 13, 200 } } },
	{ .hq = 8, .hkv = 1, .d = 64, .dv = 64, .dt = GLLMK_BF16, .causal = 1, .sinks = 1, .seq = { { 17, 150 } } },
	{ .hq = 4, .hkv = 2, .d = 64, .dv = 64, .dt = GLLMK_F16, .causal = 1, .window = 40, .seq = { { 24, 260 } } },
};

/* varlen: S sequences over one paged cache. */
static const struct ext_case varlen_cases[] = {
	/* 0: lengths 1, 7, 777, an empty sequence, queries without kv tokens */
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 64, .dt = GLLMK_F16, .causal = 1, .n_seq = 5,
	  .seq = { { 1, 1 }, { 7, 7 }, { 3, 777 }, { 0, 0 }, { 2, 0 } } },
	/* 1: prefill next to decode, shared pages, every option */
	{ .hq = 12, .hkv = 4, .d = 64, .dv = 64, .dt = GLLMK_Q8_0, .causal = 1, .softcap = 30.0f, .max_bias = 8.0f,
	  .window = 100, .sinks = 1, .mask = MASK_SHARED, .share = 1, .n_seq = 4,
	  .seq = { { 7, 300 }, { 1, 200 }, { 33, 33 }, { 1, 777 } } },
	/* 2-6: each dtype, small batch with shared pages */
	{ .hq = 8, .hkv = 8, .d = 32, .dv = 64, .dt = GLLMK_F32, .causal = 1, .share = 1, .n_seq = 3,
	  .seq = { { 7, 100 }, { 1, 50 }, { 3, 7 } } },
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 32, .dt = GLLMK_F16, .sinks = 2, .window = 20, .share = 1, .n_seq = 3,
	  .seq = { { 7, 100 }, { 1, 50 }, { 3, 7 } } },
	{ .hq = 6, .hkv = 2, .d = 64, .dv = 64, .dt = GLLMK_BF16, .causal = 1, .softcap = 50.0f, .scale = 4.0f,
	  .n_seq = 3, .seq = { { 7, 100 }, { 1, 50 }, { 3, 7 } } },
	{ .hq = 4, .hkv = 2, .d = 96, .dv = 96, .dt = GLLMK_Q8_0, .causal = 1, .mask = MASK_SHARED, .n_seq = 3,
	  .seq = { { 7, 100 }, { 1, 50 }, { 3, 7 } } },
	{ .hq = 8, .hkv = 2, .d = 64, .dv = 64, .dt = GLLMK_Q4_0, .causal = 1, .max_bias = 8.0f, .share = 1,
	  .n_seq = 3, .seq = { { 7, 100 }, { 1, 50 }, { 3, 7 } } },
	/* 7: 64 decode sequences of kv lengths 1 .. 1000, shared prefixes */
	{ .hq = 16, .hkv = 2, .d = 128, .dv = 128, .dt = GLLMK_F16, .causal = 1, .share = 1, .big = 1,
	  .n_random = 64, .seq = { { 1, 1000 } } },
	/* 8: decode batch, q4_0, sinks and window */
	{ .hq = 8, .hkv = 2, .d = 128, .dv = 128, .dt = GLLMK_Q4_0, .causal = 1, .sinks = 1, .window = 256,
	  .n_random = 9, .seq = { { 1, 2000 } }, .big = 1 },
};

/* ------------------------------------------------------------- reference */

struct xref {
	int64_t tq, hq, hkv, d, dv, kv_len;
	int causal;
	double scale, softcap, max_bias;
	int64_t window;
	const float *sinks;     /* [hq] or NULL */
	const float *mask;      /* mask(h, i, t) = mask[h·mask_hs + i·mask_rs + t], or NULL */
	int64_t mask_hs, mask_rs;
};

/* ggml's ALiBi slope of head h among hq heads. */
static double alibi_slope(double max_bias, int64_t hq, int64_t h)
{
	int64_t n_log2 = 1;

	while (n_log2 * 2 <= hq)
		n_log2 *= 2;
	if (h < n_log2)
		return pow(pow(2.0, -max_bias / (double)n_log2), (double)(h + 1));
	return pow(pow(2.0, -max_bias / 2.0 / (double)n_log2), (double)(2 * (h - n_log2) + 1));
}

/* q [tq, hq, d] f32; k [kv_len, hkv, d], v [kv_len, hkv, dv] decoded.
 * out, tol [tq, hq, dv]. */
static void xref_attention(const struct xref *a, const float *q, const double *k, const double *v, double *out,
			   double *tol)
{
	const int64_t group = a->hq / a->hkv, n = a->kv_len > 0 ? a->kv_len : 1;
	double *s = conf_xmalloc(sizeof(double) * (size_t)n), *m = conf_xmalloc(sizeof(double) * (size_t)n);
	char *seen = conf_xmalloc((size_t)n);

	for (int64_t i = 0; i < a->tq; i++) {
		const int64_t pos = a->kv_len - a->tq + i;

		for (int64_t h = 0; h < a->hq; h++) {
			const double *kh = k + h / group * a->d, *vh = v + h / group * a->dv;
			const float *qi = q + (i * a->hq + h) * a->d;
			const double slope = a->max_bias > 0 ? alibi_slope(a->max_bias, a->hq, h) : 0.0;
			double *o = out + (i * a->hq + h) * a->dv, *tl = tol + (i * a->hq + h) * a->dv;
			double mx = -INFINITY, den = 0.0, pm = 0.0;
			int any = 0;

			for (int64_t t = 0; t < a->kv_len; t++) {
				double dot = 0.0, mag = 0.0, x;

				seen[t] = !(a->causal && t > pos) && !(a->window > 0 && t <= pos - a->window);
				if (!seen[t])
					continue;
				for (int64_t e = 0; e < a->d; e++) {
					dot += (double)qi[e] * kh[t * a->hkv * a->d + e];
					mag += fabs((double)qi[e] * kh[t * a->hkv * a->d + e]);
				}
				x = a->scale * dot;
				m[t] = fabs(a->scale) * mag;
				if (a->softcap > 0) {
					x = a->softcap * tanh(x / a->softcap);
					m[t] += a->softcap;
				}
				x -= slope * fabs((double)(pos - t));
				m[t] += slope * fabs((double)(pos - t));
				if (a->mask) {
					const double mk = a->mask[h * a->mask_hs + i * a->mask_rs + t];

					x += mk;
					m[t] += isinf(mk) ? 0.0 : fabs(mk);
				}
				seen[t] = x != -INFINITY;
				s[t] = x;
				if (seen[t]) {
					any = 1;
					mx = x > mx ? x : mx;
				}
			}
			for (int64_t e = 0; e < a->dv; e++)
				o[e] = tl[e] = 0.0;
			if (!any)
				continue;       /* sees nothing: exactly zeros, sinks or not */
			if (a->sinks && a->sinks[h] > mx)
				mx = a->sinks[h];
			for (int64_t t = 0; t < a->kv_len; t++)
				if (seen[t])
					den += exp(s[t] - mx);
			if (a->sinks)
				den += exp(a->sinks[h] - mx);
			for (int64_t t = 0; t < a->kv_len; t++)
				if (seen[t])
					pm += exp(s[t] - mx) / den * m[t];
			for (int64_t e = 0; e < a->dv; e++) {
				double acc = 0.0, mag = 0.0, magm = 0.0;

				for (int64_t t = 0; t < a->kv_len; t++) {
					double p, x;

					if (!seen[t])
						continue;
					p = exp(s[t] - mx) / den;
					x = vh[t * a->hkv * a->dv + e];
					acc += p * x;
					mag += p * fabs(x);
					magm += p * m[t] * fabs(x);
				}
				o[e] = acc;
				tl[e] = EXT_RTOL * mag + EXT_SCORE_RTOL * (magm + pm * mag);
			}
		}
	}
	free(s);
	free(m);
	free(seen);
}

/* ------------------------------------------------------------- K/V rows */

/* q4_0 of 32 values: d = the value of largest magnitude / -8, nibbles
 * q = round(x/d) + 8 clamped to 0..15, element j < 16 in byte j's low
 * nibble, j >= 16 in byte j-16's high one (SPEC/QUANT.md). Any valid
 * encoding would do: the reference decodes the bytes. */
static void encode_q4_0(const float *x, uint8_t *b, int64_t n)
{
	for (int64_t blk = 0; blk < n / 32; blk++, x += 32, b += 18) {
		float mx = 0.0f, amax = 0.0f;
		uint16_t dbits;
		double d, id;

		for (int j = 0; j < 32; j++)
			if (fabsf(x[j]) > amax) {
				amax = fabsf(x[j]);
				mx = x[j];
			}
		dbits = ref_f16_bits(mx / -8.0);
		d = ref_f16_value(dbits);
		id = d != 0.0 ? 1.0 / d : 0.0;
		memcpy(b, &dbits, 2);
		memset(b + 2, 0, 16);
		for (int j = 0; j < 32; j++) {
			long qv = lround(x[j] * id) + 8;

			qv = qv < 0 ? 0 : qv > 15 ? 15 : qv;
			b[2 + j % 16] |= (uint8_t)(j < 16 ? qv : qv << 4);
		}
	}
}

/* One row of n values in dtype dt. */
static void encode_row(gllmk_dtype dt, const float *x, void *dst, int64_t n)
{
	switch (dt) {
	case GLLMK_F32:
		memcpy(dst, x, sizeof(float) * (size_t)n);
		break;
	case GLLMK_F16:
	case GLLMK_BF16:
		for (int64_t j = 0; j < n; j++)
			((uint16_t *)dst)[j] = dt == GLLMK_F16 ? ref_f16_bits(x[j]) : ref_bf16_bits(x[j]);
		break;
	case GLLMK_Q8_0:
		ref_quantize_q8_0(x, dst, n);
		break;
	default:
		encode_q4_0(x, dst, n);
		break;
	}
}

/* A row that decodes to NaN everywhere: what a plugin must never read. */
static void poison_row(gllmk_dtype dt, void *dst, int64_t n)
{
	const size_t rb = ref_row_bytes(dt, n);

	if (dt == GLLMK_F32) {
		for (int64_t j = 0; j < n; j++)
			((float *)dst)[j] = NAN;
	} else if (dt == GLLMK_F16 || dt == GLLMK_BF16) {
		for (int64_t j = 0; j < n; j++)
			((uint16_t *)dst)[j] = dt == GLLMK_F16 ? 0x7e00 : 0x7fc0;
	} else {        /* block scale d = f16 NaN, quants 0 */
		const size_t bb = (size_t)ref_block_bytes(dt);

		memset(dst, 0, rb);
		for (size_t o = 0; o < rb; o += bb) {
			((uint8_t *)dst)[o] = 0x00;
			((uint8_t *)dst)[o + 1] = 0x7e;
		}
	}
}

/* A sequence's logical K or V: rows [kv_len·hkv] of len values, encoded
 * (bytes) and decoded back (vals) for the reference. */
struct kv_rows {
	uint8_t *bytes;
	double *vals;
	size_t rb;
};

static struct kv_rows kv_rows_random(struct conf_rng *r, gllmk_dtype dt, int64_t rows, int64_t len)
{
	struct kv_rows kr = { .rb = ref_row_bytes(dt, len) };
	float *x = conf_xmalloc(sizeof(float) * (size_t)len);

	kr.bytes = conf_xmalloc(kr.rb * (size_t)(rows > 0 ? rows : 1));
	kr.vals = conf_xmalloc(sizeof(double) * (size_t)(rows > 0 ? rows * len : 1));
	for (int64_t i = 0; i < rows; i++) {
		conf_fill_uniform(r, x, (size_t)len, -1.0, 1.0);
		encode_row(dt, x, kr.bytes + (size_t)i * kr.rb, len);
		ref_decode_row(dt, kr.bytes + (size_t)i * kr.rb, kr.vals + i * len, len);
	}
	free(x);
	return kr;
}

/* Rows [from, from + n) of src copied over dst's (shared pages). */
static void kv_rows_copy(struct kv_rows *dst, const struct kv_rows *src, int64_t from, int64_t n, int64_t len)
{
	memcpy(dst->bytes + (size_t)from * dst->rb, src->bytes + (size_t)from * src->rb, (size_t)n * src->rb);
	memcpy(dst->vals + from * len, src->vals + from * len, sizeof(double) * (size_t)(n * len));
}

static void kv_rows_free(struct kv_rows *kr)
{
	free(kr->bytes);
	free(kr->vals);
}

/* A cache image of `rows` rows of len values, every row poison. */
static uint8_t *cache_image(gllmk_dtype dt, int64_t rows, int64_t len)
{
	const size_t rb = ref_row_bytes(dt, len);
	uint8_t *im = conf_xmalloc(rb * (size_t)rows);

	for (int64_t i = 0; i < rows; i++)
		poison_row(dt, im + (size_t)i * rb, len);
	return im;
}

/* ------------------------------------------------------------- the batch */

/* Everything one case's call needs, on the host and then on the device. */
struct batch {
	const struct ext_case *c;
	int64_t n_seq, rows, mask_cols, max_kv, npages_max, nblk;
	struct ext_seq seq[MAX_SEQS];
	int64_t cu[MAX_SEQS + 1];
	int32_t *table;         /* [n_seq, npages_max], -1 where unused */
	float *q, *mask, *sinks;
	struct kv_rows k[MAX_SEQS], v[MAX_SEQS];
	double *want, *tol;
	size_t nout;
};

static void batch_sequences(struct batch *b, struct conf_rng *r)
{
	const struct ext_case *c = b->c;
	const int64_t cap = c->big && conf.quick ? 513 : INT64_MAX;

	b->n_seq = c->n_random ? c->n_random : c->n_seq ? c->n_seq : 1;
	for (int64_t s = 0; s < b->n_seq; s++) {
		b->seq[s] = c->n_random ? (struct ext_seq){ 1, conf_rng_int(r, 1, c->seq[0].kv_len) } : c->seq[s];
		if (b->seq[s].kv_len > cap)
			b->seq[s].kv_len = cap;
		b->cu[s + 1] = b->cu[s] + b->seq[s].tq;
		b->max_kv = b->seq[s].kv_len > b->max_kv ? b->seq[s].kv_len : b->max_kv;
	}
	b->rows = b->cu[b->n_seq];
	b->mask_cols = b->max_kv + 3;
}

/* Pages: every sequence's own pages, shuffled among a few spare blocks;
 * with share, a sequence's full pages below sequence 0's full pages are
 * sequence 0's blocks (and its tokens there are sequence 0's). */
static void batch_pages(struct batch *b, struct conf_rng *r)
{
	int64_t total = 3, next = 0;
	int32_t *perm;

	for (int64_t s = 0; s < b->n_seq; s++) {
		const int64_t np = (b->seq[s].kv_len + PAGE - 1) / PAGE;

		b->npages_max = np > b->npages_max ? np : b->npages_max;
		total += np;
	}
	b->npages_max += 1;     /* one unused entry at least */
	b->nblk = total;
	perm = conf_xmalloc(sizeof(int32_t) * (size_t)total);
	for (int64_t i = 0; i < total; i++)
		perm[i] = (int32_t)i;
	for (int64_t i = total - 1; i > 0; i--) {
		const int64_t j = conf_rng_int(r, 0, i);
		const int32_t tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	b->table = conf_xmalloc(sizeof(int32_t) * (size_t)(b->n_seq * b->npages_max));
	for (int64_t s = 0; s < b->n_seq; s++) {
		const int64_t np = (b->seq[s].kv_len + PAGE - 1) / PAGE;
		const int64_t shared = b->c->share && s > 0 ? (b->seq[s].kv_len < b->seq[0].kv_len ? b->seq[s].kv_len
												     : b->seq[0].kv_len) / PAGE
							     : 0;

		for (int64_t p = 0; p < b->npages_max; p++)
			b->table[s * b->npages_max + p] = p < shared ? b->table[p] : p < np ? perm[next++] : -1;
	}
	free(perm);
}

static void batch_mask(struct batch *b, struct conf_rng *r)
{
	const int64_t heads = b->c->mask == MASK_PER_HEAD ? b->c->hq : 1;
	const int64_t n = heads * b->rows * b->mask_cols;

	b->mask = conf_xmalloc(sizeof(float) * (size_t)n);
	for (int64_t h = 0; h < heads; h++)
		for (int64_t s = 0; s < b->n_seq; s++)
			for (int64_t i = b->cu[s]; i < b->cu[s + 1]; i++)
				for (int64_t t = 0; t < b->mask_cols; t++) {
					float *m = b->mask + (h * b->rows + i) * b->mask_cols + t;

					if (t >= b->seq[s].kv_len)
						*m = NAN;       /* never read */
					else if (i == 1 || conf_rng_int(r, 0, 9) == 0)
						*m = -INFINITY;
					else
						*m = (float)conf_rng_uniform(r, -2.0, 2.0);
				}
}

static void batch_inputs(struct batch *b, struct conf_rng *r)
{
	const struct ext_case *c = b->c;

	b->q = conf_xmalloc(sizeof(float) * (size_t)(b->rows * c->hq * c->d + 1));
	conf_fill_uniform(r, b->q, (size_t)(b->rows * c->hq * c->d), -2.0, 2.0);
	if (c->sinks) {
		b->sinks = conf_xmalloc(sizeof(float) * (size_t)c->hq);
		conf_fill_uniform(r, b->sinks, (size_t)c->hq, -1.0, 3.0);
		if (c->sinks == 2)
			b->sinks[0] = 30.0f;    /* outweighs every token */
	}
	if (c->mask != MASK_NONE)
		batch_mask(b, r);
	for (int64_t s = 0; s < b->n_seq; s++) {
		b->k[s] = kv_rows_random(r, c->dt, b->seq[s].kv_len * c->hkv, c->d);
		b->v[s] = kv_rows_random(r, c->dt, b->seq[s].kv_len * c->hkv, c->dv);
		if (c->share && s > 0) {
			const int64_t shared = (b->seq[s].kv_len < b->seq[0].kv_len ? b->seq[s].kv_len
										 : b->seq[0].kv_len) / PAGE * PAGE;

			kv_rows_copy(&b->k[s], &b->k[0], 0, shared * c->hkv, c->d);
			kv_rows_copy(&b->v[s], &b->v[0], 0, shared * c->hkv, c->dv);
		}
	}
}

static void batch_reference(struct batch *b)
{
	const struct ext_case *c = b->c;

	b->nout = (size_t)(b->rows * c->hq * c->dv);
	b->want = conf_xmalloc(sizeof(double) * (b->nout + 1));
	b->tol = conf_xmalloc(sizeof(double) * (b->nout + 1));
	for (int64_t s = 0; s < b->n_seq; s++) {
		const int per_head = c->mask == MASK_PER_HEAD;
		struct xref a = {
			.tq = b->seq[s].tq, .hq = c->hq, .hkv = c->hkv, .d = c->d, .dv = c->dv,
			.kv_len = b->seq[s].kv_len, .causal = c->causal,
			.scale = c->scale != 0.0f ? c->scale : 1.0 / sqrt((double)c->d),
			.softcap = c->softcap, .max_bias = c->max_bias, .window = c->window, .sinks = b->sinks,
			.mask = b->mask ? b->mask + b->cu[s] * b->mask_cols : NULL,
			.mask_hs = per_head ? b->rows * b->mask_cols : 0, .mask_rs = b->mask_cols,
		};

		xref_attention(&a, b->q + b->cu[s] * c->hq * c->d, b->k[s].vals, b->v[s].vals,
			       b->want + b->cu[s] * c->hq * c->dv, b->tol + b->cu[s] * c->hq * c->dv);
	}
}

static void batch_init(struct batch *b, const struct ext_case *c, const char *what)
{
	struct conf_rng r;

	memset(b, 0, sizeof(*b));
	b->c = c;
	conf_rng_init(&r, what);
	batch_sequences(b, &r);
	batch_pages(b, &r);
	batch_inputs(b, &r);
	batch_reference(b);
}

static void batch_free(struct batch *b)
{
	for (int64_t s = 0; s < b->n_seq; s++) {
		kv_rows_free(&b->k[s]);
		kv_rows_free(&b->v[s]);
	}
	free(b->table);
	free(b->q);
	free(b->mask);
	free(b->sinks);
	free(b->want);
	free(b->tol);
}

/* The paged cache of k (value 0) or v (1): [nblk, PAGE, hkv, len]. */
static struct conf_tensor upload_paged(const struct batch *b, int which)
{
	const struct ext_case *c = b->c;
	const int64_t len = which ? c->dv : c->d;
	const size_t rb = ref_row_bytes(c->dt, len);
	int64_t shape[4] = { b->nblk, PAGE, c->hkv, len };
	uint8_t *im = cache_image(c->dt, b->nblk * PAGE * c->hkv, len);

	for (int64_t s = 0; s < b->n_seq; s++) {
		const struct kv_rows *kr = which ? &b->v[s] : &b->k[s];

		for (int64_t t = 0; t < b->seq[s].kv_len; t++) {
			const int64_t slot = (int64_t)b->table[s * b->npages_max + t / PAGE] * PAGE + t % PAGE;

			memcpy(im + (size_t)(slot * c->hkv) * rb, kr->bytes + (size_t)(t * c->hkv) * rb,
			       rb * (size_t)c->hkv);
		}
	}

	struct conf_tensor t = conf_upload(c->dt, 4, shape, im);

	free(im);
	return t;
}

/* Sequence 0's k or v contiguous: [kv_len + extra, hkv, len], the extra
 * rows poison. */
static struct conf_tensor upload_contiguous(const struct batch *b, int which)
{
	const struct ext_case *c = b->c;
	const int64_t len = which ? c->dv : c->d, tkv = b->seq[0].kv_len + c->extra;
	const size_t rb = ref_row_bytes(c->dt, len);
	int64_t shape[3] = { tkv, c->hkv, len };
	uint8_t *im = cache_image(c->dt, tkv * c->hkv, len);

	memcpy(im, (which ? &b->v[0] : &b->k[0])->bytes, rb * (size_t)(b->seq[0].kv_len * c->hkv));

	struct conf_tensor t = conf_upload(c->dt, 3, shape, im);

	free(im);
	return t;
}

static gllmk_attention_ext_params batch_params(const struct batch *b, int32_t kv_len)
{
	const struct ext_case *c = b->c;

	return (gllmk_attention_ext_params){ .struct_size = sizeof(gllmk_attention_ext_params), .scale = c->scale,
					     .causal = c->causal, .kv_len = kv_len, .softcap = c->softcap,
					     .max_bias = c->max_bias, .window = c->window };
}

/* The device inputs every call shares. */
struct batch_dev {
	struct conf_tensor q, mask, sinks, out;
};

static struct batch_dev batch_upload(const struct batch *b)
{
	const struct ext_case *c = b->c;
	int64_t q_shape[3] = { b->rows, c->hq, c->d }, o_shape[3] = { b->rows, c->hq, c->dv };
	int64_t m_shape[3] = { c->hq, b->rows, b->mask_cols };
	struct batch_dev d = { .q = conf_upload(GLLMK_F32, 3, q_shape, b->q), .out = conf_output(GLLMK_F32, 3, o_shape) };

	if (b->mask)
		d.mask = c->mask == MASK_PER_HEAD ? conf_upload(GLLMK_F32, 3, m_shape, b->mask)
						  : conf_upload(GLLMK_F32, 2, m_shape + 1, b->mask);
	if (b->sinks)
		d.sinks = conf_upload(GLLMK_F32, 1, &c->hq, b->sinks);
	return d;
}

static void batch_dev_free(struct batch_dev *d)
{
	conf_free(&d->q);
	conf_free(&d->out);
	if (d->mask.buf)
		conf_free(&d->mask);
	if (d->sinks.buf)
		conf_free(&d->sinks);
}

static void check_out(const struct batch *b, struct batch_dev *d, const char *what)
{
	float *got = conf_xmalloc(sizeof(float) * (b->nout + 1));

	conf_download(&d->out, got);
	conf_check_within(what, got, b->want, b->tol, b->nout);
	free(got);
	conf_poison(&d->out);
}

static void describe(char *buf, size_t len, const char *op, const struct ext_case *c, int64_t idx)
{
	snprintf(buf, len, "%s #%lld H=%lld/%lld D=%lld Dv=%lld %s%s scale=%g softcap=%g max_bias=%g window=%d%s%s",
		 op, (long long)idx, (long long)c->hq, (long long)c->hkv, (long long)c->d, (long long)c->dv,
		 ref_dtype_name(c->dt), c->causal ? " causal" : "", c->scale, c->softcap, c->max_bias, (int)c->window,
		 c->sinks ? " sinks" : "", c->mask == MASK_PER_HEAD ? " head-mask" : c->mask ? " mask" : "");
}

/* ------------------------------------------------------- attention_ext */

static void ext_one(const struct ext_case *c, int64_t idx)
{
	char what[256], where[300];
	struct batch b;

	describe(what, sizeof(what), "attention_ext", c, idx);
	batch_init(&b, c, what);

	struct batch_dev d = batch_upload(&b);
	const struct conf_tensor *mask = d.mask.buf ? &d.mask : NULL, *sinks = d.sinks.buf ? &d.sinks : NULL;

	if (c->layout != LAYOUT_PAGED) {
		struct conf_tensor k = upload_contiguous(&b, 0), v = upload_contiguous(&b, 1);
		gllmk_attention_ext_params p = batch_params(&b, c->extra ? (int32_t)b.seq[0].kv_len : 0);

		snprintf(where, sizeof(where), "%s Tq=%lld kv_len=%lld contiguous", what, (long long)b.seq[0].tq,
			 (long long)b.seq[0].kv_len);
		conf_ok(gllmk_attention_ext(conf.ctx, &d.out.t, &d.q.t, &k.t, &v.t, mask ? &mask->t : NULL, NULL,
					    sinks ? &sinks->t : NULL, &p));
		check_out(&b, &d, where);
		conf_free(&k);
		conf_free(&v);
	}
	if (c->layout != LAYOUT_CONTIGUOUS) {
		struct conf_tensor k = upload_paged(&b, 0), v = upload_paged(&b, 1);
		struct conf_tensor bt = conf_upload(GLLMK_I32, 1, &b.npages_max, b.table);
		gllmk_attention_ext_params p = batch_params(&b, (int32_t)b.seq[0].kv_len);

		snprintf(where, sizeof(where), "%s Tq=%lld kv_len=%lld paged", what, (long long)b.seq[0].tq,
			 (long long)b.seq[0].kv_len);
		conf_ok(gllmk_attention_ext(conf.ctx, &d.out.t, &d.q.t, &k.t, &v.t, mask ? &mask->t : NULL, &bt.t,
					    sinks ? &sinks->t : NULL, &p));
		check_out(&b, &d, where);
		conf_free(&k);
		conf_free(&v);
		conf_free(&bt);
	}
	batch_dev_free(&d);
	batch_free(&b);
}

static void ext_cases_run(size_t from, size_t to)
{
	conf_begin("attention_ext");
	for (size_t i = from; i < to && i < sizeof(ext_cases) / sizeof(ext_cases[0]); i++)
		ext_one(&ext_cases[i], (int64_t)i);
	conf_covered("attention_ext");
}

static void attention_ext_defaults(void **state)
{
	(void)state;
	ext_cases_run(0, 1);
}

static void attention_ext_softcap(void **state)
{
	(void)state;
	ext_cases_run(1, 3);
}

static void attention_ext_sinks(void **state)
{
	(void)state;
	ext_cases_run(3, 5);
}

static void attention_ext_alibi(void **state)
{
	(void)state;
	ext_cases_run(5, 7);
}

static void attention_ext_window(void **state)
{
	(void)state;
	ext_cases_run(7, 10);
}

static void attention_ext_head_mask(void **state)
{
	(void)state;
	ext_cases_run(10, 12);
}

static void attention_ext_every_dtype(void **state)
{
	(void)state;
	ext_cases_run(12, 17);
}

static void attention_ext_decode(void **state)
{
	(void)state;
	ext_cases_run(17, 20);
}

static void attention_ext_prompt(void **state)
{
	(void)state;
	ext_cases_run(20, 24);
}

/* A block id outside [0, nblk) among the pages kv_len uses: GLLMK_E_BOUNDS,
 * from the call or the next sync (as attention's). */
static void attention_ext_block_out_of_range(void **state)
{
	const struct ext_case c = { .hq = 2, .hkv = 1, .d = 32, .dv = 32, .dt = GLLMK_Q8_0, .seq = { { 1, 33 } } };
	static const int32_t bad_ids[] = { -1, INT32_MAX };
	struct batch b;

	(void)state;
	conf_begin("attention_ext");
	batch_init(&b, &c, "attention_ext block id out of range");

	struct batch_dev d = batch_upload(&b);
	struct conf_tensor k = upload_paged(&b, 0), v = upload_paged(&b, 1);
	gllmk_attention_ext_params p = batch_params(&b, 33);

	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		int32_t table[8];

		memcpy(table, b.table, sizeof(int32_t) * (size_t)b.npages_max);
		table[2 - i] = bad_ids[i];      /* the last used page, then an earlier one */
		struct conf_tensor bt = conf_upload(GLLMK_I32, 1, &b.npages_max, table);
		gllmk_status st = gllmk_attention_ext(conf.ctx, &d.out.t, &d.q.t, &k.t, &v.t, NULL, &bt.t, NULL, &p);

		if (st == GLLMK_OK) /* a GPU plugin that checks the table on the device */
			st = gllmk_sync(conf.ctx);
		conf_free(&bt);
		if (st != GLLMK_E_BOUNDS)
			conf_fail("attention_ext block_table[%zu] = %d: got %s (%s), want GLLMK_E_BOUNDS", 2 - i,
				  bad_ids[i], gllmk_status_string(st), gllmk_last_error());
	}
	conf_free(&k);
	conf_free(&v);
	batch_dev_free(&d);
	batch_free(&b);
	conf_covered("attention_ext");
}

/* ---------------------------------------------------- attention_varlen */

/* The varlen call on batch b with these index tensors' host data. */
static gllmk_status varlen_call(const struct batch *b, struct batch_dev *d, const struct conf_tensor *k,
				const struct conf_tensor *v, const int32_t *cu, const int32_t *kv_len,
				const int32_t *table)
{
	const int64_t s1 = b->n_seq + 1, t_shape[2] = { b->n_seq, b->npages_max };
	struct conf_tensor cut = conf_upload(GLLMK_I32, 1, &s1, cu);
	struct conf_tensor kvt = conf_upload(GLLMK_I32, 1, &b->n_seq, kv_len);
	struct conf_tensor btt = conf_upload(GLLMK_I32, 2, t_shape, table);
	gllmk_attention_ext_params p = batch_params(b, 12345); /* kv_len: ignored */
	gllmk_status st = gllmk_attention_varlen(conf.ctx, &d->out.t, &d->q.t, &k->t, &v->t,
						 d->mask.buf ? &d->mask.t : NULL, &cut.t, &kvt.t, &btt.t,
						 d->sinks.buf ? &d->sinks.t : NULL, &p);

	conf_free(&cut);
	conf_free(&kvt);
	conf_free(&btt);
	return st;
}

static void batch_index(const struct batch *b, int32_t *cu, int32_t *kv_len)
{
	for (int64_t s = 0; s <= b->n_seq; s++)
		cu[s] = (int32_t)b->cu[s];
	for (int64_t s = 0; s < b->n_seq; s++)
		kv_len[s] = (int32_t)b->seq[s].kv_len;
}

static void varlen_one(const struct ext_case *c, int64_t idx)
{
	char what[256], where[320];
	int32_t cu[MAX_SEQS + 1], kv_len[MAX_SEQS];
	struct batch b;

	describe(what, sizeof(what), "attention_varlen", c, idx);
	batch_init(&b, c, what);
	batch_index(&b, cu, kv_len);
	snprintf(where, sizeof(where), "%s S=%lld rows=%lld max kv_len=%lld", what, (long long)b.n_seq,
		 (long long)b.rows, (long long)b.max_kv);

	struct batch_dev d = batch_upload(&b);
	struct conf_tensor k = upload_paged(&b, 0), v = upload_paged(&b, 1);

	conf_ok(varlen_call(&b, &d, &k, &v, cu, kv_len, b.table));
	check_out(&b, &d, where);
	conf_free(&k);
	conf_free(&v);
	batch_dev_free(&d);
	batch_free(&b);
}

static void varlen_cases_run(size_t from, size_t to)
{
	conf_begin("attention_varlen");
	for (size_t i = from; i < to && i < sizeof(varlen_cases) / sizeof(varlen_cases[0]); i++)
		varlen_one(&varlen_cases[i], (int64_t)i);
	conf_covered("attention_varlen");
}

static void attention_varlen_lengths(void **state)
{
	(void)state;
	varlen_cases_run(0, 2);
}

static void attention_varlen_every_dtype(void **state)
{
	(void)state;
	varlen_cases_run(2, 7);
}

static void attention_varlen_decode_batch(void **state)
{
	(void)state;
	varlen_cases_run(7, 9);
}

/* Index data out of range: GLLMK_E_BOUNDS, the message naming what. */
struct varlen_bad {
	const char *what, *names;       /* the case, a word the message must hold */
	int which;                      /* 0 cu, 1 kv_len, 2 block table */
	int64_t at;                     /* the entry; block table: sequence·100 + page */
	int32_t value;                  /* < -1000: relative to a limit, see below */
};

#define BAD_PAST_TABLE (-2000)   /* kv_len: npages·B + 1 */
#define BAD_NBLK (-3000)         /* block id: nblk */
#define BAD_PAST_ROWS (-4000)    /* cu: sum Tq + 1 */

static void attention_varlen_bounds(void **state)
{
	const struct ext_case c = { .hq = 2, .hkv = 1, .d = 32, .dv = 32, .dt = GLLMK_F16, .causal = 1, .n_seq = 3,
				    .seq = { { 2, 20 }, { 1, 40 }, { 3, 5 } }, .mask = MASK_SHARED };
	static const struct varlen_bad bad[] = {
		{ "cu_q[0] != 0", "cu_q", 0, 0, 1 },
		{ "cu_q decreasing", "sequence 1", 0, 2, 1 },
		{ "cu_q[S] != sum Tq", "cu_q", 0, 3, 5 },
		{ "cu_q past the rows", "sequence 1", 0, 2, BAD_PAST_ROWS },
		{ "kv_len < 0", "sequence 1", 1, 1, -1 },
		{ "kv_len past its block table", "sequence 2", 1, 2, BAD_PAST_TABLE },
		{ "kv_len past the mask", "mask", 1, 1, 46 },
		{ "block id = nblk", "sequence 1", 2, 100, BAD_NBLK },
		{ "block id < 0", "sequence 0", 2, 1, -1 },
	};
	int32_t cu[MAX_SEQS + 1], kv_len[MAX_SEQS], *table;
	struct batch b;

	(void)state;
	conf_begin("attention_varlen");
	batch_init(&b, &c, "attention_varlen bounds");

	struct batch_dev d = batch_upload(&b);
	struct conf_tensor k = upload_paged(&b, 0), v = upload_paged(&b, 1);

	table = conf_xmalloc(sizeof(int32_t) * (size_t)(b.n_seq * b.npages_max));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct varlen_bad *x = &bad[i];
		int32_t value = x->value == BAD_PAST_TABLE ? (int32_t)(b.npages_max * PAGE + 1)
			      : x->value == BAD_NBLK       ? (int32_t)b.nblk
			      : x->value == BAD_PAST_ROWS  ? (int32_t)(b.rows + 1)
							   : x->value;
		gllmk_status st;

		batch_index(&b, cu, kv_len);
		memcpy(table, b.table, sizeof(int32_t) * (size_t)(b.n_seq * b.npages_max));
		if (x->which == 0)
			cu[x->at] = value;
		else if (x->which == 1)
			kv_len[x->at] = value;
		else
			table[x->at / 100 * b.npages_max + x->at % 100] = value;
		st = varlen_call(&b, &d, &k, &v, cu, kv_len, table);
		if (st != GLLMK_E_BOUNDS || !strstr(gllmk_last_error(), x->names))
			conf_fail("attention_varlen %s: got %s (%s), want GLLMK_E_BOUNDS naming '%s'", x->what,
				  gllmk_status_string(st), gllmk_last_error(), x->names);
	}
	free(table);
	conf_free(&k);
	conf_free(&v);
	batch_dev_free(&d);
	batch_free(&b);
	conf_covered("attention_varlen");
}

CONF_GROUP(attention_ext) = {
	cmocka_unit_test(attention_ext_defaults),
	cmocka_unit_test(attention_ext_softcap),
	cmocka_unit_test(attention_ext_sinks),
	cmocka_unit_test(attention_ext_alibi),
	cmocka_unit_test(attention_ext_window),
	cmocka_unit_test(attention_ext_head_mask),
	cmocka_unit_test(attention_ext_every_dtype),
	cmocka_unit_test(attention_ext_decode),
	cmocka_unit_test(attention_ext_prompt),
	cmocka_unit_test(attention_ext_block_out_of_range),
	cmocka_unit_test(attention_varlen_lengths),
	cmocka_unit_test(attention_varlen_every_dtype),
	cmocka_unit_test(attention_varlen_decode_batch),
	cmocka_unit_test(attention_varlen_bounds),
};
CONF_GROUP_END(attention_ext);
