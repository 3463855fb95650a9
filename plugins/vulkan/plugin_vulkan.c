/* libgllmk-vulkan.so: the entry point and the one dispatch table. */
#include <stdio.h>

#include "vk_plugin.h"

static const gllmk_plugin_table vk_table = {
	.size         = sizeof(gllmk_plugin_table),
	.abi_major    = GLLMK_ABI_MAJOR,
	.abi_minor    = GLLMK_ABI_MINOR,
	.name         = "vulkan",
	.probe        = vk_probe,
	.open         = vk_open,
	.close        = vk_close,
	.buffer_alloc = vk_buffer_alloc,
	.buffer_wrap  = NULL, /* host memory cannot be a storage buffer portably */
	.buffer_free  = vk_buffer_free,
	.buffer_write = vk_buffer_write,
	.buffer_read  = vk_buffer_read,
	.buffer_copy  = vk_buffer_copy,
	.sync         = vk_sync,
	.matmul       = vk_matmul,
	.gemm         = vk_gemm,
	.dequantize   = vk_dequantize,
	.quantize     = vk_quantize,
	.convert      = vk_convert,
	.add          = vk_add,
	.mul          = vk_mul,
	.scale        = vk_scale,
	.silu         = vk_silu,
	.gelu_tanh    = vk_gelu_tanh,
	.gelu_erf     = vk_gelu_erf,
	.relu         = vk_relu,
	.tanh         = vk_tanh,
	.exp          = vk_exp,
	.swiglu       = vk_swiglu,
	.rms_norm     = vk_rms_norm,
	.layer_norm   = vk_layer_norm,
	.softmax      = vk_softmax,
	.rope         = vk_rope,
	.get_rows     = vk_get_rows,
	.attention    = vk_attention,
	.argmax       = vk_argmax,
	.sample       = vk_sample,
	.matmul_id    = vk_matmul_id,
	.matmul_batched = vk_matmul_batched,
	.top_k        = vk_top_k,
	.moe_route    = vk_moe_route,
	.glu          = vk_glu,
	.sigmoid      = vk_sigmoid,
	.clamp        = vk_clamp,
	.softcap      = vk_softcap,
};

GLLMK_DEFINE_PLUGIN_ENTRY(vk_table)
