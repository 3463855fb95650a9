/* Buffers are cl_mem; one in-order queue per context. Writes block until
 * the queue has taken src (ABI: the caller may reuse src at once), reads
 * block until every earlier op finished, copies and ops do not block.
 * clReleaseMemObject defers the release until enqueued work is done, as
 * buffer_free requires. */
#include "ocl_plugin.h"

gllmk_status ocl_fail(struct ocl_ctx *s, const char *op, const char *call, cl_int err)
{
	gllmk_status st = GLLMK_E_BACKEND;

	if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
	    err == CL_INVALID_BUFFER_SIZE)
		st = GLLMK_E_NO_MEMORY;
	return s->host->set_error(st, "%s: %s: %s", op, call, ocl_error_name(err));
}

gllmk_status ocl_buffer_alloc(void *st, uint64_t size, void **impl)
{
	struct ocl_ctx *s = st;
	cl_int err;
	cl_mem m = s->api.clCreateBuffer(s->ctx, CL_MEM_READ_WRITE, size, NULL, &err);

	if (err != CL_SUCCESS)
		return ocl_fail(s, "gllmk_buffer_alloc", "clCreateBuffer", err);
	*impl = m;
	return GLLMK_OK;
}

void ocl_buffer_free(void *st, void *impl)
{
	struct ocl_ctx *s = st;

	s->api.clReleaseMemObject((cl_mem)impl);
}

gllmk_status ocl_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size)
{
	struct ocl_ctx *s = st;
	cl_int err = s->api.clEnqueueWriteBuffer(s->queue, (cl_mem)impl, CL_TRUE, off, size, src, 0, NULL, NULL);

	return err == CL_SUCCESS ? GLLMK_OK : ocl_fail(s, "gllmk_buffer_write", "clEnqueueWriteBuffer", err);
}

gllmk_status ocl_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size)
{
	struct ocl_ctx *s = st;
	cl_int err = s->api.clEnqueueReadBuffer(s->queue, (cl_mem)impl, CL_TRUE, off, size, dst, 0, NULL, NULL);

	return err == CL_SUCCESS ? ocl_check_status(s) : ocl_fail(s, "gllmk_buffer_read", "clEnqueueReadBuffer", err);
}

gllmk_status ocl_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size)
{
	struct ocl_ctx *s = st;
	cl_int err = s->api.clEnqueueCopyBuffer(s->queue, (cl_mem)src, (cl_mem)dst, src_off, dst_off, size, 0, NULL,
						NULL);

	return err == CL_SUCCESS ? GLLMK_OK : ocl_fail(s, "gllmk_buffer_copy", "clEnqueueCopyBuffer", err);
}

gllmk_status ocl_sync(void *st)
{
	struct ocl_ctx *s = st;
	cl_int err = s->api.clFinish(s->queue);

	return err == CL_SUCCESS ? ocl_check_status(s) : ocl_fail(s, "gllmk_sync", "clFinish", err);
}

gllmk_status ocl_check_status(struct ocl_ctx *s)
{
	static const int32_t zero[OCL_STATUS_WORDS];
	int32_t w[OCL_STATUS_WORDS];
	cl_int err;

	if (!s->status_armed)
		return GLLMK_OK;
	s->status_armed = 0;
	err = s->api.clEnqueueReadBuffer(s->queue, s->status, CL_TRUE, 0, sizeof(w), w, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		return ocl_fail(s, "gllmk_sync", "clEnqueueReadBuffer (status)", err);
	if (!w[0])
		return GLLMK_OK;
	err = s->api.clEnqueueWriteBuffer(s->queue, s->status, CL_TRUE, 0, sizeof(zero), zero, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		return ocl_fail(s, "gllmk_sync", "clEnqueueWriteBuffer (status)", err);
	if (w[0] == OCL_STATUS_GET_ROWS)
		return s->host->set_error(GLLMK_E_BOUNDS, "gllmk_get_rows: ids[%d] = %d, table has %d rows", w[1], w[3],
					  w[4]);
	if (w[0] == OCL_STATUS_KV_SLOTS)
		return s->host->set_error(GLLMK_E_BOUNDS,
					  "gllmk_kv_store: slots[%d] = %d, cache has %d slots (-1 skips a row)", w[1], w[3],
					  w[4]);
	return s->host->set_error(GLLMK_E_BOUNDS,
				  "gllmk_matmul_id: ids[%d, %d] = %d (token %d, slot %d), w has %d experts", w[1], w[2],
				  w[3], w[1], w[2], w[4]);
}

gllmk_status ocl_read_i32(struct ocl_ctx *s, const char *op, const gllmk_tensor *t, int64_t n, int32_t *out)
{
	cl_int err = s->api.clEnqueueReadBuffer(s->queue, ocl_mem(t), CL_TRUE, t->offset, (size_t)n * sizeof(int32_t),
						out, 0, NULL, NULL);

	return err == CL_SUCCESS ? GLLMK_OK : ocl_fail(s, op, "clEnqueueReadBuffer", err);
}
