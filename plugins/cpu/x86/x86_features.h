/* What an x86 CPU and its OS let us run: CPUID for the instructions, XGETBV
 * for the register state the OS saves (a VM may expose AVX-512 in CPUID yet
 * not enable ZMM state in XCR0: ggml's CPU variants died with SIGILL there).
 *
 * x86_features.c is compiled for the baseline ISA, without LTO, and runs no
 * instruction the CPU may lack; the AVX plugins' probes call it. */
#ifndef GLLMK_X86_FEATURES_H
#define GLLMK_X86_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

struct x86_features {
	bool sse42, avx, avx2, fma, f16c;
	bool avx512f, avx512dq, avx512bw, avx512vl, avx512vnni, avx512bf16, avx512fp16;
	bool avxvnni, amx_tile, amx_int8, amx_bf16;
	bool os_avx;    /* XCR0 has SSE and YMM state */
	bool os_avx512; /* ... and opmask, ZMM_Hi256, Hi16_ZMM */
	bool os_amx;    /* ... and XTILECFG, XTILEDATA */
};

void x86_features_read(struct x86_features *f);

/* The plugin-level verdicts: true when every instruction the plugin's
 * kernels use is present and enabled; else `why` gets a sentence. */
bool x86_can_run_avx2(const struct x86_features *f, char *why, size_t len);
bool x86_can_run_avx512(const struct x86_features *f, char *why, size_t len);

#endif
