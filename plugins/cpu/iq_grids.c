/* The i-quants' codebooks as C arrays, built once from
 * kernels/quant_grids.h (the one copy of ggml's tables): 64-bit entries
 * hold their 8 bytes in element order (byte j = element j), 32-bit ones
 * their 4. */
#include "iq_grids.h"
#include "quant_grids.h"

#define GRID64(lo, hi) ((uint64_t)(uint32_t)(hi) << 32 | (uint32_t)(lo))
#define GRID32(v) (v)

const uint64_t cpu_iq2xxs_grid[GLLMK_IQ2XXS_GRID_LEN] = { GLLMK_IQ2XXS_GRID(GRID64) };
const uint64_t cpu_iq2xs_grid[GLLMK_IQ2XS_GRID_LEN] = { GLLMK_IQ2XS_GRID(GRID64) };
const uint64_t cpu_iq2s_grid[GLLMK_IQ2S_GRID_LEN] = { GLLMK_IQ2S_GRID(GRID64) };
const uint32_t cpu_iq3xxs_grid[GLLMK_IQ3XXS_GRID_LEN] = { GLLMK_IQ3XXS_GRID(GRID32) };
const uint32_t cpu_iq3s_grid[GLLMK_IQ3S_GRID_LEN] = { GLLMK_IQ3S_GRID(GRID32) };
const uint64_t cpu_iq1s_grid[GLLMK_IQ1S_GRID_LEN] = { GLLMK_IQ1S_GRID(GRID64) };
const uint8_t cpu_ksigns_iq2xs[GLLMK_KSIGNS_IQ2XS_LEN] = { GLLMK_KSIGNS_IQ2XS(GRID32) };
