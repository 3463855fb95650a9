/* gllmk plugin ABI v1: what a backend plugin implements.
 *
 * A plugin is libgllmk-<name>.so exporting exactly one symbol,
 * gllmk_plugin_entry_v1 (ELF version node GLLMK_PLUGIN_1), and no
 * constructors: nothing of it runs before the core calls the entry.
 *
 * The contract is written where it is enforced:
 *  - struct gllmk_plugin_table is append-only. Adding a slot appends it at the
 *    end, bumps GLLMK_ABI_MINOR and adds its static_assert below. Reordering,
 *    removing or retyping a slot changes GLLMK_ABI_MAJOR, the entry symbol
 *    name (gllmk_plugin_entry_v<major>) and the version node.
 *  - struct gllmk_host and struct gllmk_open_args begin with their size and
 *    only grow at the end.
 * SPEC/ABI.md explains negotiation, layers and every rule in prose.
 */
#ifndef GLLMK_PLUGIN_H
#define GLLMK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gllmk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The buffer as plugins see it. The core owns the struct; a plugin reads
 * impl (the handle its buffer_alloc/buffer_wrap returned; CPU plugins
 * return the host address of byte 0) and size, and nothing else. */
struct gllmk_buffer {
	void *impl;
	uint64_t size;
	/* core-private */
	gllmk_context *ctx;
	uint32_t magic;
	/* (ABI 1.2; was the core-private `flags`, always 0) 0 for plain bytes;
	 * for a buffer made by the plugin's weights_prepare, the nonzero layout
	 * id that slot returned: its bytes are that layout, not the dtype's. A
	 * plugin reads it on the weights it is handed (the only place the core
	 * lets such a buffer go). */
	uint32_t layout;
};

/* Host address of a tensor's first byte, for plugins whose impl is a host
 * pointer (every CPU plugin). */
static inline void *gllmk_tensor_host(const gllmk_tensor *t)
{
	return (char *)t->buf->impl + t->offset;
}

/* ------------------------------------------------------------------ host */

/* What the core speaks, handed to the entry and to open. Lives as long as
 * the process; a plugin may keep the pointer in its per-context state. */
typedef struct gllmk_host {
	uint32_t struct_size;
	uint16_t abi_major;   /* the major the core speaks */
	uint16_t abi_minor;   /* the highest minor the core speaks */
	uint32_t table_size;  /* sizeof(struct gllmk_plugin_table) the core knows */
	uint32_t reserved;
	/* Sets this thread's gllmk_last_error() and returns st, so a plugin can
	 * write `return host->set_error(GLLMK_E_BACKEND, "vkQueueSubmit: %s", ...)`. */
	gllmk_status (*set_error)(gllmk_status st, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
} gllmk_host;

/* ------------------------------------------------------------------ probe */

typedef enum gllmk_probe_result {
	GLLMK_PROBE_YES = 0,     /* this machine runs me; pick me in automatic detection */
	GLLMK_PROBE_BY_NAME = 1, /* I run here, but only when asked for by name
				  * (software devices: lavapipe, PoCL) */
	GLLMK_PROBE_NO = 2,      /* this machine cannot run me */
} gllmk_probe_result;

#define GLLMK_PROBE_TEXT 256
typedef struct gllmk_probe_info {
	char device[GLLMK_PROBE_TEXT]; /* what was found ("AVX-512 F/BW/VL, 2 cores") */
	char reason[GLLMK_PROBE_TEXT]; /* why not (NO) or why only by name (BY_NAME) */
} gllmk_probe_info;

/* ------------------------------------------------------------------ open */

typedef struct gllmk_plugin_table gllmk_plugin_table;

typedef struct gllmk_open_args {
	uint32_t struct_size;
	int32_t n_threads;                /* 0: the plugin's default (physical cores) */
	int32_t by_name;                  /* 1: named by an override; BY_NAME devices allowed */
	/* (ABI 1.1) The context's gllmk_options.flags that concern plugins
	 * (GLLMK_OPEN_BF16_ACTIVATIONS; the core's own bits are cleared). Was
	 * `int32_t reserved`, always 0: a 1.0 core passes 0, and a plugin that
	 * predates it never reads it. */
	uint32_t flags;
	const gllmk_host *host;
	/* Layers only (NULL for plugins): the table and state to forward to. */
	const gllmk_plugin_table *next;
	void *next_state;
} gllmk_open_args;

/* ------------------------------------------------------------ slot types */
/* Every op receives the state its open() returned, then the public call's
 * arguments, already validated by the core (SPEC/ABI.md, "Validation"):
 * a plugin never re-checks shapes, dtypes, bounds or aliasing. It does check
 * index data only it can see (ids, positions, block tables). */

typedef gllmk_probe_result (*gllmk_probe_fn)(gllmk_probe_info *info);
typedef gllmk_status (*gllmk_open_fn)(const gllmk_open_args *args, void **state, char *reason, size_t reason_len);
typedef void (*gllmk_close_fn)(void *state);

typedef gllmk_status (*gllmk_buffer_alloc_fn)(void *st, uint64_t size, void **impl);
typedef gllmk_status (*gllmk_buffer_wrap_fn)(void *st, void *host, uint64_t size, void **impl);
/* Called for every handle, wrapped ones included: for those it releases the
 * plugin's bookkeeping only, never the caller's memory. */
typedef void (*gllmk_buffer_free_fn)(void *st, void *impl);
typedef gllmk_status (*gllmk_buffer_write_fn)(void *st, void *impl, uint64_t off, const void *src, uint64_t size);
typedef gllmk_status (*gllmk_buffer_read_fn)(void *st, void *impl, uint64_t off, void *dst, uint64_t size);
typedef gllmk_status (*gllmk_buffer_copy_fn)(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off,
					     uint64_t size);
typedef gllmk_status (*gllmk_sync_fn)(void *st);

typedef const gllmk_tensor *gllmk_t; /* shorthand for the slot types below only */

typedef gllmk_status (*gllmk_matmul_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias);
typedef gllmk_status (*gllmk_gemm_fn)(void *st, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p);
typedef gllmk_status (*gllmk_unary_fn)(void *st, gllmk_t y, gllmk_t x);
typedef gllmk_status (*gllmk_binary_fn)(void *st, gllmk_t y, gllmk_t a, gllmk_t b);
typedef gllmk_status (*gllmk_scale_fn)(void *st, gllmk_t y, gllmk_t x, float s);
typedef gllmk_status (*gllmk_rms_norm_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps);
typedef gllmk_status (*gllmk_layer_norm_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps);
typedef gllmk_status (*gllmk_softmax_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *p);
typedef gllmk_status (*gllmk_rope_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p);
typedef gllmk_status (*gllmk_get_rows_fn)(void *st, gllmk_t y, gllmk_t table, gllmk_t ids);
typedef gllmk_status (*gllmk_attention_fn)(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
					   gllmk_t block_table, const gllmk_attention_params *p);
typedef gllmk_status (*gllmk_argmax_fn)(void *st, gllmk_t ids, gllmk_t x);
typedef gllmk_status (*gllmk_sample_fn)(void *st, gllmk_t ids, gllmk_t logits, const float *uniform,
					const gllmk_sample_params *p);
/* ABI 1.1 */
typedef gllmk_status (*gllmk_rope_ext_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t freq_factors,
					  const gllmk_rope_ext_params *p);
typedef gllmk_status (*gllmk_attention_ext_fn)(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
					       gllmk_t block_table, gllmk_t sinks, const gllmk_attention_ext_params *p);
typedef gllmk_status (*gllmk_attention_varlen_fn)(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v,
						  gllmk_t mask, gllmk_t cu_q, gllmk_t kv_len, gllmk_t block_tables,
						  gllmk_t sinks, const gllmk_attention_ext_params *p);
typedef gllmk_status (*gllmk_kv_store_fn)(void *st, gllmk_t cache, gllmk_t x, gllmk_t slots);
typedef gllmk_status (*gllmk_top_k_fn)(void *st, gllmk_t values, gllmk_t ids, gllmk_t x);
typedef gllmk_status (*gllmk_moe_route_fn)(void *st, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,
					   const gllmk_moe_route_params *p);
typedef gllmk_status (*gllmk_matmul_id_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias,
					   gllmk_t slot_weights);
typedef gllmk_status (*gllmk_matmul_batched_fn)(void *st, gllmk_t y, gllmk_t x, gllmk_t w);
typedef gllmk_status (*gllmk_glu_fn)(void *st, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p);
typedef gllmk_status (*gllmk_clamp_fn)(void *st, gllmk_t y, gllmk_t x, float lo, float hi);
/* ABI 1.2: w (validated: contiguous [N, K] or [E, N, K], a weight dtype)
 * copied into a layout of the plugin's choice. The plugin allocates the
 * handle (*impl, freed by its buffer_free like any other) of *size bytes and
 * names the layout with a nonzero *layout, which the core stores in the
 * buffer (struct gllmk_buffer.layout); or it answers GLLMK_E_UNSUPPORTED
 * with the reason (no layout for this dtype or shape). */
typedef gllmk_status (*gllmk_weights_prepare_fn)(void *st, gllmk_t w, void **impl, uint64_t *size, uint32_t *layout);

/* ------------------------------------------------------------------ table */

struct gllmk_plugin_table {
	/* header: fixed forever, whatever the major */
	uint32_t size;        /* sizeof(struct gllmk_plugin_table) as the plugin was built */
	uint16_t abi_major;   /* GLLMK_ABI_MAJOR the plugin was built for */
	uint16_t abi_minor;   /* GLLMK_ABI_MINOR the plugin was built for */
	const char *name;     /* "cpu-generic": equals the file name's <name> */

	/* lifecycle (a layer leaves probe NULL) */
	gllmk_probe_fn probe;
	gllmk_open_fn open;
	gllmk_close_fn close;

	/* memory */
	gllmk_buffer_alloc_fn buffer_alloc;
	gllmk_buffer_wrap_fn buffer_wrap;   /* NULL: wrapping host memory unsupported */
	gllmk_buffer_free_fn buffer_free;
	gllmk_buffer_write_fn buffer_write;
	gllmk_buffer_read_fn buffer_read;
	gllmk_buffer_copy_fn buffer_copy;
	gllmk_sync_fn sync;

	/* operators, ABI 1.0 (the order of GLLMK_OPS below) */
	gllmk_matmul_fn matmul;
	gllmk_gemm_fn gemm;
	gllmk_unary_fn dequantize;
	gllmk_unary_fn quantize;
	gllmk_unary_fn convert;
	gllmk_binary_fn add;
	gllmk_binary_fn mul;
	gllmk_scale_fn scale;
	gllmk_unary_fn silu;
	gllmk_unary_fn gelu_tanh;
	gllmk_unary_fn gelu_erf;
	gllmk_unary_fn relu;
	gllmk_unary_fn tanh;
	gllmk_unary_fn exp;
	gllmk_binary_fn swiglu;
	gllmk_rms_norm_fn rms_norm;
	gllmk_layer_norm_fn layer_norm;
	gllmk_softmax_fn softmax;
	gllmk_rope_fn rope;
	gllmk_get_rows_fn get_rows;
	gllmk_attention_fn attention;
	gllmk_argmax_fn argmax;
	gllmk_sample_fn sample;
	/* operators, ABI 1.1 (appended, never inserted) */
	gllmk_rope_ext_fn rope_ext;
	gllmk_attention_ext_fn attention_ext;
	gllmk_attention_varlen_fn attention_varlen;
	gllmk_kv_store_fn kv_store;
	gllmk_top_k_fn top_k;
	gllmk_moe_route_fn moe_route;
	gllmk_matmul_id_fn matmul_id;
	gllmk_matmul_batched_fn matmul_batched;
	gllmk_glu_fn glu;
	gllmk_unary_fn sigmoid;
	gllmk_clamp_fn clamp;
	gllmk_scale_fn softcap;
	/* ABI 1.2 (appended, never inserted) */
	gllmk_weights_prepare_fn weights_prepare;
	/* ABI 1.3 slots go here. */
};

/* Every slot after the header, in table order: X(name, slot type).
 * The core builds its per-context dispatch and its names from this list. */
#define GLLMK_BACKEND_SLOTS(X)                                    \
	X(buffer_alloc, gllmk_buffer_alloc_fn)                    \
	X(buffer_wrap, gllmk_buffer_wrap_fn)                      \
	X(buffer_free, gllmk_buffer_free_fn)                      \
	X(buffer_write, gllmk_buffer_write_fn)                    \
	X(buffer_read, gllmk_buffer_read_fn)                      \
	X(buffer_copy, gllmk_buffer_copy_fn)                      \
	X(sync, gllmk_sync_fn)

#define GLLMK_OPS(X) GLLMK_OPS_V1_0(X) GLLMK_OPS_V1_1(X)

/* Slots of ABI 1.2 that are not operators (no output tensor): the core
 * dispatches them like the rest; the debug layer's operator wrappers, built
 * from GLLMK_OPS, do not cover them. */
#define GLLMK_SLOTS_V1_2(X)                                       \
	X(weights_prepare, gllmk_weights_prepare_fn)

#define GLLMK_OPS_V1_0(X)                                         \
	X(matmul, gllmk_matmul_fn)                                \
	X(gemm, gllmk_gemm_fn)                                    \
	X(dequantize, gllmk_unary_fn)                             \
	X(quantize, gllmk_unary_fn)                               \
	X(convert, gllmk_unary_fn)                                \
	X(add, gllmk_binary_fn)                                   \
	X(mul, gllmk_binary_fn)                                   \
	X(scale, gllmk_scale_fn)                                  \
	X(silu, gllmk_unary_fn)                                   \
	X(gelu_tanh, gllmk_unary_fn)                              \
	X(gelu_erf, gllmk_unary_fn)                               \
	X(relu, gllmk_unary_fn)                                   \
	X(tanh, gllmk_unary_fn)                                   \
	X(exp, gllmk_unary_fn)                                    \
	X(swiglu, gllmk_binary_fn)                                \
	X(rms_norm, gllmk_rms_norm_fn)                            \
	X(layer_norm, gllmk_layer_norm_fn)                        \
	X(softmax, gllmk_softmax_fn)                              \
	X(rope, gllmk_rope_fn)                                    \
	X(get_rows, gllmk_get_rows_fn)                            \
	X(attention, gllmk_attention_fn)                          \
	X(argmax, gllmk_argmax_fn)                                \
	X(sample, gllmk_sample_fn)

#define GLLMK_OPS_V1_1(X)                                         \
	X(rope_ext, gllmk_rope_ext_fn)                            \
	X(attention_ext, gllmk_attention_ext_fn)                  \
	X(attention_varlen, gllmk_attention_varlen_fn)            \
	X(kv_store, gllmk_kv_store_fn)                            \
	X(top_k, gllmk_top_k_fn)                                  \
	X(moe_route, gllmk_moe_route_fn)                          \
	X(matmul_id, gllmk_matmul_id_fn)                          \
	X(matmul_batched, gllmk_matmul_batched_fn)                \
	X(glu, gllmk_glu_fn)                                      \
	X(sigmoid, gllmk_unary_fn)                                \
	X(clamp, gllmk_clamp_fn)                                  \
	X(softcap, gllmk_scale_fn)

#define GLLMK_OP_COUNT_V1_0 23
#define GLLMK_OP_COUNT_V1_1 35

/* The layout guard: slot n (counting probe as 0) sits right after the
 * 8-byte header and the name pointer. A failing assert here means someone
 * inserted, removed or retyped a slot: that is a new major (SPEC/ABI.md). */
#define GLLMK_SLOT_OFFSET(n) (8 + sizeof(void *) * (1 + (n)))
#ifdef __cplusplus
#define GLLMK_STATIC_ASSERT static_assert
#else
#define GLLMK_STATIC_ASSERT _Static_assert
#endif
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, size) == 0, "table starts with its size");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, abi_major) == 4, "then the major");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, abi_minor) == 6, "then the minor");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, name) == 8, "then the name");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, probe) == GLLMK_SLOT_OFFSET(0), "slot 0");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, open) == GLLMK_SLOT_OFFSET(1), "slot 1");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, close) == GLLMK_SLOT_OFFSET(2), "slot 2");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, buffer_alloc) == GLLMK_SLOT_OFFSET(3), "slot 3");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, buffer_wrap) == GLLMK_SLOT_OFFSET(4), "slot 4");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, buffer_free) == GLLMK_SLOT_OFFSET(5), "slot 5");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, buffer_write) == GLLMK_SLOT_OFFSET(6), "slot 6");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, buffer_read) == GLLMK_SLOT_OFFSET(7), "slot 7");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, buffer_copy) == GLLMK_SLOT_OFFSET(8), "slot 8");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, sync) == GLLMK_SLOT_OFFSET(9), "slot 9");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, matmul) == GLLMK_SLOT_OFFSET(10), "slot 10");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, gemm) == GLLMK_SLOT_OFFSET(11), "slot 11");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, dequantize) == GLLMK_SLOT_OFFSET(12), "slot 12");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, quantize) == GLLMK_SLOT_OFFSET(13), "slot 13");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, convert) == GLLMK_SLOT_OFFSET(14), "slot 14");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, add) == GLLMK_SLOT_OFFSET(15), "slot 15");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, mul) == GLLMK_SLOT_OFFSET(16), "slot 16");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, scale) == GLLMK_SLOT_OFFSET(17), "slot 17");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, silu) == GLLMK_SLOT_OFFSET(18), "slot 18");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, gelu_tanh) == GLLMK_SLOT_OFFSET(19), "slot 19");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, gelu_erf) == GLLMK_SLOT_OFFSET(20), "slot 20");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, relu) == GLLMK_SLOT_OFFSET(21), "slot 21");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, tanh) == GLLMK_SLOT_OFFSET(22), "slot 22");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, exp) == GLLMK_SLOT_OFFSET(23), "slot 23");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, swiglu) == GLLMK_SLOT_OFFSET(24), "slot 24");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, rms_norm) == GLLMK_SLOT_OFFSET(25), "slot 25");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, layer_norm) == GLLMK_SLOT_OFFSET(26), "slot 26");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, softmax) == GLLMK_SLOT_OFFSET(27), "slot 27");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, rope) == GLLMK_SLOT_OFFSET(28), "slot 28");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, get_rows) == GLLMK_SLOT_OFFSET(29), "slot 29");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, attention) == GLLMK_SLOT_OFFSET(30), "slot 30");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, argmax) == GLLMK_SLOT_OFFSET(31), "slot 31");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, sample) == GLLMK_SLOT_OFFSET(32), "slot 32");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, rope_ext) == GLLMK_SLOT_OFFSET(33), "slot 33");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, attention_ext) == GLLMK_SLOT_OFFSET(34), "slot 34");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, attention_varlen) == GLLMK_SLOT_OFFSET(35), "slot 35");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, kv_store) == GLLMK_SLOT_OFFSET(36), "slot 36");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, top_k) == GLLMK_SLOT_OFFSET(37), "slot 37");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, moe_route) == GLLMK_SLOT_OFFSET(38), "slot 38");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, matmul_id) == GLLMK_SLOT_OFFSET(39), "slot 39");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, matmul_batched) == GLLMK_SLOT_OFFSET(40), "slot 40");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, glu) == GLLMK_SLOT_OFFSET(41), "slot 41");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, sigmoid) == GLLMK_SLOT_OFFSET(42), "slot 42");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, clamp) == GLLMK_SLOT_OFFSET(43), "slot 43");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, softcap) == GLLMK_SLOT_OFFSET(44), "slot 44");
GLLMK_STATIC_ASSERT(offsetof(struct gllmk_plugin_table, weights_prepare) == GLLMK_SLOT_OFFSET(45), "slot 45");
GLLMK_STATIC_ASSERT(sizeof(struct gllmk_plugin_table) == GLLMK_SLOT_OFFSET(46), "ABI 1.2 ends at slot 45");

GLLMK_STATIC_ASSERT(offsetof(gllmk_host, set_error) == 16, "host layout");
GLLMK_STATIC_ASSERT(offsetof(gllmk_open_args, host) == 16, "open_args layout");
GLLMK_STATIC_ASSERT(offsetof(gllmk_tensor, shape) == 24, "tensor layout");
GLLMK_STATIC_ASSERT(offsetof(gllmk_tensor, stride) == 56, "tensor layout");

/* ------------------------------------------------------------ entry points */

/* The plugin's only export. The core offers what it speaks (host); the
 * plugin answers with its static const table, or NULL and a sentence in
 * reason ("needs a core speaking ABI >= 1.2"). It must not allocate, start
 * threads or touch a device: that is open's work. */
#define GLLMK_PLUGIN_ENTRY gllmk_plugin_entry_v1
#define GLLMK_PLUGIN_ENTRY_NAME "gllmk_plugin_entry_v1"
#define GLLMK_PLUGIN_ENTRY_NODE "GLLMK_PLUGIN_1" /* its ELF version node: plugins/plugin.map */
typedef const gllmk_plugin_table *(*gllmk_plugin_entry_fn)(const gllmk_host *host, char *reason, size_t reason_len);

/* The check every entry makes before answering: the core speaks this
 * plugin's major, and its host struct has every member the plugin uses.
 * Returns table, or NULL with the sentence in reason. */
static inline const gllmk_plugin_table *gllmk_plugin_negotiate(const gllmk_host *host, const gllmk_plugin_table *table,
								char *reason, size_t reason_len)
{
	size_t need = offsetof(gllmk_host, set_error) + sizeof(host->set_error);

	if (!host || host->abi_major != GLLMK_ABI_MAJOR) {
		snprintf(reason, reason_len, "%s speaks ABI %d.%d; the core speaks %u.%u", table->name,
			 GLLMK_ABI_MAJOR, GLLMK_ABI_MINOR, host ? host->abi_major : 0u, host ? host->abi_minor : 0u);
		return NULL;
	}
	if (host->struct_size < need) {
		snprintf(reason, reason_len, "%s needs a host struct of at least %zu bytes, got %u", table->name, need,
			 host->struct_size);
		return NULL;
	}
	return table;
}

/* Defines a plugin's one export for its static const table. */
#define GLLMK_DEFINE_PLUGIN_ENTRY(table)                                                                    \
	__attribute__((visibility("default"))) const gllmk_plugin_table *GLLMK_PLUGIN_ENTRY(                \
		const gllmk_host *host, char *reason, size_t reason_len);                                   \
	const gllmk_plugin_table *GLLMK_PLUGIN_ENTRY(const gllmk_host *host, char *reason, size_t reason_len) \
	{                                                                                                   \
		return gllmk_plugin_negotiate(host, &(table), reason, reason_len);                           \
	}

/* A layer (libgllmk-debug.so) exports this instead and is found with
 * dlsym(RTLD_DEFAULT) when preloaded. It gets the selected plugin's table
 * and returns its own: NULL slots fall through to next; its open() receives
 * next and next's state in gllmk_open_args. A layer that overrides any
 * buffer slot must override all of them and every op, since its impl
 * handles mean nothing to the next table. */
#define GLLMK_LAYER_ENTRY gllmk_layer_entry_v1
#define GLLMK_LAYER_ENTRY_NAME "gllmk_layer_entry_v1"
typedef const gllmk_plugin_table *(*gllmk_layer_entry_fn)(const gllmk_host *host, const gllmk_plugin_table *next,
							  char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif
#endif /* GLLMK_PLUGIN_H */
