/* dequantize, quantize, get_rows and convert (the dtype changes, as in the
 * CPU framework's ops_quant.c). get_rows' kernel checks its ids (a decode
 * step's token id comes from argmax on the device: reading it back blocked
 * the queue): an id outside the table is clamped and raised, and the next
 * sync returns GLLMK_E_BOUNDS naming the position (SPEC/OPENCL.md). */

#include "ocl_dtypes.h"
#include "../gpu_common/gpu_common.h"

/* y (f32, the quantized output or convert's) from x, row by row: n elements per row,
 * `step` of them per work-item. */
static gllmk_status by_rows(void *st, enum ocl_kernel k, const char *op, gllmk_t y, gllmk_t x, int64_t step)
{
	struct ocl_view vy = ocl_view(y), vx = ocl_view(x);
	struct ocl_args args = ocl_args(st, k);
	int64_t total = ocl_rows(&vy) * (vy.d[3] / step);

	ocl_arg_tensor(&args, &vy);
	ocl_arg_tensor(&args, &vx);
	ocl_arg_long(&args, vy.d[3]);
	ocl_arg_long(&args, vy.d[1]);
	ocl_arg_long(&args, vy.d[2]);
	ocl_arg_long(&args, total);
	return ocl_launch(&args, op, (uint64_t)total);
}

gllmk_status ocl_dequantize(void *st, gllmk_t y, gllmk_t x)
{
	return by_rows(st, ocl_weight_kernels[x->dtype].dequant, "gllmk_dequantize", y, x, ocl_decode_step(x->dtype));
}

gllmk_status ocl_quantize(void *st, gllmk_t y, gllmk_t x)
{
	int q8_k = y->dtype == GLLMK_Q8_K;

	return by_rows(st, q8_k ? OCL_KERNEL_QUANTIZE_Q8_K : OCL_KERNEL_QUANTIZE_Q8_0, "gllmk_quantize", y, x, q8_k ? 256 : 32);
}

gllmk_status ocl_get_rows(void *st, gllmk_t y, gllmk_t table, gllmk_t ids)
{
	struct ocl_ctx *s = st;
	int64_t n = ids->shape[0], v_rows = table->shape[0], k = table->shape[1];
	int64_t step = ocl_decode_step(table->dtype), total = n * (k / step);
	struct ocl_args args = ocl_args(s, ocl_weight_kernels[table->dtype].get_rows);

	s->status_armed = 1;
	ocl_arg_mem(&args, ocl_mem(y));
	ocl_arg_long(&args, (int64_t)y->offset);
	ocl_arg_long(&args, y->stride[0]);
	ocl_arg_mem(&args, ocl_mem(table));
	ocl_arg_long(&args, (int64_t)table->offset);
	ocl_arg_long(&args, table->stride[0]);
	ocl_arg_mem(&args, ocl_mem(ids));
	ocl_arg_long(&args, (int64_t)ids->offset);
	ocl_arg_long(&args, v_rows);
	ocl_arg_long(&args, k);
	ocl_arg_long(&args, total);
	ocl_arg_mem(&args, s->status);
	return ocl_launch(&args, "gllmk_get_rows", (uint64_t)total);
}

/* convert_<src>_<dst> for the three float dtypes */
static const enum ocl_kernel convert_kernels[3][3] = {
	{ OCL_KERNEL_CONVERT_F32_F32, OCL_KERNEL_CONVERT_F32_F16, OCL_KERNEL_CONVERT_F32_BF16 },
	{ OCL_KERNEL_CONVERT_F16_F32, OCL_KERNEL_CONVERT_F16_F16, OCL_KERNEL_CONVERT_F16_BF16 },
	{ OCL_KERNEL_CONVERT_BF16_F32, OCL_KERNEL_CONVERT_BF16_F16, OCL_KERNEL_CONVERT_BF16_BF16 },
};

gllmk_status ocl_convert(void *st, gllmk_t y, gllmk_t x)
{
	enum ocl_kernel k = convert_kernels[gpu_float_slot(x->dtype)][gpu_float_slot(y->dtype)];

	return by_rows(st, k, "gllmk_convert", y, x, 1);
}
