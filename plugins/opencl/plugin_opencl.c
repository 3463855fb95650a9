/* opencl: every operator through the OpenCL ICD loader, on any device that
 * takes a precompiled program (SPIR-V or SPIR 1.2). The plugin's one export
 * is its entry; the table is static const data. */
#include <stdio.h>
#include <stdlib.h>

#include "ocl_plugin.h"

static void release(struct ocl_state *s)
{
	ocl_program_release(s);
	if (s->status)
		s->api.clReleaseMemObject(s->status);
	if (s->queue)
		s->api.clReleaseCommandQueue(s->queue);
	if (s->ctx)
		s->api.clReleaseContext(s->ctx);
	ocl_api_close(&s->api);
	free(s);
}

static gllmk_status open_device(struct ocl_state *s, int by_name, char *reason, size_t reason_len)
{
	cl_context_properties props[3] = { CL_CONTEXT_PLATFORM, 0, 0 };
	cl_int err;

	if (!ocl_choose_device(&s->api, &s->dev, reason, reason_len))
		return GLLMK_E_NO_PLUGIN;
	props[1] = (cl_context_properties)s->dev.platform;
	if (ocl_device_is_cpu(&s->dev) && !by_name) {
		snprintf(reason, reason_len, "%s is a CPU OpenCL device: used only when asked for by name", s->dev.name);
		return GLLMK_E_NO_PLUGIN;
	}
	s->ctx = s->api.clCreateContext(props, 1, &s->dev.id, NULL, NULL, &err);
	if (err != CL_SUCCESS) {
		snprintf(reason, reason_len, "clCreateContext(%s): %s", s->dev.name, ocl_error_name(err));
		return GLLMK_E_BACKEND;
	}
	s->queue = s->api.clCreateCommandQueue(s->ctx, s->dev.id, 0, &err);
	if (err != CL_SUCCESS) {
		snprintf(reason, reason_len, "clCreateCommandQueue(%s): %s", s->dev.name, ocl_error_name(err));
		return GLLMK_E_BACKEND;
	}
	s->status = s->api.clCreateBuffer(s->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
					  OCL_STATUS_WORDS * sizeof(int32_t), (int32_t[OCL_STATUS_WORDS]){ 0 }, &err);
	if (err != CL_SUCCESS) {
		snprintf(reason, reason_len, "clCreateBuffer (status, %s): %s", s->dev.name, ocl_error_name(err));
		return GLLMK_E_BACKEND;
	}
	return ocl_program_load(s, reason, reason_len) == CL_SUCCESS ? GLLMK_OK : GLLMK_E_BACKEND;
}

gllmk_status ocl_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct ocl_state *s = calloc(1, sizeof(*s));
	gllmk_status st;

	if (!s) {
		snprintf(reason, reason_len, "out of host memory");
		return GLLMK_E_NO_MEMORY;
	}
	s->host = args->host;
	if (!ocl_api_open(&s->api, reason, reason_len)) {
		free(s);
		return GLLMK_E_NO_PLUGIN;
	}
	st = open_device(s, args->by_name, reason, reason_len);
	if (st != GLLMK_OK) {
		release(s);
		return st;
	}
	*state = s;
	return GLLMK_OK;
}

void ocl_close(void *st)
{
	struct ocl_state *s = st;

	s->api.clFinish(s->queue);
	release(s);
}

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
	.matmul       = ocl_matmul,
	.gemm         = ocl_gemm,
	.dequantize   = ocl_dequantize,
	.quantize     = ocl_quantize,
	.convert      = ocl_convert,
	.add          = ocl_add,
	.mul          = ocl_mul,
	.scale        = ocl_scale,
	.silu         = ocl_silu,
	.gelu_tanh    = ocl_gelu_tanh,
	.gelu_erf     = ocl_gelu_erf,
	.relu         = ocl_relu,
	.tanh         = ocl_tanh,
	.exp          = ocl_exp,
	.swiglu       = ocl_swiglu,
	.rms_norm     = ocl_rms_norm,
	.layer_norm   = ocl_layer_norm,
	.softmax      = ocl_softmax,
	.rope         = ocl_rope,
	.get_rows     = ocl_get_rows,
	.attention    = ocl_attention,
	.argmax       = ocl_argmax,
	.sample       = ocl_sample,
	.matmul_id    = ocl_matmul_id,
	.matmul_batched = ocl_matmul_batched,
	.top_k        = ocl_top_k,
	.moe_route    = ocl_moe_route,
	.glu          = ocl_glu,
	.sigmoid      = ocl_sigmoid,
	.clamp        = ocl_clamp,
	.softcap      = ocl_softcap,
	.attention_ext    = ocl_attention_ext,
	.attention_varlen = ocl_attention_varlen,
	.rope_ext     = ocl_rope_ext,
	.kv_store     = ocl_kv_store,
};

GLLMK_DEFINE_PLUGIN_ENTRY(ocl_table)
