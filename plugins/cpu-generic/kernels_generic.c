/* cpu-generic's kernels: every slot is a portable reference kernel. */
#include "cpu_kernels.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"

const struct cpu_kernels generic_kernels = {
	.isa = "generic",
	.dequant_row = REF_DEQUANT_ROWS,
	.quant_row = REF_QUANT_ROWS,
	.matmul = REF_MATMUL_KERNELS,
	.mr = REF_SGEMM_MR,
	.nr = REF_SGEMM_NR,
	.sgemm_ukernel = ref_sgemm_ukernel,
	REF_ROW_KERNELS,
};
