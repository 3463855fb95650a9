/* The codebooks of the i-quants and mxfp4 as C arrays, built once (in
 * ref/codebooks.c) from kernels/quant_grids.h, the formats' one copy of
 * ggml's tables (SPEC/QUANT.md, "Codebooks"). Every grid entry is its
 * bytes in element order: grid[i][j] is element j of entry i, whatever the
 * host's byte order.
 */
#ifndef GLLMK_CPU_CODEBOOKS_H
#define GLLMK_CPU_CODEBOOKS_H

#include <stdint.h>

#include "quant_grids.h"

/* 8 magnitudes per entry, each one of 0x08, 0x19, 0x2b (8, 25, 43) */
extern const uint8_t ref_iq2xxs_grid[GLLMK_IQ2XXS_GRID_LEN][8];
extern const uint8_t ref_iq2xs_grid[GLLMK_IQ2XS_GRID_LEN][8];
extern const uint8_t ref_iq2s_grid[GLLMK_IQ2S_GRID_LEN][8];
/* 4 magnitudes per entry: iq3xxs in {4, 12, .., 52, 62}, iq3s odd 1 .. 15 */
extern const uint8_t ref_iq3xxs_grid[GLLMK_IQ3XXS_GRID_LEN][4];
extern const uint8_t ref_iq3s_grid[GLLMK_IQ3S_GRID_LEN][4];
/* 8 values in {-1, 0, 1} per entry (iq1_s and iq1_m) */
extern const int8_t ref_iq1s_grid[GLLMK_IQ1S_GRID_LEN][8];
/* The sign byte of a 7-bit sign index (bit j set: element j negative;
 * bit 7 makes the count of set bits even). */
extern const uint8_t ref_ksigns_iq2xs[GLLMK_KSIGNS_IQ2XS_LEN];
/* E2M1's values doubled, indexed by the 4-bit code. */
extern const int8_t ref_kvalues_mxfp4[GLLMK_KVALUES_MXFP4_LEN];

#endif
