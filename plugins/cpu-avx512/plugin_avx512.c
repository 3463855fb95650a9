/* cpu-avx512: the CPU framework with the AVX-512 kernels. The plugin's one
 * export is its entry; the tables are static const data.
 *
 * Baseline code (no ISA flags, no LTO): the entry and open run on any x86-64
 * and choose between three context tables by CPUID: the AVX512_VNNI one
 * where the CPU has it (vpdpbusd), with the bf16 GEMM microkernel
 * (vdpbf16ps, used only under GLLMK_OPEN_BF16_ACTIVATIONS) where it also has
 * AVX512_BF16, else the Skylake-X one (vpmaddubsw). */
#include <stdio.h>

#include "cpu_plugin.h"
#include "x86_features.h"

extern const struct cpu_cntx avx512_cntx;                /* cntx_avx512.c */
extern const struct cpu_cntx avx512vnni_cntx;            /* cntx_avx512.c */
extern const struct cpu_cntx avx512bf16_cntx;            /* cntx_avx512.c */
gllmk_probe_result avx512_probe(gllmk_probe_info *info);    /* probe_avx512.c */

static gllmk_status avx512_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct x86_features f;

	x86_features_read(&f);
	/* A host that opens without probing gets a refusal, not SIGILL. */
	if (!x86_can_run_avx512(&f, reason, reason_len))
		return GLLMK_E_UNSUPPORTED;
	return cpu_open(args, state, reason, reason_len,
			!f.avx512vnni ? &avx512_cntx : f.avx512bf16 ? &avx512bf16_cntx : &avx512vnni_cntx);
}

CPU_PLUGIN_TABLE(avx512_table, "cpu-avx512", avx512_probe, avx512_open);

GLLMK_DEFINE_PLUGIN_ENTRY(avx512_table)
