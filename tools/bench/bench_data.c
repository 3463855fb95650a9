/* Random tensors: f32 activations in [-1, 1), f16 weights of moderate size,
 * and quantized blocks that are random bytes with sane scales (a random f16
 * scale field decodes to anything, NaN included). Large buffers are filled
 * and written a chunk at a time, so the host never holds a second copy.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define CHUNK_BYTES (16u << 20)

/* Where a block of each block dtype keeps its scales: up to two f16
 * fields (byte offsets, -1 for none), or one f32 (q8_K); `kind` says how
 * the first is stored where it is not a plain f16: mxfp4's E8M0 byte,
 * iq1_m's f16 spread over the top nibbles of its 4 scale words. Layouts:
 * SPEC/QUANT.md. f32, f16 and bf16 have no blocks: bench_fill_dtype fills
 * them as values. */
enum scale_kind { SCALE_F16, SCALE_E8M0, SCALE_F16_NIBBLES };

struct block_scales {
	int32_t dtype;
	int16_t half_at[2];
	int16_t float_at;
	enum scale_kind kind;
};

static const struct block_scales block_scales[] = {
	{ GLLMK_Q8_0, { 0, -1 }, -1, SCALE_F16 },          { GLLMK_Q4_0, { 0, -1 }, -1, SCALE_F16 },
	{ GLLMK_Q4_1, { 0, 2 }, -1, SCALE_F16 },           { GLLMK_Q5_0, { 0, -1 }, -1, SCALE_F16 },
	{ GLLMK_Q5_1, { 0, 2 }, -1, SCALE_F16 },           { GLLMK_Q2_K, { 80, 82 }, -1, SCALE_F16 },
	{ GLLMK_Q3_K, { 108, -1 }, -1, SCALE_F16 },        { GLLMK_Q4_K, { 0, 2 }, -1, SCALE_F16 },
	{ GLLMK_Q5_K, { 0, 2 }, -1, SCALE_F16 },           { GLLMK_Q6_K, { 208, -1 }, -1, SCALE_F16 },
	{ GLLMK_IQ4_NL, { 0, -1 }, -1, SCALE_F16 },        { GLLMK_IQ4_XS, { 0, -1 }, -1, SCALE_F16 },
	{ GLLMK_Q8_K, { -1, -1 }, 0, SCALE_F16 },          { GLLMK_IQ2_XXS, { 0, -1 }, -1, SCALE_F16 },
	{ GLLMK_IQ2_XS, { 0, -1 }, -1, SCALE_F16 },        { GLLMK_IQ2_S, { 0, -1 }, -1, SCALE_F16 },
	{ GLLMK_IQ3_XXS, { 0, -1 }, -1, SCALE_F16 },       { GLLMK_IQ3_S, { 0, -1 }, -1, SCALE_F16 },
	{ GLLMK_IQ1_S, { 0, -1 }, -1, SCALE_F16 },         { GLLMK_TQ1_0, { 52, -1 }, -1, SCALE_F16 },
	{ GLLMK_TQ2_0, { 64, -1 }, -1, SCALE_F16 },        { GLLMK_IQ1_M, { 48, -1 }, -1, SCALE_F16_NIBBLES },
	{ GLLMK_MXFP4, { 0, -1 }, -1, SCALE_E8M0 },
};

/* The weight dtypes of abi/gllmk_dtypes.def, in its order, but q8_K (an
 * activation format: models store no weights in it). */
size_t bench_weight_dtypes(gllmk_dtype out[BENCH_MAX_DTYPES])
{
	size_t n = 0;

#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv)                           \
	if ((weight) && (e) != GLLMK_Q8_K && n < BENCH_MAX_DTYPES)                                 \
		out[n++] = (e);
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
	return n;
}

uint64_t bench_rand(uint64_t *s)
{
	/* splitmix64: fast, and any seed is a good one */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void bench_fill_f32(float *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(bench_rand(&seed) >> 40) * 0x1p-23f - 1.0f;
}

/* A positive f16 between 2^-10 and 2^-6: scale × quant stays modest. */
static uint16_t sane_scale(uint64_t r)
{
	return (uint16_t)((5 + r % 5) << 10 | ((r >> 8) & 0x3ff));
}

/* A signed f16 between 2^-4 and 1. */
static uint16_t sane_weight(uint64_t r)
{
	return (uint16_t)((r & 0x8000) | (11 + (r >> 16) % 4) << 10 | (r & 0x3ff));
}

static void fill_bytes(uint8_t *p, size_t n, uint64_t *seed)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t r = bench_rand(seed);

		memcpy(p + i, &r, 8);
	}
	for (; i < n; i++)
		p[i] = (uint8_t)bench_rand(seed);
}

/* A sane scale h (f16 bits) stored as `kind` says: E8M0 the same power of
 * two (2^(e - 127)), split f16 nibble k in the top nibble of word k. */
static void put_odd_scale(enum scale_kind kind, uint8_t *at, uint16_t h)
{
	if (kind == SCALE_E8M0) {
		*at = (uint8_t)((h >> 10) - 15 + 127);
		return;
	}
	for (int k = 0; k < 4; k++) {
		uint16_t w;

		memcpy(&w, at + 2 * k, 2);
		w = (uint16_t)((w & 0x0fff) | ((h >> 4 * k) & 15) << 12);
		memcpy(at + 2 * k, &w, 2);
	}
}

static void fill_blocks(const struct block_scales *bs, size_t block_bytes, uint8_t *p, size_t bytes, uint64_t *seed)
{
	fill_bytes(p, bytes, seed);
	for (size_t off = 0; off + block_bytes <= bytes; off += block_bytes) {
		for (int k = 0; k < 2; k++) {
			if (bs->half_at[k] >= 0) {
				uint16_t h = sane_scale(bench_rand(seed));

				if (k == 0 && bs->kind != SCALE_F16)
					put_odd_scale(bs->kind, p + off + bs->half_at[k], h);
				else
					memcpy(p + off + bs->half_at[k], &h, 2);
			}
		}
		if (bs->float_at >= 0) {
			float d = 1e-3f;

			memcpy(p + off + bs->float_at, &d, 4);
		}
	}
}

void bench_fill_dtype(gllmk_dtype t, void *p, size_t bytes, uint64_t seed)
{
	uint64_t s = seed;

	if (t == GLLMK_F32) {
		bench_fill_f32(p, bytes / 4, seed);
		return;
	}
	if (t == GLLMK_F16 || t == GLLMK_BF16) {
		uint16_t *h = p;

		for (size_t i = 0; i < bytes / 2; i++) {
			uint16_t w = sane_weight(bench_rand(&s));

			/* bf16: the same sign and a small exponent (2^-4..1) */
			h[i] = t == GLLMK_F16 ? w : (uint16_t)((w & 0x8000) | (123 + (w >> 10) % 4) << 7 | (w & 0x7f));
		}
		return;
	}
	for (size_t i = 0; i < sizeof(block_scales) / sizeof(block_scales[0]); i++) {
		if (block_scales[i].dtype == (int32_t)t) {
			fill_blocks(&block_scales[i], (size_t)gllmk_dtype_block_bytes(t), p, bytes, &s);
			return;
		}
	}
	fill_bytes(p, bytes, &s); /* i32 and anything without scales */
}

uint64_t bench_matrix_bytes(gllmk_dtype t, int64_t rows, int64_t cols)
{
	uint64_t row = 0;

	if (gllmk_dtype_row_bytes(t, cols, &row) != GLLMK_OK)
		return 0;
	return row * (uint64_t)rows;
}

gllmk_buffer *bench_random_buffer(struct bench *b, gllmk_dtype t, uint64_t bytes, uint64_t seed, gllmk_status *st)
{
	uint64_t block = (uint64_t)gllmk_dtype_block_bytes(t);
	uint64_t chunk = CHUNK_BYTES / block * block;
	gllmk_buffer *buf = NULL;
	void *host = malloc(chunk);

	*st = host ? gllmk_buffer_alloc(b->ctx, bytes, &buf) : GLLMK_E_NO_MEMORY;
	for (uint64_t off = 0; *st == GLLMK_OK && off < bytes; off += chunk) {
		uint64_t n = bytes - off < chunk ? bytes - off : chunk;

		bench_fill_dtype(t, host, n, seed + off);
		*st = gllmk_buffer_write(buf, off, host, n);
	}
	free(host);
	if (*st != GLLMK_OK && buf) {
		gllmk_buffer_free(buf);
		buf = NULL;
	}
	return buf;
}

gllmk_buffer *bench_upload(struct bench *b, const void *host, uint64_t bytes, gllmk_status *st)
{
	gllmk_buffer *buf = NULL;

	*st = gllmk_buffer_alloc(b->ctx, bytes, &buf);
	if (*st == GLLMK_OK)
		*st = gllmk_buffer_write(buf, 0, host, bytes);
	if (*st != GLLMK_OK && buf) {
		gllmk_buffer_free(buf);
		buf = NULL;
	}
	return buf;
}
