/* The AVX-512 GEMM microkernels: C[14×32] = alpha·A·B + beta·C with 28 zmm
 * accumulators (14 rows × 2 vectors of 16 columns). One k step loads the
 * two B vectors, broadcasts the 14 A values (vbroadcastss from memory: a
 * load-port uop only, alternating between two registers) and issues 28
 * FMAs: 44 uops for the 14 cycles of two FMA ports, FMA-bound with room
 * for the prefetches and the loop. Standalone, with A and B in L1/L2, it
 * runs at ~92 % of the measured FMA peak.
 *
 * One body, two multiply-adds (UKERNEL below):
 *  - avx512_sgemm_ukernel, vfmadd231ps on f32: a k step is one depth;
 *  - avx512bf16_gemm_ukernel_14x32, vdpbf16ps on pairs of bf16 (the bf16
 *    pairs of plugins/cpu/gemm/sgemm.h: x rounded to bf16, bf16 weights):
 *    each 32-bit element of A and B holds two consecutive depths, so a k
 *    step is two depths, 32 products per instruction where vfmadd231ps does
 *    16. vdpbf16ps forms both products exactly and adds them to the f32
 *    accumulator with round to nearest even; it flushes subnormal inputs
 *    and results to zero whatever MXCSR says (SPEC/TOLERANCES.md, "bf16
 *    activations"). The layout in bytes is the f32 one (56 bytes of A,
 *    128 of B a step), so the loop, prefetches and stores are shared.
 *
 * Inline assembly: written with intrinsics, gcc spilled the accumulator
 * array. zmm0..27 accumulate, zmm28..31 hold B, the broadcasts, then
 * alpha and beta. The C tile is prefetched on entry (see PREFETCH_C).
 * The assembler takes vdpbf16ps without any compiler flag, so this file
 * needs none beyond AVX-512F's: the plugin loads on every AVX-512 CPU and
 * only the context table of CPUs with AVX512_BF16 names the bf16 kernel
 * (plugin_avx512.c chooses it by CPUID).
 *
 * Panels (plugins/cpu/gemm/pack.c): a holds k×14 (A column p at a + 14p), b holds k×32
 * (B row p at b + 32p, 64-byte aligned), 32-bit elements.
 */
#include "avx512_kernels.h"

/* Stringified pieces of the assembly, generated rather than written out. */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Row i of the tile: accumulators zmm(2i) and zmm(2i+1); the broadcast of
 * A(i) alternates between zmm30 and zmm31 so that consecutive rows overlap. */
#define FMA_ROW(op, o, i, lo, hi, t)                                                \
	"vbroadcastss " #o "+" STR(4 * i) "(%[a]), %%zmm" #t "\n\t"                       \
	op " %%zmm" #t ", %%zmm28, %%zmm" #lo "\n\t"                             \
	op " %%zmm" #t ", %%zmm29, %%zmm" #hi "\n\t"
#define FMA_ROWS_AT(op, o)                                                                      \
	FMA_ROW(op, o, 0, 0, 1, 30) FMA_ROW(op, o, 1, 2, 3, 31) FMA_ROW(op, o, 2, 4, 5, 30)              \
	FMA_ROW(op, o, 3, 6, 7, 31) FMA_ROW(op, o, 4, 8, 9, 30) FMA_ROW(op, o, 5, 10, 11, 31)            \
	FMA_ROW(op, o, 6, 12, 13, 30) FMA_ROW(op, o, 7, 14, 15, 31) FMA_ROW(op, o, 8, 16, 17, 30)        \
	FMA_ROW(op, o, 9, 18, 19, 31) FMA_ROW(op, o, 10, 20, 21, 30) FMA_ROW(op, o, 11, 22, 23, 31)      \
	FMA_ROW(op, o, 12, 24, 25, 30) FMA_ROW(op, o, 13, 26, 27, 31)

/* One k step with A at a + ao bytes and B at b + bo, multiply-add op. */
#define K_STEP(op, ao, bo)                                                        \
	"vmovaps " #bo "(%[b]), %%zmm28\n\t"                                      \
	"vmovaps " #bo "+64(%[b]), %%zmm29\n\t"                                   \
	"prefetcht0 " STR(PREFETCH_A_BYTES) "+" #ao "(%[a])\n\t"                 \
	FMA_ROWS_AT(op, ao)

/* C's tile row (128 bytes, maybe across three lines) into L1 while the k
 * loop runs: C comes from far caches or DRAM, and without this its loads
 * at the end of the kernel stall on 28+ misses at once. */
#define PREFETCH_C_ROW                                                            \
	"prefetcht0 (%[cp])\n\t"                                                   \
	"prefetcht0 64(%[cp])\n\t"                                                 \
	"prefetcht0 124(%[cp])\n\t"                                                \
	"add %[ldc], %[cp]\n\t"
#define PREFETCH_C                                                                \
	PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW \
	PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW \
	PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW PREFETCH_C_ROW

#define ZERO(r) "vpxord %%zmm" #r ", %%zmm" #r ", %%zmm" #r "\n\t"
#define ZERO_ALL                                                                  \
	ZERO(0) ZERO(1) ZERO(2) ZERO(3) ZERO(4) ZERO(5) ZERO(6) ZERO(7) ZERO(8)   \
	ZERO(9) ZERO(10) ZERO(11) ZERO(12) ZERO(13) ZERO(14) ZERO(15) ZERO(16)    \
	ZERO(17) ZERO(18) ZERO(19) ZERO(20) ZERO(21) ZERO(22) ZERO(23) ZERO(24)   \
	ZERO(25) ZERO(26) ZERO(27)

/* C row = alpha·acc (beta == 0: C is not read) or alpha·acc + beta·C;
 * %[c] then moves to the next row. */
#define STORE0(lo, hi)                                                            \
	"vmulps %%zmm" #lo ", %%zmm30, %%zmm" #lo "\n\t"                          \
	"vmulps %%zmm" #hi ", %%zmm30, %%zmm" #hi "\n\t"                          \
	"vmovups %%zmm" #lo ", (%[c])\n\t"                                        \
	"vmovups %%zmm" #hi ", 64(%[c])\n\t"                                      \
	"add %[ldc], %[c]\n\t"
#define STOREB(lo, hi)                                                            \
	"vmulps (%[c]), %%zmm31, %%zmm28\n\t"                                     \
	"vmulps 64(%[c]), %%zmm31, %%zmm29\n\t"                                   \
	"vfmadd231ps %%zmm" #lo ", %%zmm30, %%zmm28\n\t"                          \
	"vfmadd231ps %%zmm" #hi ", %%zmm30, %%zmm29\n\t"                          \
	"vmovups %%zmm28, (%[c])\n\t"                                             \
	"vmovups %%zmm29, 64(%[c])\n\t"                                           \
	"add %[ldc], %[c]\n\t"
#define STORE_ALL(S)                                                              \
	S(0, 1) S(2, 3) S(4, 5) S(6, 7) S(8, 9) S(10, 11) S(12, 13) S(14, 15)     \
	S(16, 17) S(18, 19) S(20, 21) S(22, 23) S(24, 25) S(26, 27)

/* A floats are 56 bytes a step: one line ahead of need per step, about
 * 36 steps (500 cycles) ahead. The first microkernel of a row of C tiles
 * reads its A micro-panel from L3 or DRAM (the A block is packed long
 * before), the next ones from L1; 2048 measured 1-4 % above 1024 here. */
#define PREFETCH_A_BYTES 2048

/* The microkernel `name` with the multiply-add instruction op. */
#define UKERNEL(name, op)                                                                               \
	void name(int64_t k, const float *a, const float *b, float *c, int64_t ldc, float alpha, float beta) \
	{                                                                                               \
		int64_t ldc_bytes = ldc * (int64_t)sizeof(float);                                       \
		const int beta_zero = beta == 0.0f;                                                     \
		const float *cp = c;                                                                    \
                                                                                                        \
		__asm__ volatile(                                                                       \
			PREFETCH_C                                                                      \
			ZERO_ALL                                                                        \
			"sub $2, %[k]\n\t"                                                              \
			"jl 5f\n\t"                                                                     \
			".p2align 5\n"                                                                  \
			"1:\n\t"                                                                        \
			K_STEP(op, 0, 0)                                                                \
			K_STEP(op, 56, 128)                                                             \
			"add $112, %[a]\n\t"                                                            \
			"add $256, %[b]\n\t"                                                            \
			"sub $2, %[k]\n\t"                                                              \
			"jge 1b\n"                                                                      \
			"5:\n\t"                                                                        \
			"add $2, %[k]\n\t"                                                              \
			"jz 2f\n\t"                                                                     \
			K_STEP(op, 0, 0)                                                                \
			"2:\n\t"                                                                        \
			"vbroadcastss %[alpha], %%zmm30\n\t"                                            \
			"vbroadcastss %[beta], %%zmm31\n\t"                                             \
			"test %[bz], %[bz]\n\t"                                                         \
			"jz 3f\n\t"                                                                     \
			STORE_ALL(STORE0)                                                               \
			"jmp 4f\n"                                                                      \
			"3:\n\t"                                                                        \
			STORE_ALL(STOREB)                                                               \
			"4:\n\t"                                                                        \
			"vzeroupper\n\t"                                                                \
			: [k] "+r"(k), [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [cp] "+r"(cp)             \
			: [ldc] "r"(ldc_bytes), [alpha] "m"(alpha), [beta] "m"(beta), [bz] "r"(beta_zero) \
			: "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",   \
			  "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16",  \
			  "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", \
			  "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");                          \
	}

UKERNEL(avx512_sgemm_ukernel, "vfmadd231ps")
UKERNEL(avx512bf16_gemm_ukernel_14x32, "vdpbf16ps")
