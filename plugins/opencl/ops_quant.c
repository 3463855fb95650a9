/* dequantize, quantize and get_rows. get_rows checks its ids on the host
 * (a blocking read of n i32, SPEC/OPENCL.md) so an id outside the table is
 * GLLMK_E_BOUNDS from the call itself, naming the position. */
#include <stdlib.h>

#include "ocl_dtypes.h"

#define DEQUANT_SLOT(dt, name) [dt] = OCLK_dequant_##name,
#define GET_ROWS_SLOT(dt, name) [dt] = OCLK_get_rows_##name,
static const enum ocl_kernel_id dequant_kernels[GLLMK_DTYPE_LIMIT] = { OCL_WEIGHT_DTYPES(DEQUANT_SLOT) };
static const enum ocl_kernel_id get_rows_kernels[GLLMK_DTYPE_LIMIT] = { OCL_WEIGHT_DTYPES(GET_ROWS_SLOT) };

/* y (f32 or the quantized output) from x, row by row: n elements per row,
 * `step` of them per work-item. */
static gllmk_status by_rows(void *st, enum ocl_kernel_id k, const char *op, ocl_t y, ocl_t x, int64_t step)
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

gllmk_status ocl_dequantize(void *st, ocl_t y, ocl_t x)
{
	return by_rows(st, dequant_kernels[x->dtype], "gllmk_dequantize", y, x, ocl_decode_step(x->dtype));
}

gllmk_status ocl_quantize(void *st, ocl_t y, ocl_t x)
{
	int q8_k = y->dtype == GLLMK_Q8_K;

	return by_rows(st, q8_k ? OCLK_quantize_q8_k : OCLK_quantize_q8_0, "gllmk_quantize", y, x, q8_k ? 256 : 32);
}

static gllmk_status check_ids(struct ocl_state *s, ocl_t ids, int64_t n, int64_t v_rows)
{
	int32_t small[256], *buf = n <= 256 ? small : malloc((size_t)n * sizeof(int32_t));
	gllmk_status st;

	if (!buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_get_rows: no host memory to check %lld ids",
					  (long long)n);
	st = ocl_read_i32(s, "gllmk_get_rows", ids, n, buf);
	for (int64_t i = 0; st == GLLMK_OK && i < n; i++)
		if (buf[i] < 0 || buf[i] >= v_rows)
			st = s->host->set_error(GLLMK_E_BOUNDS, "gllmk_get_rows: ids[%lld] = %d, table has %lld rows",
						(long long)i, buf[i], (long long)v_rows);
	if (buf != small)
		free(buf);
	return st;
}

gllmk_status ocl_get_rows(void *st, ocl_t y, ocl_t table, ocl_t ids)
{
	struct ocl_state *s = st;
	int64_t n = ids->shape[0], v_rows = table->shape[0], k = table->shape[1];
	int64_t step = ocl_decode_step(table->dtype), total = n * (k / step);
	struct ocl_args args = ocl_args(s, get_rows_kernels[table->dtype]);
	gllmk_status rc = check_ids(s, ids, n, v_rows);

	if (rc != GLLMK_OK)
		return rc;
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
	return ocl_launch(&args, "gllmk_get_rows", (uint64_t)total);
}
