/* The ggml/GGUF quantization blocks, bit for bit (SPEC/QUANT.md gives each
 * layout with byte offsets and its decode formula). Halves are IEEE binary16
 * bit patterns (fp16.h); every multi-byte field is little-endian, which is
 * what the host order is on every CPU gllmk targets (x86-64, AArch64).
 */
#ifndef GLLMK_CPU_QUANT_BLOCKS_H
#define GLLMK_CPU_QUANT_BLOCKS_H

#include <stdint.h>
#include <string.h>

#include "gllmk.h"

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK4_NL 32
#define QK_K 256
#define QK_MXFP4 32
#define K_SCALE_SIZE 12         /* 6-bit scales and mins of q4_K, q5_K */

struct block_q4_0 {
	uint16_t d;
	uint8_t qs[QK4_0 / 2];          /* low nibbles: x[0..15], high: x[16..31] */
};

struct block_q4_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qs[QK4_1 / 2];
};

struct block_q5_0 {
	uint16_t d;
	uint8_t qh[4];                  /* bit j: 5th bit of x[j] */
	uint8_t qs[QK5_0 / 2];
};

struct block_q5_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qh[4];
	uint8_t qs[QK5_1 / 2];
};

struct block_q8_0 {
	uint16_t d;
	int8_t qs[QK8_0];
};

struct block_q2_K {
	uint8_t scales[QK_K / 16];      /* low nibble scale, high nibble min */
	uint8_t qs[QK_K / 4];
	uint16_t d;
	uint16_t dmin;
};

struct block_q3_K {
	uint8_t hmask[QK_K / 8];        /* 3rd bit of each quant */
	uint8_t qs[QK_K / 4];           /* low 2 bits */
	uint8_t scales[12];             /* 16 6-bit scales */
	uint16_t d;
};

struct block_q4_K {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[K_SCALE_SIZE];   /* 8 6-bit scales and 8 6-bit mins */
	uint8_t qs[QK_K / 2];
};

struct block_q5_K {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[K_SCALE_SIZE];
	uint8_t qh[QK_K / 8];
	uint8_t qs[QK_K / 2];
};

struct block_q6_K {
	uint8_t ql[QK_K / 2];           /* low 4 bits */
	uint8_t qh[QK_K / 4];           /* high 2 bits */
	int8_t scales[QK_K / 16];
	uint16_t d;
};

struct block_q8_K {
	float d;
	int8_t qs[QK_K];
	int16_t bsums[QK_K / 16];       /* sums of groups of 16 quants */
};

struct block_iq4_nl {
	uint16_t d;
	uint8_t qs[QK4_NL / 2];
};

struct block_iq4_xs {
	uint16_t d;
	uint16_t scales_h;              /* high 2 bits of the 8 6-bit scales */
	uint8_t scales_l[QK_K / 64];    /* low 4 bits, two per byte */
	uint8_t qs[QK_K / 2];
};

/* The dtypes of ABI 1.1. The i-quants below 4 bits index codebooks of 4 or
 * 8 values (kernels/quant_grids.h); SPEC/QUANT.md gives every field. */
struct block_iq2_xxs {
	uint16_t d;
	uint16_t qs[QK_K / 8];          /* per 32: 4 grid indices (8 bits), 4x7 sign bits, 4-bit scale */
};

struct block_iq2_xs {
	uint16_t d;
	uint16_t qs[QK_K / 8];          /* 9-bit grid index, 7-bit sign index */
	uint8_t scales[QK_K / 32];      /* two 4-bit scales per 32 */
};

struct block_iq2_s {
	uint16_t d;
	uint8_t qs[QK_K / 4];           /* low 8 bits of 32 grid indices, then 32 sign bytes */
	uint8_t qh[QK_K / 32];          /* 2 high bits of each grid index */
	uint8_t scales[QK_K / 32];
};

struct block_iq3_xxs {
	uint16_t d;
	uint8_t qs[3 * QK_K / 8];       /* 64 grid indices, then 8 u32 of signs and scale */
};

struct block_iq3_s {
	uint16_t d;
	uint8_t qs[QK_K / 4];           /* low 8 bits of 64 grid indices */
	uint8_t qh[QK_K / 32];          /* 9th bit of each index */
	uint8_t signs[QK_K / 8];
	uint8_t scales[QK_K / 64];      /* two 4-bit scales per 64 */
};

struct block_iq1_s {
	uint16_t d;
	uint8_t qs[QK_K / 8];           /* low 8 bits of 32 grid indices */
	uint16_t qh[QK_K / 32];         /* 3 high bits per index (x4), 3-bit scale, delta sign */
};

struct block_iq1_m {
	uint8_t qs[QK_K / 8];
	uint8_t qh[QK_K / 16];          /* 3 high bits and a delta sign per index */
	uint8_t scales[QK_K / 32];      /* 3-bit scales; the f16 d in the top nibbles of the 4 u16 */
};

struct block_tq1_0 {
	uint8_t qs[(QK_K - 4 * QK_K / 64) / 5]; /* 5 trits per byte, base 3 */
	uint8_t qh[QK_K / 64];          /* 4 trits per byte */
	uint16_t d;
};

struct block_tq2_0 {
	uint8_t qs[QK_K / 4];           /* 2 bits per element, value - 1 */
	uint16_t d;
};

struct block_mxfp4 {
	uint8_t e;                      /* E8M0 scale */
	uint8_t qs[QK_MXFP4 / 2];       /* E2M1 codes, low nibbles x[0..15], high x[16..31] */
};

_Static_assert(sizeof(struct block_q4_0) == 18, "q4_0 block");
_Static_assert(sizeof(struct block_q4_1) == 20, "q4_1 block");
_Static_assert(sizeof(struct block_q5_0) == 22, "q5_0 block");
_Static_assert(sizeof(struct block_q5_1) == 24, "q5_1 block");
_Static_assert(sizeof(struct block_q8_0) == 34, "q8_0 block");
_Static_assert(sizeof(struct block_q2_K) == 84, "q2_K block");
_Static_assert(sizeof(struct block_q3_K) == 110, "q3_K block");
_Static_assert(sizeof(struct block_q4_K) == 144, "q4_K block");
_Static_assert(sizeof(struct block_q5_K) == 176, "q5_K block");
_Static_assert(sizeof(struct block_q6_K) == 210, "q6_K block");
_Static_assert(sizeof(struct block_q8_K) == 292, "q8_K block");
_Static_assert(sizeof(struct block_iq4_nl) == 18, "iq4_nl block");
_Static_assert(sizeof(struct block_iq4_xs) == 136, "iq4_xs block");
_Static_assert(sizeof(struct block_iq2_xxs) == 66, "iq2_xxs block");
_Static_assert(sizeof(struct block_iq2_xs) == 74, "iq2_xs block");
_Static_assert(sizeof(struct block_iq2_s) == 82, "iq2_s block");
_Static_assert(sizeof(struct block_iq3_xxs) == 98, "iq3_xxs block");
_Static_assert(sizeof(struct block_iq3_s) == 110, "iq3_s block");
_Static_assert(sizeof(struct block_iq1_s) == 50, "iq1_s block");
_Static_assert(sizeof(struct block_iq1_m) == 56, "iq1_m block");
_Static_assert(sizeof(struct block_tq1_0) == 54, "tq1_0 block");
_Static_assert(sizeof(struct block_tq2_0) == 66, "tq2_0 block");
_Static_assert(sizeof(struct block_mxfp4) == 17, "mxfp4 block");

/* The non-linear 4-bit code book of iq4_nl and iq4_xs. */
static const int8_t iq4nl_values[16] = {
	-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

/* Scale j (0..15) of a q3_K block: 4 low bits from the first 8 bytes, 2 high
 * bits from the last 4, stored with a bias of 32. */
static inline int q3_K_scale(const uint8_t s[12], int j)
{
	const int lo = j < 8 ? s[j] & 0x0f : s[j - 8] >> 4;
	const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;

	return (lo | hi << 4) - 32;
}

/* The 6-bit scale ls of sub-block j (0..7) of an iq4_xs block (its value
 * is d·(ls − 32)): 4 low bits from scales_l, 2 high from scales_h. */
static inline int iq4_xs_ls(const struct block_iq4_xs *x, int j)
{
	return (((unsigned)x->scales_l[j / 2] >> 4 * (j % 2)) & 0x0f) | (((unsigned)x->scales_h >> 2 * j) & 3) << 4;
}

/* Scale and min j (0..7) of q4_K/q5_K: 6 bits each, packed in 12 bytes. */
static inline void k4_scale_min(int j, const uint8_t *q, uint8_t *d, uint8_t *m)
{
	if (j < 4) {
		*d = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*d = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

/* All 8 scales and 8 mins of q4_K/q5_K at once, four a 32-bit word, one
 * byte each (k4_scale_min's fields: bytes 0..3 hold scales 0..3 and the
 * top bits of scales 4..7, bytes 4..7 mins 0..3 and the top bits of mins
 * 4..7, bytes 8..11 the low nibbles of scales and mins 4..7): out[0],
 * out[1] scales 0..3, 4..7; out[2], out[3] mins 0..3, 4..7. */
static inline void k4_scales_mins(const uint8_t q[12], uint32_t out[4])
{
	const uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, low2 = 0x03030303;
	uint32_t u[3];

	memcpy(u, q, sizeof(u));
	out[0] = u[0] & low6;
	out[1] = (u[2] & low4) | ((u[0] >> 6) & low2) << 4;
	out[2] = u[1] & low6;
	out[3] = ((u[2] >> 4) & low4) | ((u[1] >> 6) & low2) << 4;
}

/* Elements and bytes per block of a dtype (1 element for the plain types);
 * 0 for a value that is not a dtype. The plugins' own copy of the core's
 * table, built from the same list (abi/gllmk_dtypes.def), so that they need
 * nothing from libgllmk. */
static inline int64_t cpu_block_elems(int32_t t)
{
	switch (t) {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) case e: return elems;
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
	}
	return 0;
}

static inline int64_t cpu_block_bytes(int32_t t)
{
	switch (t) {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) case e: return bytes;
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
	}
	return 0;
}

/* Bytes of n elements of t (n a multiple of the block). */
static inline int64_t cpu_row_bytes(int32_t t, int64_t n)
{
	return n / cpu_block_elems(t) * cpu_block_bytes(t);
}

#endif
