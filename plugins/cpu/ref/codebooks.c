/* The arrays of codebooks.h, expanded from kernels/quant_grids.h's macros:
 * no table is written out here. */
#include "codebooks.h"

/* A 32-bit word of a grid entry as its four bytes, byte 0 first. */
#define WORD_BYTES(v) (uint8_t)((v) & 0xff), (uint8_t)((v) >> 8 & 0xff), (uint8_t)((v) >> 16 & 0xff), \
		      (uint8_t)((v) >> 24 & 0xff)
#define GRID8(lo, hi) { WORD_BYTES(lo), WORD_BYTES(hi) }
#define GRID4(v) { WORD_BYTES(v) }
/* iq1s bytes 0xff, 0x00, 0x01 are the int8 values -1, 0, 1. */
#define SIGNED(b) (int8_t)((int)(b) - ((b) > 0x7f ? 0x100 : 0))
#define GRID8_SIGNED(lo, hi)                                                                             \
	{ SIGNED((lo) & 0xff), SIGNED((lo) >> 8 & 0xff), SIGNED((lo) >> 16 & 0xff), SIGNED((lo) >> 24 & 0xff), \
	  SIGNED((hi) & 0xff), SIGNED((hi) >> 8 & 0xff), SIGNED((hi) >> 16 & 0xff), SIGNED((hi) >> 24 & 0xff) }
#define BYTE(v) (v)

const uint8_t ref_iq2xxs_grid[GLLMK_IQ2XXS_GRID_LEN][8] = { GLLMK_IQ2XXS_GRID(GRID8) };
const uint8_t ref_iq2xs_grid[GLLMK_IQ2XS_GRID_LEN][8] = { GLLMK_IQ2XS_GRID(GRID8) };
const uint8_t ref_iq2s_grid[GLLMK_IQ2S_GRID_LEN][8] = { GLLMK_IQ2S_GRID(GRID8) };
const uint8_t ref_iq3xxs_grid[GLLMK_IQ3XXS_GRID_LEN][4] = { GLLMK_IQ3XXS_GRID(GRID4) };
const uint8_t ref_iq3s_grid[GLLMK_IQ3S_GRID_LEN][4] = { GLLMK_IQ3S_GRID(GRID4) };
const int8_t ref_iq1s_grid[GLLMK_IQ1S_GRID_LEN][8] = { GLLMK_IQ1S_GRID(GRID8_SIGNED) };
const uint8_t ref_ksigns_iq2xs[GLLMK_KSIGNS_IQ2XS_LEN] = { GLLMK_KSIGNS_IQ2XS(BYTE) };
const int8_t ref_kvalues_mxfp4[GLLMK_KVALUES_MXFP4_LEN] = { GLLMK_KVALUES_MXFP4(BYTE) };
