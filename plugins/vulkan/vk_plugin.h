/* The gllmk Vulkan plugin's internals: one context = one VkInstance, one
 * VkDevice and one queue; operators are recorded into a command stream and
 * submitted at sync or when a batch fills (stream.c).
 *
 * Files: plugin_vulkan.c (entry, the table), probe_vulkan.c, device.c
 * (loader, instance, device choice), memory.c (buffers), stream.c
 * (recording, barriers, submission, pipelines), ops_*_vulkan.c (operators).
 */
#ifndef GLLMK_VK_PLUGIN_H
#define GLLMK_VK_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "gllmk_plugin.h"
#include "vk_funcs.h"
#include "vk_kernels.h"

#define VK_BINDINGS 8          /* storage buffers per dispatch; 7 = status */
#define VK_STATUS_BINDING 7
#define VK_PUSH_BYTES 128      /* the minimum maxPushConstantsSize */
#define VK_BATCH_SETS 256      /* dispatches per batch before it is submitted */
#define VK_HAZARD_MAX 32       /* buffers tracked between barriers */
#define VK_STAGING_BYTES (8u << 20)
#define VK_UPDATE_MAX 65536    /* vkCmdUpdateBuffer's limit */

struct vk_buf {
	VkBuffer buf;
	VkDeviceMemory mem;
	uint8_t *map;            /* persistently mapped, or NULL (device-local only) */
	bool coherent;
	uint64_t size;           /* as allocated: the caller's size rounded up to 16 */
	uint64_t last_use;       /* stream sequence of the last batch that used it */
	uint64_t last_write;     /* ... and that wrote it */
};

/* One command buffer with its descriptor pool and fence. Two alternate, so
 * the host records one while the device runs the other. */
struct vk_batch {
	VkCommandBuffer cmd;
	VkFence fence;
	VkDescriptorPool pool;
	uint32_t sets;
	bool recording;
	bool in_flight;
	uint64_t seq;
};

/* Buffers touched since the last barrier: a dispatch that reads what these
 * wrote, or writes what these read or wrote, needs a barrier first. */
struct vk_hazards {
	VkBuffer read[VK_HAZARD_MAX];
	VkBuffer written[VK_HAZARD_MAX];
	uint32_t n_read, n_written;
	bool any;                /* something was recorded since the barrier */
};

struct vk_ctx {
	const gllmk_host *host;
	struct vk_fns fn;
	VkInstance instance;     /* the process's, not the context's */
	VkPhysicalDevice pdev;
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties mem_props;
	VkDevice dev;
	VkQueue queue;
	uint32_t queue_family;
	bool unified;            /* buffers are host-visible: write/read map them */
	uint64_t max_range;      /* maxStorageBufferRange */
	uint64_t bind_align;     /* minStorageBufferOffsetAlignment */
	uint32_t subgroup_size;  /* 0: no subgroup arithmetic in compute shaders */
	bool attn_split;         /* decode attention may split the tokens over workgroups */

	VkDescriptorSetLayout set_layout;
	VkPipelineLayout layout;
	VkPipelineCache cache;
	VkPipeline pipes[VK_KERNEL_COUNT];
	VkCommandPool cmd_pool;

	struct vk_batch batch[2];
	uint32_t cur;
	uint64_t next_seq;       /* sequence of the next batch started */
	uint64_t done_seq;       /* every batch up to this one has finished */
	struct vk_hazards hz;

	struct vk_buf *status;   /* host-visible; bounds errors raised by shaders */
	struct vk_buf *staging;  /* host-visible; write/read of device-local buffers */
	struct vk_buf *scratch;  /* per-call device data (sampling's uniforms) */
	struct vk_buf *codebooks; /* the i-quants' grids (codebooks.h), made on first use */
};

/* ------------------------------------------------------------ device.c */
/* The process's loader (dlopen("libvulkan.so.1")) and VkInstance, made on
 * first use and shared by the probe and every context; false and a
 * sentence in why when there is no loader or no Vulkan 1.1. Fills fn's
 * global and instance functions. */
bool vk_process_instance(struct vk_fns *fn, VkInstance *inst, char *why, size_t why_len);

struct vk_choice {
	VkPhysicalDevice pdev;
	VkPhysicalDeviceProperties props;
	uint32_t queue_family;
	uint64_t memory;         /* bytes of the largest device-local heap */
	char driver[64];
};
/* The best device (discrete > integrated > virtual > CPU) that has a compute
 * queue and Vulkan >= 1.1; false and a sentence when there is none. */
bool vk_choose_device(const struct vk_fns *fn, VkInstance inst, struct vk_choice *c, char *why, size_t why_len);
const char *vk_result_name(VkResult r);
const char *vk_device_type_name(VkPhysicalDeviceType t);

gllmk_status vk_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len);
void vk_close(void *state);

/* ------------------------------------------------------------ probe */
gllmk_probe_result vk_probe(gllmk_probe_info *info);

/* ------------------------------------------------------------ memory.c */
gllmk_status vk_buf_create(struct vk_ctx *c, uint64_t size, bool host_visible, struct vk_buf **out);
void vk_buf_destroy(struct vk_ctx *c, struct vk_buf *b);

gllmk_status vk_buffer_alloc(void *st, uint64_t size, void **impl);
void vk_buffer_free(void *st, void *impl);
gllmk_status vk_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size);
gllmk_status vk_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size);
gllmk_status vk_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size);
gllmk_status vk_sync(void *st);
/* Reads bytes of b as they will be once its pending writers finish
 * (waits for them; does not report shader-raised errors). */
gllmk_status vk_read_raw(struct vk_ctx *c, struct vk_buf *b, uint64_t off, void *dst, uint64_t size);

/* ------------------------------------------------------------ stream.c */
gllmk_status vk_fail(struct vk_ctx *c, const char *what, VkResult r);
gllmk_status vk_stream_init(struct vk_ctx *c);
void vk_stream_destroy(struct vk_ctx *c);

/* What one dispatch binds. Unused bindings get the status buffer. */
struct vk_call {
	struct vk_buf *buf[VK_BINDINGS];
	uint64_t base[VK_BINDINGS];  /* byte offset the binding starts at */
	uint32_t writes;             /* bit i: binding i is written */
	const gllmk_tensor *too_big; /* a tensor the binding range cannot hold */
};

/* Binds t's buffer at slot and returns t's offset inside the binding. */
uint32_t vk_bind(struct vk_ctx *c, struct vk_call *call, int slot, const gllmk_tensor *t, bool write);
/* Binds a whole plugin buffer at slot. */
void vk_bind_buf(struct vk_call *call, int slot, struct vk_buf *b, bool write);
/* Records one dispatch of `groups` workgroups (laid out 2-D). */
gllmk_status vk_dispatch(struct vk_ctx *c, enum vk_kernel k, struct vk_call *call, const void *push,
			 uint32_t push_bytes, uint64_t groups);
/* Records a buffer-to-buffer copy / a small update in stream order. */
gllmk_status vk_record_copy(struct vk_ctx *c, struct vk_buf *dst, uint64_t dst_off, struct vk_buf *src,
			    uint64_t src_off, uint64_t size);
gllmk_status vk_record_update(struct vk_ctx *c, struct vk_buf *dst, uint64_t off, const void *src, uint64_t size);
/* Submits what is recorded and waits for everything. */
gllmk_status vk_drain(struct vk_ctx *c);
/* vk_drain, then reports a shader-raised bounds error (GLLMK_E_BOUNDS). */
gllmk_status vk_finish(struct vk_ctx *c);
/* Whether the device may still read or write b. */
bool vk_buf_busy(const struct vk_ctx *c, const struct vk_buf *b);
bool vk_buf_pending_write(const struct vk_ctx *c, const struct vk_buf *b);

/* ------------------------------------------------------------ ops helpers */
/* A tensor seen as rows of a 4-D [d0, d1, d2, n] shape. */
struct vk_rows {
	uint32_t n, d1, d2, rows;
};
struct vk_view {
	uint32_t off, s0, s1, s2;
};
struct vk_rows vk_rows_of(const gllmk_tensor *t);
/* Binds t and returns its offset and outer strides padded to 4-D, aligned
 * at the innermost dim. Missing and size-1 dims get stride 0, so a tensor
 * with fewer or size-1 dims broadcasts over the rows of a bigger one. */
struct vk_view vk_view_of(struct vk_ctx *c, struct vk_call *call, int slot, const gllmk_tensor *t, bool write);

/* The kernels of each weight dtype and of each K/V cache dtype, indexed by
 * dtype: built from abi/gllmk_dtypes.def's WEIGHT and KV columns
 * (ops_common_vulkan.c); plugins/vulkan/meson.build compiles a variant of
 * each family for every such dtype, named after its enum. */
struct vk_weight_kernels {
	enum vk_kernel dequant, get_rows, matmul, matvec, matvec_sg, matvec_id, matvec_id_sg;
};
struct vk_kv_kernels {
	enum vk_kernel attention, attention_sg, kv_store;
};
extern const struct vk_weight_kernels vk_weight_kernels[GLLMK_DTYPE_LIMIT];
extern const struct vk_kv_kernels vk_kv_kernels[GLLMK_DTYPE_LIMIT];
/* Binds the codebook buffer (kernels/vulkan/codebooks.h) at its binding,
 * for the weight kernels: made and filled on the context's first use. */
gllmk_status vk_bind_codebooks(struct vk_ctx *c, struct vk_call *call);
/* Index data only the plugin sees (get_rows ids, block tables): the first
 * of count i32 at t outside [0, limit), as *pos (-1: none) and *value. */
gllmk_status vk_find_bad_index(struct vk_ctx *c, gllmk_t t, uint64_t count, int64_t limit, int64_t *pos,
			       int32_t *value);
/* The same with the allowed range [lo, limit). */
gllmk_status vk_find_bad_index_in(struct vk_ctx *c, gllmk_t t, uint64_t count, int64_t lo, int64_t limit,
				  int64_t *pos, int32_t *value);
/* The -DSUBGROUP variant of a kernel where the device reduces in subgroups. */
static inline enum vk_kernel vk_pick(const struct vk_ctx *c, enum vk_kernel plain, enum vk_kernel sg)
{
	return c->subgroup_size ? sg : plain;
}
/* The context's scratch buffer (per-call device data written in stream
 * order: sample's uniforms, attention's index words), at least size bytes;
 * a smaller one is replaced once the device is done with it. */
gllmk_status vk_scratch(struct vk_ctx *c, uint64_t size);
/* Workgroups for a grid-stride loop over `items` with `per_group` each. */
uint64_t vk_groups(uint64_t items, uint32_t per_group);

/* ------------------------------------------------------------ operators */
gllmk_status vk_matmul(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias);
gllmk_status vk_gemm(void *st, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p);
gllmk_status vk_matmul_id(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias, gllmk_t sw);
gllmk_status vk_matmul_batched(void *st, gllmk_t y, gllmk_t x, gllmk_t w);
gllmk_status vk_dequantize(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_quantize(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_convert(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_add(void *st, gllmk_t y, gllmk_t a, gllmk_t b);
gllmk_status vk_mul(void *st, gllmk_t y, gllmk_t a, gllmk_t b);
gllmk_status vk_scale(void *st, gllmk_t y, gllmk_t x, float s);
gllmk_status vk_silu(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_gelu_tanh(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_gelu_erf(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_relu(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_tanh(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_exp(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_swiglu(void *st, gllmk_t y, gllmk_t gate, gllmk_t up);
gllmk_status vk_rms_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps);
gllmk_status vk_layer_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps);
gllmk_status vk_softmax(void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *p);
gllmk_status vk_rope(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p);
gllmk_status vk_rope_ext(void *st, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t freq_factors,
			 const gllmk_rope_ext_params *p);
gllmk_status vk_kv_store(void *st, gllmk_t cache, gllmk_t x, gllmk_t slots);
gllmk_status vk_get_rows(void *st, gllmk_t y, gllmk_t table, gllmk_t ids);
gllmk_status vk_attention(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t block_table,
			  const gllmk_attention_params *p);
gllmk_status vk_attention_ext(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,
			      gllmk_t block_table, gllmk_t sinks, const gllmk_attention_ext_params *p);
gllmk_status vk_attention_varlen(void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask, gllmk_t cu_q,
				 gllmk_t kv_len, gllmk_t block_tables, gllmk_t sinks,
				 const gllmk_attention_ext_params *p);
gllmk_status vk_argmax(void *st, gllmk_t ids, gllmk_t x);
gllmk_status vk_sample(void *st, gllmk_t ids, gllmk_t logits, const float *uniform, const gllmk_sample_params *p);
gllmk_status vk_top_k(void *st, gllmk_t values, gllmk_t ids, gllmk_t x);
gllmk_status vk_moe_route(void *st, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,
			  const gllmk_moe_route_params *p);
gllmk_status vk_glu(void *st, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p);
gllmk_status vk_sigmoid(void *st, gllmk_t y, gllmk_t x);
gllmk_status vk_clamp(void *st, gllmk_t y, gllmk_t x, float lo, float hi);
gllmk_status vk_softcap(void *st, gllmk_t y, gllmk_t x, float c);

#endif
