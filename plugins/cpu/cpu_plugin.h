/* The CPU framework shared by every CPU plugin (generic, AVX2, AVX-512, NEON).
 *
 * BLIS's split: the op skeletons here (row iteration, threading, GEMM
 * blocking) are written once, in plugins/cpu/, and call an ISA's kernels
 * through one const struct cpu_kernels (cpu_kernels.h). A CPU plugin is then
 * just: a probe (its own translation unit, compiled for the baseline ISA),
 * a kernel table, and CPU_PLUGIN_TABLE() naming both.
 */
#ifndef GLLMK_CPU_PLUGIN_H
#define GLLMK_CPU_PLUGIN_H

#include "gllmk_plugin.h"
#include "cpu_kernels.h"
#include "threadpool.h"

/* Per-context state of a CPU plugin. */
struct cpu_state {
	const gllmk_host *host;
	const struct cpu_kernels *k;
	struct cpu_pool *pool;
	int n_threads;
};

/* open/close: the plugin's open calls cpu_open with its kernel table. */
gllmk_status cpu_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len,
		      const struct cpu_kernels *k);
void cpu_close(void *state);

/* Memory: impl is the host address of byte 0 (64-byte aligned when allocated). */
gllmk_status cpu_buffer_alloc(void *st, uint64_t size, void **impl);
gllmk_status cpu_buffer_wrap(void *st, void *host, uint64_t size, void **impl);
void cpu_buffer_free(void *st, void *impl);
gllmk_status cpu_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size);
gllmk_status cpu_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size);
gllmk_status cpu_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size);
gllmk_status cpu_sync(void *st);

/* Operators: one function per slot, named cpu_<slot>, with the slot's type. */
gllmk_status cpu_matmul(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias);
gllmk_status cpu_gemm(void *st, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p);
gllmk_status cpu_dequantize(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_quantize(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_convert(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_add(void *st, gllmk_t y, gllmk_t a, gllmk_t b);
gllmk_status cpu_mul(void *st, gllmk_t y, gllmk_t a, gllmk_t b);
gllmk_status cpu_scale(void *st, gllmk_t y, gllmk_t x, float s);
gllmk_status cpu_silu(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_gelu_tanh(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_gelu_erf(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_relu(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_tanh(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_exp(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_swiglu(void *st, gllmk_t y, gllmk_t gate, gllmk_t up);
gllmk_status cpu_rms_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps);
gllmk_status cpu_layer_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps);
gllmk_status cpu_softmax(void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *p);
gllmk_status cpu_rope(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p);
gllmk_status cpu_rope_ext(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t freq_factors,
			  const gllmk_rope_ext_params *p);
gllmk_status cpu_kv_store(void *st, gllmk_t cache, gllmk_t x, gllmk_t slots);
gllmk_status cpu_get_rows(void *st, gllmk_t y, gllmk_t table, gllmk_t ids);
gllmk_status cpu_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
			   gllmk_t block_table, const gllmk_attention_params *p);
gllmk_status cpu_attention_ext(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
			       gllmk_t block_table, gllmk_t sinks, const gllmk_attention_ext_params *p);
gllmk_status cpu_attention_varlen(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
				  gllmk_t cu_q, gllmk_t kv_len, gllmk_t block_tables, gllmk_t sinks,
				  const gllmk_attention_ext_params *p);
gllmk_status cpu_argmax(void *st, gllmk_t ids, gllmk_t x);
gllmk_status cpu_sample(void *st, gllmk_t ids, gllmk_t logits, const float *uniform, const gllmk_sample_params *p);
/* ABI 1.1 */
gllmk_status cpu_matmul_id(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias, gllmk_t slot_weights);
gllmk_status cpu_matmul_batched(void *st, gllmk_t y, gllmk_t x, gllmk_t w);
gllmk_status cpu_top_k(void *st, gllmk_t values, gllmk_t ids, gllmk_t x);
gllmk_status cpu_moe_route(void *st, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,
			   const gllmk_moe_route_params *p);
gllmk_status cpu_glu(void *st, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p);
gllmk_status cpu_sigmoid(void *st, gllmk_t y, gllmk_t x);
gllmk_status cpu_clamp(void *st, gllmk_t y, gllmk_t x, float lo, float hi);
gllmk_status cpu_softcap(void *st, gllmk_t y, gllmk_t x, float c);

/* count products y = x · wᵀ (+ bias), each x one row, every w of one
 * dtype and shape (matmul_id's experts at one token): where the ISA has
 * multi-row dots, one pass of the pool over all their weight rows with
 * each distinct activation encoded once (ops_matmul.c), else cpu_matmul
 * one after another. bias may be NULL. */
struct cpu_matmul_part {
	gllmk_tensor y, x, w;
	const gllmk_tensor *bias;
};
gllmk_status cpu_matmul_parts(struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count);

/* The dispatch table of a CPU plugin: every slot is the framework's; what
 * differs between CPU plugins is the probe and the kernel table open passes. */
#define CPU_PLUGIN_TABLE(var, plugin_name, probe_fn, open_fn)        \
	static const gllmk_plugin_table var = {                      \
		.size = sizeof(gllmk_plugin_table),                  \
		.abi_major = GLLMK_ABI_MAJOR,                        \
		.abi_minor = GLLMK_ABI_MINOR,                        \
		.name = plugin_name,                                 \
		.probe = probe_fn,                                   \
		.open = open_fn,                                     \
		.close = cpu_close,                                  \
		.buffer_alloc = cpu_buffer_alloc,                    \
		.buffer_wrap = cpu_buffer_wrap,                      \
		.buffer_free = cpu_buffer_free,                      \
		.buffer_write = cpu_buffer_write,                    \
		.buffer_read = cpu_buffer_read,                      \
		.buffer_copy = cpu_buffer_copy,                      \
		.sync = cpu_sync,                                    \
		.matmul = cpu_matmul,                                \
		.gemm = cpu_gemm,                                    \
		.dequantize = cpu_dequantize,                        \
		.quantize = cpu_quantize,                            \
		.convert = cpu_convert,                              \
		.add = cpu_add,                                      \
		.mul = cpu_mul,                                      \
		.scale = cpu_scale,                                  \
		.silu = cpu_silu,                                    \
		.gelu_tanh = cpu_gelu_tanh,                          \
		.gelu_erf = cpu_gelu_erf,                            \
		.relu = cpu_relu,                                    \
		.tanh = cpu_tanh,                                    \
		.exp = cpu_exp,                                      \
		.swiglu = cpu_swiglu,                                \
		.rms_norm = cpu_rms_norm,                            \
		.layer_norm = cpu_layer_norm,                        \
		.softmax = cpu_softmax,                              \
		.rope = cpu_rope,                                    \
		.get_rows = cpu_get_rows,                            \
		.attention = cpu_attention,                          \
		.argmax = cpu_argmax,                                \
		.sample = cpu_sample,                                \
		.matmul_id = cpu_matmul_id,                          \
		.matmul_batched = cpu_matmul_batched,                \
		.top_k = cpu_top_k,                                  \
		.moe_route = cpu_moe_route,                          \
		.glu = cpu_glu,                                      \
		.sigmoid = cpu_sigmoid,                              \
		.clamp = cpu_clamp,                                  \
		.softcap = cpu_softcap,                              \
		.rope_ext = cpu_rope_ext,                            \
		.kv_store = cpu_kv_store,                            \
		.attention_ext = cpu_attention_ext,                  \
		.attention_varlen = cpu_attention_varlen,            \
	}

#endif
