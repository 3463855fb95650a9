/* The codebooks of the i-quants and mxfp4 (kernels/quant_grids.h, ggml's
 * tables) and iq4_nl's values as __constant arrays. Every kernel that decodes sees these
 * declarations; codebooks.cl, built once into the program, holds the one
 * definition of each. Were they defined per kernel variant, every one of the
 * five kernels of a dtype would carry its own copy (the iq1 grid alone is
 * 16 KiB) and the program's constant data would outgrow the 64 KiB a GPU
 * may give it. */
#ifndef GLLMK_OCL_CODEBOOKS_H
#define GLLMK_OCL_CODEBOOKS_H

#include "quant_grids.h"

/* 64-bit entries arrive as two 32-bit words, the low one (bytes 0..3) first */
#define GRID64(lo, hi) ((ulong)(hi) << 32 | (lo))
#define GRID_ENTRY(v) (v)

#ifdef CODEBOOKS_DEFINE
#define CODEBOOK(type, name, len, entries) __constant type name[len] = { entries };
#else
#define CODEBOOK(type, name, len, entries) extern __constant type name[len];
#endif

CODEBOOK(ulong, iq2xxs_grid, GLLMK_IQ2XXS_GRID_LEN, GLLMK_IQ2XXS_GRID(GRID64))
CODEBOOK(ulong, iq2xs_grid, GLLMK_IQ2XS_GRID_LEN, GLLMK_IQ2XS_GRID(GRID64))
CODEBOOK(ulong, iq2s_grid, GLLMK_IQ2S_GRID_LEN, GLLMK_IQ2S_GRID(GRID64))
CODEBOOK(uint, iq3xxs_grid, GLLMK_IQ3XXS_GRID_LEN, GLLMK_IQ3XXS_GRID(GRID_ENTRY))
CODEBOOK(uint, iq3s_grid, GLLMK_IQ3S_GRID_LEN, GLLMK_IQ3S_GRID(GRID_ENTRY))
CODEBOOK(ulong, iq1s_grid, GLLMK_IQ1S_GRID_LEN, GLLMK_IQ1S_GRID(GRID64))
CODEBOOK(uchar, ksigns_iq2xs, GLLMK_KSIGNS_IQ2XS_LEN, GLLMK_KSIGNS_IQ2XS(GRID_ENTRY))
CODEBOOK(char, kvalues_mxfp4, GLLMK_KVALUES_MXFP4_LEN, GLLMK_KVALUES_MXFP4(GRID_ENTRY))
/* iq4_nl and iq4_xs: ggml's kvalues_iq4nl, as floats */
#define IQ4NL_VALUES -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113
CODEBOOK(float, iq4nl_values, 16, IQ4NL_VALUES)

#undef CODEBOOK

#endif
