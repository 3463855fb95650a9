/* The CPU framework shared by every CPU plugin (generic, AVX2, AVX-512, NEON).
 *
 * BLIS's split: the op skeletons here (row iteration, threading, GEMM
 * blocking) are written once, in plugins/cpu/, and call an ISA's kernels
 * through one const struct cpu_cntx (cpu_cntx.h). A CPU plugin is then
 * just: a probe (its own translation unit, compiled for the baseline ISA),
 * a context table (cntx_<isa>.c, naming the ISA's kernels), and
 * CPU_PLUGIN_TABLE() naming both.
 */
#ifndef GLLMK_CPU_PLUGIN_H
#define GLLMK_CPU_PLUGIN_H

#include "gllmk_plugin.h"
#include "cpu_cntx.h"
#include "threadpool.h"

/* Per-context state of a CPU plugin. */
struct cpu_state {
	const gllmk_host *host;
	const struct cpu_cntx *k;       /* the ISA's context table (cntx_<isa>.c) */
	struct cpu_pool *pool;
	int n_threads;
	/* The context permits bf16 activations (GLLMK_OPEN_BF16_ACTIVATIONS)
	 * and its table has the kernel to use them (k->bf16_ukernel). */
	int bf16_act;
};

/* open/close: the plugin's open calls cpu_open with its context table. */
gllmk_status cpu_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len,
		      const struct cpu_cntx *k);
void cpu_close(void *state);

/* Memory (GLLMK_BACKEND_SLOTS) and operators (GLLMK_OPS): one function per
 * slot, named cpu_<slot>, with the slot's type, declared here from the
 * slot lists of abi/gllmk_plugin.h (a new op needs no line here). Memory:
 * cpu_plugin.c, impl is the host address of byte 0 (64-byte aligned when
 * allocated); operators: ops_<family>.c; weights_prepare: prepared.c. */
#define CPU_DECLARE_SLOT(slot, type) extern __typeof__(*(type)0) cpu_##slot;
GLLMK_BACKEND_SLOTS(CPU_DECLARE_SLOT)
GLLMK_OPS(CPU_DECLARE_SLOT)
GLLMK_SLOTS_V1_2(CPU_DECLARE_SLOT)
#undef CPU_DECLARE_SLOT

/* count products y = x · wᵀ (+ bias), each x one row, every w of one
 * dtype and shape (matmul_id's experts at one token): where the ISA has
 * multi-row dots or the weights are prepared (prepared.c), one pass of the
 * pool over all their weight rows with each distinct activation encoded
 * once (ops_matmul.c), else cpu_matmul one after another. bias may be
 * NULL. */
struct cpu_matmul_part {
	gllmk_tensor y, x, w;
	const gllmk_tensor *bias;
};
gllmk_status cpu_matmul_parts(struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count);
/* row[p]: which of the parts' distinct activation rows part p reads (a
 * part that reads the same row as the part before it shares it: a token's
 * k experts); returns how many distinct rows there are. */
int64_t cpu_parts_x_rows(const struct cpu_matmul_part *part, int64_t count, int64_t *row);

/* The dispatch table of a CPU plugin: every slot is the framework's
 * cpu_<slot>; what differs between CPU plugins is the probe and the
 * context table open passes to cpu_open. */
#define CPU_TABLE_SLOT(slot, type) .slot = cpu_##slot,
#define CPU_PLUGIN_TABLE(var, plugin_name, probe_fn, open_fn) \
	static const gllmk_plugin_table var = {               \
		.size = sizeof(gllmk_plugin_table),           \
		.abi_major = GLLMK_ABI_MAJOR,                 \
		.abi_minor = GLLMK_ABI_MINOR,                 \
		.name = plugin_name,                          \
		.probe = probe_fn,                            \
		.open = open_fn,                              \
		.close = cpu_close,                           \
		GLLMK_BACKEND_SLOTS(CPU_TABLE_SLOT)           \
		GLLMK_OPS(CPU_TABLE_SLOT)                     \
		GLLMK_SLOTS_V1_2(CPU_TABLE_SLOT)              \
	}

#endif
