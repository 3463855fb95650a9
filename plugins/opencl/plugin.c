/* libgllmk-opencl.so: the entry point and the one dispatch table. The
 * operators run through the OpenCL ICD loader, on any device that takes a
 * precompiled program (SPIR-V or SPIR 1.2); the plugin's one export is its
 * entry, the table is static const data. */
#include <stdio.h>

#include "ocl_plugin.h"

/* The operator slots come from GLLMK_OPS: slot <op> is ocl_<op>, declared
 * by the same list in ocl_plugin.h. */
#define OCL_OP_SLOT(op, type) .op = ocl_##op,

static const gllmk_plugin_table ocl_table = {
	.size         = sizeof(gllmk_plugin_table),
	.abi_major    = GLLMK_ABI_MAJOR,
	.abi_minor    = GLLMK_ABI_MINOR,
	.name         = "opencl",
	.probe        = ocl_probe,
	.open         = ocl_open,
	.close        = ocl_close,
	.buffer_alloc = ocl_buffer_alloc,
	.buffer_wrap  = NULL, /* alloc + write: device memory is the point */
	.buffer_free  = ocl_buffer_free,
	.buffer_write = ocl_buffer_write,
	.buffer_read  = ocl_buffer_read,
	.buffer_copy  = ocl_buffer_copy,
	.sync         = ocl_sync,
	GLLMK_OPS(OCL_OP_SLOT)
};

GLLMK_DEFINE_PLUGIN_ENTRY(ocl_table)
