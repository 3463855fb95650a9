/* Buffers: the core's record (context, liveness, the context's list) around
 * the plugin's handle. Ranges are checked here; the plugin moves bytes.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "validate.h"

static void buffer_link(gllmk_context *ctx, struct core_buffer *b)
{
	b->prev = NULL;
	b->next = ctx->buffers;
	if (ctx->buffers)
		ctx->buffers->prev = b;
	ctx->buffers = b;
}

static void buffer_unlink(gllmk_context *ctx, struct core_buffer *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		ctx->buffers = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

/* Common to alloc and wrap: a record around the handle the plugin made. */
static gllmk_status buffer_new(gllmk_context *ctx, const char *fn, void *host, uint64_t size, gllmk_buffer **out)
{
	struct core_buffer *b;
	gllmk_status st;
	void *impl = NULL;

	st = core_check_ctx(fn, ctx);
	if (!st)
		st = core_check_ptr(fn, "out", out);
	if (st)
		return st;
	*out = NULL;
	if (size == 0)
		return core_error(GLLMK_E_INVALID, "%s: size = 0 (a buffer holds at least one byte)", fn);
	b = calloc(1, sizeof(*b));
	if (!b)
		return core_error(GLLMK_E_NO_MEMORY, "%s: no memory for the buffer record", fn);
	if (host)
		st = CORE_DISPATCH(ctx, fn, buffer_wrap, host, size, &impl);
	else
		st = CORE_DISPATCH(ctx, fn, buffer_alloc, size, &impl);
	if (st) {
		free(b);
		return st;
	}
	b->pub = (struct gllmk_buffer){
		.impl = impl,
		.size = size,
		.ctx = ctx,
		.magic = CORE_BUFFER_MAGIC,
	};
	buffer_link(ctx, b);
	*out = &b->pub;
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_buffer_alloc(gllmk_context *ctx, uint64_t size, gllmk_buffer **out)
{
	return buffer_new(ctx, "gllmk_buffer_alloc", NULL, size, out);
}

GLLMK_API gllmk_status gllmk_buffer_wrap(gllmk_context *ctx, void *host, uint64_t size, gllmk_buffer **out)
{
	gllmk_status st = core_check_ptr("gllmk_buffer_wrap", "host", host);

	return st ? st : buffer_new(ctx, "gllmk_buffer_wrap", host, size, out);
}

/* Releases one buffer of ctx; gllmk_close calls it for what is left. */
void core_buffer_release(gllmk_context *ctx, gllmk_buffer *buf)
{
	struct core_buffer *b = (struct core_buffer *)buf;

	if (ctx->d.buffer_free.fn)
		ctx->d.buffer_free.fn(ctx->d.buffer_free.state, buf->impl);
	buffer_unlink(ctx, b);
	buf->magic = CORE_BUFFER_DEAD;
	buf->impl = NULL;
	free(b);
}

GLLMK_API void gllmk_buffer_free(gllmk_buffer *buf)
{
	if (!buf || buf->magic != CORE_BUFFER_MAGIC)
		return;
	core_buffer_release(buf->ctx, buf);
}

GLLMK_API uint64_t gllmk_buffer_size(const gllmk_buffer *buf)
{
	return buf && buf->magic == CORE_BUFFER_MAGIC ? buf->size : 0;
}

/* A live buffer, and [offset, offset + size) inside it. */
static gllmk_status check_range(const char *fn, const char *name, const gllmk_buffer *buf, uint64_t offset,
				uint64_t size)
{
	uint64_t end;

	if (!buf)
		return core_error(GLLMK_E_NULL, "%s: %s is NULL", fn, name);
	if (buf->magic != CORE_BUFFER_MAGIC)
		return core_error(GLLMK_E_INVALID, "%s: %s is not a live buffer (freed, or not from gllmk_buffer_*)",
				  fn, name);
	if (buf->layout)
		return core_error(GLLMK_E_INVALID,
				  "%s: %s holds prepared weights in the plugin's own layout (gllmk_weights_prepare): "
				  "gllmk_dequantize reads them back", fn, name);
	if (__builtin_add_overflow(offset, size, &end))
		return core_error(GLLMK_E_OVERFLOW, "%s: %s offset %" PRIu64 " + size %" PRIu64 " overflows 64 bits",
				  fn, name, offset, size);
	if (end > buf->size)
		return core_error(GLLMK_E_BOUNDS,
				  "%s: %s bytes %" PRIu64 "..%" PRIu64 " run past its end (%" PRIu64 " bytes)", fn, name,
				  offset, end, buf->size);
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_buffer_write(gllmk_buffer *buf, uint64_t offset, const void *src, uint64_t size)
{
	const char *fn = "gllmk_buffer_write";
	gllmk_status st = check_range(fn, "buf", buf, offset, size);

	if (!st)
		st = core_check_ptr(fn, "src", src);
	if (st || size == 0)
		return st;
	return CORE_DISPATCH(buf->ctx, fn, buffer_write, buf->impl, offset, src, size);
}

GLLMK_API gllmk_status gllmk_buffer_read(gllmk_buffer *buf, uint64_t offset, void *dst, uint64_t size)
{
	const char *fn = "gllmk_buffer_read";
	gllmk_status st = check_range(fn, "buf", buf, offset, size);

	if (!st)
		st = core_check_ptr(fn, "dst", dst);
	if (st || size == 0)
		return st;
	return CORE_DISPATCH(buf->ctx, fn, buffer_read, buf->impl, offset, dst, size);
}

GLLMK_API gllmk_status gllmk_buffer_copy(gllmk_buffer *dst, uint64_t dst_offset, gllmk_buffer *src,
					  uint64_t src_offset, uint64_t size)
{
	const char *fn = "gllmk_buffer_copy";
	gllmk_status st = check_range(fn, "dst", dst, dst_offset, size);

	if (!st)
		st = check_range(fn, "src", src, src_offset, size);
	if (st)
		return st;
	if (dst->ctx != src->ctx)
		return core_error(GLLMK_E_CONTEXT, "%s: dst and src belong to different contexts", fn);
	if (dst == src && dst_offset < src_offset + size && src_offset < dst_offset + size)
		return core_error(GLLMK_E_ALIAS,
				  "%s: dst bytes %" PRIu64 "..%" PRIu64 " overlap src bytes %" PRIu64 "..%" PRIu64
				  " of the same buffer", fn, dst_offset, dst_offset + size, src_offset, src_offset + size);
	if (size == 0)
		return GLLMK_OK;
	return CORE_DISPATCH(dst->ctx, fn, buffer_copy, dst->impl, dst_offset, src->impl, src_offset, size);
}

/* ------------------------------------------------------ prepared weights */

/* w as gllmk_weights_prepare takes it: a weight dtype, [N, K] or [E, N, K],
 * rows and matrices packed (the plugin reads it as one run of rows). */
static gllmk_status check_prepare(gllmk_context *ctx, const char *fn, const gllmk_tensor *w, gllmk_buffer **out,
				  struct core_view *vw)
{
	gllmk_status st = core_check_ctx(fn, ctx);

	if (!st)
		st = core_check_ptr(fn, "out", out);
	if (st)
		return st;
	*out = NULL;
	st = core_view(ctx, fn, "w", w, CORE_IN, CORE_DT_ALL_BUT_I32, "f32, f16, bf16 or a quant dtype", vw);
	if (st)
		return st;
	if (w->ndim != 2 && w->ndim != 3)
		return core_error(GLLMK_E_SHAPE, "%s: w.ndim = %d but w must be [N, K] or [E, N, K]", fn, (int)w->ndim);
	if ((uint64_t)w->stride[w->ndim - 2] != vw->row_bytes)
		return core_error(GLLMK_E_SHAPE, "%s: w.stride[%d] = %" PRId64 " but w's rows must be packed (%" PRIu64
				  " bytes apart)", fn, w->ndim - 2, w->stride[w->ndim - 2], vw->row_bytes);
	if (w->ndim == 3 && (uint64_t)w->stride[0] != vw->row_bytes * (uint64_t)w->shape[1])
		return core_error(GLLMK_E_SHAPE, "%s: w.stride[0] = %" PRId64 " but w's matrices must be packed (%" PRIu64
				  " bytes apart)", fn, w->stride[0], vw->row_bytes * (uint64_t)w->shape[1]);
	return GLLMK_OK;
}

GLLMK_API gllmk_status gllmk_weights_prepare(gllmk_context *ctx, const gllmk_tensor *w, gllmk_buffer **out)
{
	const char *fn = "gllmk_weights_prepare";
	struct core_view vw;
	struct core_buffer *b;
	uint64_t size = 0;
	uint32_t layout = 0;
	void *impl = NULL;
	gllmk_status st = check_prepare(ctx, fn, w, out, &vw);

	if (st)
		return st;
	b = calloc(1, sizeof(*b));
	if (!b)
		return core_error(GLLMK_E_NO_MEMORY, "%s: no memory for the buffer record", fn);
	st = CORE_DISPATCH(ctx, fn, weights_prepare, w, &impl, &size, &layout);
	if (!st && (!layout || !size)) {
		if (ctx->d.buffer_free.fn)
			ctx->d.buffer_free.fn(ctx->d.buffer_free.state, impl);
		st = core_error(GLLMK_E_BACKEND, "%s: plugin '%s' prepared w with layout %u and %" PRIu64
				" bytes (both must be nonzero)", fn, ctx->plugin->name, (unsigned)layout, size);
	}
	if (st) {
		free(b);
		return st;
	}
	b->pub = (struct gllmk_buffer){ .impl = impl, .size = size, .ctx = ctx, .magic = CORE_BUFFER_MAGIC,
					.layout = layout };
	b->prepared = gllmk_tensor_make(&b->pub, 0, (gllmk_dtype)w->dtype, w->ndim, w->shape);
	buffer_link(ctx, b);
	*out = &b->pub;
	return GLLMK_OK;
}
