/* cpu-generic's context table (BLIS's cntx): every slot of struct
 * cpu_cntx (plugins/cpu/cpu_cntx.h) is a portable reference kernel.
 * Its matmul has no vec_dot (REF_MATMUL_KERNELS): the framework decodes
 * weight rows with ref_dequant_row_<t> and dots them in f32 (ref_dot_f32).
 * Prepared weights run the portable group kernels, so that the
 * reference plugin takes them (and the conformance suite tests their
 * framework paths) too. */
#include "cpu_cntx.h"
#include "prepared.h"
#include "ref/quant_ref.h"
#include "ref/rows_ref.h"

const struct cpu_cntx generic_cntx = {
	.isa = "generic",
	.dequant_row = REF_DEQUANT_ROWS,
	.quant_row = REF_QUANT_ROWS,
	.matmul = REF_MATMUL_KERNELS,
	.mr = REF_SGEMM_MR,
	.nr = REF_SGEMM_NR,
	.sgemm_ukernel = ref_sgemm_ukernel,
	.dot_group[CPU_LAYOUT_Q4_0X8] = cpu_ref_dot_q4_0x8,
	.dot_group[CPU_LAYOUT_Q4_KX8] = cpu_ref_dot_q4_Kx8,
	.dot_group[CPU_LAYOUT_Q5_KX8] = cpu_ref_dot_q5_Kx8,
	.dot_group[CPU_LAYOUT_IQ4_XSX8] = cpu_ref_dot_iq4_xsx8,
	.dot_group[CPU_LAYOUT_Q2_KX8] = cpu_ref_dot_q2_Kx8,
	.dot_group[CPU_LAYOUT_Q3_KX8] = cpu_ref_dot_q3_Kx8,
	REF_ROW_KERNELS,
};
