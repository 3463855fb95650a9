# shellcheck shell=bash
# Sourced by scripts/run-tests and scripts/run-tests-aarch64: the conformance
# --filter (gllmk-conformance --help) of the runs under emulation that repeat
# a plugin the suite already covers whole elsewhere in the same CI run
# (cpu-avx2 on qemu's Haswell, natively in full; cpu-neon on a Cortex-A72,
# on qemu's "max" in full; cpu-generic on AArch64, natively and on Nehalem).
# They run every group, but the matmul cases of one weight dtype per kernel
# family only (f32, f16, bf16; q4_0, q5_1, q8_0 of the 32-element formats;
# q3_K to q6_K; iq2_xxs and iq4_xs of the i-quants; tq2_0, mxfp4) and no
# matmul_id (the same kernels, reached through ops_expert.c): under qemu the
# matmuls are two thirds of the suite's time.
CONF_EMULATED_SUBSET="-matmul_id_*,-matmul_q4_1,-matmul_q5_0,-matmul_q8_K,-matmul_q2_K"
CONF_EMULATED_SUBSET+=",-matmul_iq2_xs,-matmul_iq2_s,-matmul_iq3_xxs,-matmul_iq3_s,-matmul_iq1_s,-matmul_iq1_m"
CONF_EMULATED_SUBSET+=",-matmul_iq4_nl,-matmul_tq1_0"
