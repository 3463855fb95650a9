/* The i-quants' codebooks as the Vulkan plugin hands them to its shaders:
 * one read-only buffer at binding VK_CODEBOOK_BINDING, made once per
 * context from kernels/quant_grids.h (plugins/vulkan/ops_common.c),
 * read by kernels/vulkan/decode.glsl. Its layout is these word offsets: an
 * 8-byte grid entry takes two words (low first), a 4-byte one a word.
 * Preprocessor only, so C and GLSL both include it.
 *
 * Why a buffer and not constant arrays in the shaders: with constant
 * arrays, lavapipe spent minutes in LLVM's coroutine splitting compiling
 * the matvec/GEMM shaders (SPEC/VULKAN.md); a small read-only buffer is
 * what a GPU's caches serve anyway.
 */
#ifndef GLLMK_VK_CODEBOOKS_H
#define GLLMK_VK_CODEBOOKS_H

#include "quant_grids.h"

#define VK_CODEBOOK_BINDING 6
#define VK_CB_IQ2XXS 0
#define VK_CB_IQ2XS (VK_CB_IQ2XXS + 2 * GLLMK_IQ2XXS_GRID_LEN)
#define VK_CB_IQ2S (VK_CB_IQ2XS + 2 * GLLMK_IQ2XS_GRID_LEN)
#define VK_CB_IQ1S (VK_CB_IQ2S + 2 * GLLMK_IQ2S_GRID_LEN)
#define VK_CB_IQ3XXS (VK_CB_IQ1S + 2 * GLLMK_IQ1S_GRID_LEN)
#define VK_CB_IQ3S (VK_CB_IQ3XXS + GLLMK_IQ3XXS_GRID_LEN)
#define VK_CB_WORDS (VK_CB_IQ3S + GLLMK_IQ3S_GRID_LEN)

/* The buffer's contents in that order, for a C initializer. */
#define VK_CB_PAIR(lo, hi) lo, hi
#define VK_CB_WORD(v) v
#define VK_CODEBOOK_WORDS                                                                            \
	GLLMK_IQ2XXS_GRID(VK_CB_PAIR), GLLMK_IQ2XS_GRID(VK_CB_PAIR), GLLMK_IQ2S_GRID(VK_CB_PAIR),       \
		GLLMK_IQ1S_GRID(VK_CB_PAIR), GLLMK_IQ3XXS_GRID(VK_CB_WORD), GLLMK_IQ3S_GRID(VK_CB_WORD)

#endif
