/* libgllmk-vulkan.so: the entry point and the one dispatch table. */
#include <stdio.h>

#include "vk_plugin.h"

/* The operator slots come from GLLMK_OPS: slot <op> is vk_<op>, declared
 * by the same list in vk_plugin.h. */
#define VK_OP_SLOT(op, type) .op = vk_##op,

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
	GLLMK_OPS(VK_OP_SLOT)
};

GLLMK_DEFINE_PLUGIN_ENTRY(vk_table)
