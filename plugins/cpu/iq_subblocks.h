/* The scalar half of the i-quants' SIMD dots, shared by the x86
 * plugins: a block's sub-block of 32 elements as grid entries, sign bits
 * and group scales, which each ISA turns into vectors its own way
 * (SPEC/QUANT.md gives the formats; the formulas are ggml's
 * dequantize_row_iq*). The codebooks: ref/codebooks.h.
 */
#ifndef GLLMK_CPU_IQ_SUBBLOCKS_H
#define GLLMK_CPU_IQ_SUBBLOCKS_H

#include <stdint.h>
#include <string.h>

#include "quant_blocks.h"
#include "ref/codebooks.h"

/* A grid entry's 8 bytes as a 64-bit word, element j in byte j. */
static inline uint64_t iq_grid8(const uint8_t entry[8])
{
	uint64_t v;

	memcpy(&v, entry, 8);
	return v;
}

/* Sub-block ib (elements 32ib .. 32ib + 31) of a block:
 *   entry[l] its grid entries in element order, read in place: 4 of 8
 *            bytes (entry[0..3]) or, iq3, 8 of 4 (iq_entry_bytes);
 *   signs    bit j for element j: iq2/iq3 the element is negative,
 *            iq1 its delta is (−1/8 instead of +1/8);
 *   scale[h] the odd multiplier 2·ls + 1 of elements 16h .. 16h + 15.
 * The element's value is then d·factor·scale·(±grid) (iq2, iq3) or
 * d·factor·scale·(8·grid ± 1) (iq1), factor the format's power of two
 * (iq_factor below). */
struct iq_sub {
	const uint8_t *entry[8];
	uint32_t signs;
	uint8_t scale[2];
};

/* iq2_*: d·(0.5 + ls)·0.25; iq1_*: the 1/8 delta, times 8 to make it
 * whole (iq_factor: 1/8 for these). */
#define IQ_FACTOR_IQ3XXS 0.25f /* d·(0.5 + ls)·0.5 */
#define IQ_FACTOR_IQ3S 1.0f   /* d·(1 + 2·ls) */

static inline uint32_t iq_u32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* 4 sign bytes from 4 7-bit indices (bits 0..27 of v), element order. */
static inline uint32_t iq_ksigns4(uint32_t v)
{
	return (uint32_t)ref_ksigns_iq2xs[v & 127] | (uint32_t)ref_ksigns_iq2xs[(v >> 7) & 127] << 8 |
	       (uint32_t)ref_ksigns_iq2xs[(v >> 14) & 127] << 16 | (uint32_t)ref_ksigns_iq2xs[(v >> 21) & 127] << 24;
}

static inline uint8_t iq_odd(unsigned ls)
{
	return (uint8_t)(2 * ls + 1);
}

/* iq2_xxs: per 32, two words: 4 byte indices, then 4×7 sign bits and ls. */
static inline struct iq_sub iq2_xxs_sub(const struct block_iq2_xxs *b, int ib)
{
	const uint32_t idx = iq_u32(b->qs + 4 * ib), aux = iq_u32(b->qs + 4 * ib + 2);
	struct iq_sub s = { .signs = iq_ksigns4(aux), .scale = { iq_odd(aux >> 28), iq_odd(aux >> 28) } };

	for (int l = 0; l < 4; l++)
		s.entry[l] = ref_iq2xxs_grid[(idx >> 8 * l) & 255];
	return s;
}

/* iq2_xs: per 8 elements a 9-bit index and a 7-bit sign index; a 4-bit
 * ls per 16. */
static inline struct iq_sub iq2_xs_sub(const struct block_iq2_xs *b, int ib)
{
	const uint16_t *q = b->qs + 4 * ib;
	struct iq_sub s = { .signs = 0, .scale = { iq_odd(b->scales[ib] & 15), iq_odd(b->scales[ib] >> 4) } };

	for (int l = 0; l < 4; l++) {
		s.entry[l] = ref_iq2xs_grid[q[l] & 511];
		s.signs |= (uint32_t)ref_ksigns_iq2xs[q[l] >> 9] << 8 * l;
	}
	return s;
}

/* iq2_s: 10-bit indices (8 in qs, 2 in qh), plain sign bytes after the
 * 32 index bytes. */
static inline struct iq_sub iq2_s_sub(const struct block_iq2_s *b, int ib)
{
	const uint8_t *q = b->qs + 4 * ib;
	const unsigned h = b->qh[ib];
	struct iq_sub s = { .signs = iq_u32(b->qs + QK_K / 8 + 4 * ib),
			    .scale = { iq_odd(b->scales[ib] & 15), iq_odd(b->scales[ib] >> 4) } };

	for (int l = 0; l < 4; l++)
		s.entry[l] = ref_iq2s_grid[q[l] | ((h << (8 - 2 * l)) & 0x300)];
	return s;
}

/* iq3_xxs: 8 byte indices of 4 elements, then per 32 a word of 4×7 sign
 * bits and ls. */
static inline struct iq_sub iq3_xxs_sub(const struct block_iq3_xxs *b, int ib)
{
	const uint8_t *q = b->qs + 8 * ib;
	const uint32_t aux = iq_u32(b->qs + QK_K / 4 + 4 * ib);
	struct iq_sub s = { .signs = iq_ksigns4(aux), .scale = { iq_odd(aux >> 28), iq_odd(aux >> 28) } };

	for (int l = 0; l < 8; l++)
		s.entry[l] = ref_iq3xxs_grid[q[l]];
	return s;
}

/* iq3_s: 9-bit indices of 4 elements (8 in qs, 1 in qh), plain sign
 * bytes, a 4-bit ls per 32. */
static inline struct iq_sub iq3_s_sub(const struct block_iq3_s *b, int ib)
{
	const uint8_t *q = b->qs + 8 * ib;
	const unsigned h = b->qh[ib], ls = (b->scales[ib / 2] >> 4 * (ib % 2)) & 15;
	struct iq_sub s = { .signs = iq_u32(b->signs + 4 * ib), .scale = { iq_odd(ls), iq_odd(ls) } };

	for (int l = 0; l < 8; l++)
		s.entry[l] = ref_iq3s_grid[q[l] | ((h << (8 - l)) & 256)];
	return s;
}

/* iq1_s: 11-bit indices (8 in qs, 3 in qh); qh's bits 12..14 are ls and
 * bit 15 the delta's sign, for all 32. */
static inline struct iq_sub iq1_s_sub(const struct block_iq1_s *b, int ib)
{
	const uint8_t *q = b->qs + 4 * ib;
	const unsigned h = b->qh[ib];
	struct iq_sub s = { .signs = h & 0x8000 ? 0xffffffffu : 0, .scale = { iq_odd((h >> 12) & 7), iq_odd((h >> 12) & 7) } };

	for (int l = 0; l < 4; l++)
		s.entry[l] = (const uint8_t *)ref_iq1s_grid[q[l] | (((h >> 3 * l) & 7) << 8)];
	return s;
}

/* iq1_m's d: the top nibbles of its 4 scale words, f16 bits. */
static inline uint16_t iq1_m_d(const struct block_iq1_m *b)
{
	uint16_t sc[4];

	memcpy(sc, b->scales, sizeof(sc));
	return (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
}

/* iq1_m: per 8 elements an 11-bit index (8 in qs, 3 in a nibble of qh)
 * and the delta's sign (that nibble's bit 3); a 3-bit ls per 16. */
static inline struct iq_sub iq1_m_sub(const struct block_iq1_m *b, int ib)
{
	const uint8_t *q = b->qs + 4 * ib;
	const unsigned h = b->qh[2 * ib] | b->qh[2 * ib + 1] << 8; /* nibble l: the l-th 8's */
	const unsigned sc = b->scales[2 * (ib / 2)] | b->scales[2 * (ib / 2) + 1] << 8;
	struct iq_sub s = { .signs = 0 };

	s.scale[0] = iq_odd((sc >> 6 * (ib % 2)) & 7);
	s.scale[1] = iq_odd((sc >> (6 * (ib % 2) + 3)) & 7);
	for (int l = 0; l < 4; l++) {
		s.entry[l] = (const uint8_t *)ref_iq1s_grid[q[l] | ((h >> 4 * l) & 7) << 8];
		s.signs |= ((h >> (4 * l + 3)) & 1) * (0xffu << 8 * l);
	}
	return s;
}

/* The seven i-quants by one name, for bodies instantiated per format
 * (f a constant once inlined). */
enum iq_format { IQ_IQ2_XXS, IQ_IQ2_XS, IQ_IQ2_S, IQ_IQ3_XXS, IQ_IQ3_S, IQ_IQ1_S, IQ_IQ1_M };

static inline __attribute__((always_inline)) struct iq_sub iq_sub_of(enum iq_format f, const void *b, int ib)
{
	switch (f) {
	case IQ_IQ2_XXS: return iq2_xxs_sub(b, ib);
	case IQ_IQ2_XS: return iq2_xs_sub(b, ib);
	case IQ_IQ2_S: return iq2_s_sub(b, ib);
	case IQ_IQ3_XXS: return iq3_xxs_sub(b, ib);
	case IQ_IQ3_S: return iq3_s_sub(b, ib);
	case IQ_IQ1_S: return iq1_s_sub(b, ib);
	default: return iq1_m_sub(b, ib);
	}
}

static inline __attribute__((always_inline)) int64_t iq_block_bytes(enum iq_format f)
{
	static const int64_t bytes[] = {
		sizeof(struct block_iq2_xxs), sizeof(struct block_iq2_xs), sizeof(struct block_iq2_s),
		sizeof(struct block_iq3_xxs), sizeof(struct block_iq3_s), sizeof(struct block_iq1_s),
		sizeof(struct block_iq1_m),
	};

	return bytes[f];
}

/* The block's f16 d (bits): the first field, but iq1_m's. */
static inline __attribute__((always_inline)) uint16_t iq_d(enum iq_format f, const void *b)
{
	uint16_t d;

	if (f == IQ_IQ1_M)
		return iq1_m_d(b);
	memcpy(&d, b, 2);
	return d;
}

static inline __attribute__((always_inline)) float iq_factor(enum iq_format f)
{
	return f == IQ_IQ3_XXS ? IQ_FACTOR_IQ3XXS : f == IQ_IQ3_S ? IQ_FACTOR_IQ3S : 0.125f;
}

/* Bytes of a grid entry: 4 for the iq3 formats, else 8. */
static inline __attribute__((always_inline)) int iq_entry_bytes(enum iq_format f)
{
	return f == IQ_IQ3_XXS || f == IQ_IQ3_S ? 4 : 8;
}

/* iq1_s and iq1_m: values 8·grid ± 1, else ±grid. */
static inline __attribute__((always_inline)) int iq_is_iq1(enum iq_format f)
{
	return f == IQ_IQ1_S || f == IQ_IQ1_M;
}

#endif
