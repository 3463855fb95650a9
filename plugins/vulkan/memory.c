/* Buffers: one VkBuffer with its own allocation each.
 *
 * Unified devices (integrated GPUs, lavapipe) keep every buffer in
 * host-visible memory, mapped for life: write and read are memcpy. Discrete
 * GPUs keep buffers device-local; write and read go through the context's
 * staging buffer. Ordering with recorded operators: a small word-aligned
 * write into a busy or device-local buffer is recorded into the stream
 * (vkCmdUpdateBuffer, no wait); other writes into a buffer no pending
 * operator uses are a plain copy (through staging, waited for), into a busy
 * one after draining the stream. A read always drains the stream
 * (gllmk_buffer_read waits for every earlier operator).
 *
 * With GLLMK_VULKAN_TEST_STAGING=1 (tests) device buffers are never mapped,
 * so a unified device (lavapipe) runs the discrete-GPU paths: staging,
 * vkCmdUpdateBuffer, index checks left to the shaders.
 */
#include <stdlib.h>
#include <string.h>

#include "vk_plugin.h"

static int vk_memory_type(const struct vk_ctx *c, uint32_t allowed, VkMemoryPropertyFlags need,
			  VkMemoryPropertyFlags want)
{
	int fallback = -1;

	for (uint32_t i = 0; i < c->mem_props.memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = c->mem_props.memoryTypes[i].propertyFlags;
		if (!(allowed & (1u << i)) || (f & need) != need)
			continue;
		if ((f & want) == want)
			return (int)i;
		if (fallback < 0)
			fallback = (int)i;
	}
	return fallback;
}

static int vk_pick_memory(const struct vk_ctx *c, uint32_t allowed, bool host_visible)
{
	const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
	const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	int t;

	if (host_visible)
		return vk_memory_type(c, allowed, hv | coherent, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
	if (c->unified) {
		t = vk_memory_type(c, allowed, local | hv, coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
		if (t >= 0)
			return t;
	}
	t = vk_memory_type(c, allowed, local, 0);
	return t >= 0 ? t : vk_memory_type(c, allowed, 0, 0);
}

static gllmk_status vk_memory_fail(struct vk_ctx *c, const char *what, VkResult r, uint64_t size)
{
	if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
		return c->host->set_error(GLLMK_E_NO_MEMORY, "vulkan: %s of %llu bytes: %s", what,
					  (unsigned long long)size, vk_error_name(r));
	return vk_fail(c, what, r);
}

gllmk_status vk_buf_create(struct vk_ctx *c, uint64_t size, bool host_visible, struct vk_buf **out)
{
	VkMemoryRequirements req;
	struct vk_buf *b;
	VkResult r;
	int type;

	b = calloc(1, sizeof(*b));
	if (!b)
		return c->host->set_error(GLLMK_E_NO_MEMORY, "vulkan: no host memory for a buffer record");
	/* whole words, so shaders never read a word the buffer half-owns */
	b->size = (size + 15) & ~(uint64_t)15;
	const VkBufferCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = b->size,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	r = c->fn.vkCreateBuffer(c->dev, &info, NULL, &b->buf);
	if (r != VK_SUCCESS) {
		free(b);
		return vk_memory_fail(c, "vkCreateBuffer", r, size);
	}
	c->fn.vkGetBufferMemoryRequirements(c->dev, b->buf, &req);
	type = vk_pick_memory(c, req.memoryTypeBits, host_visible);
	if (type < 0) {
		vk_buf_destroy(c, b);
		return c->host->set_error(GLLMK_E_BACKEND, "vulkan: no memory type fits a storage buffer");
	}
	const VkMemoryAllocateInfo alloc = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = (uint32_t)type,
	};
	r = c->fn.vkAllocateMemory(c->dev, &alloc, NULL, &b->mem);
	if (r == VK_SUCCESS)
		r = c->fn.vkBindBufferMemory(c->dev, b->buf, b->mem, 0);
	VkMemoryPropertyFlags f = c->mem_props.memoryTypes[type].propertyFlags;
	if (c->test_staging && !host_visible)
		f &= ~VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
	if (r == VK_SUCCESS && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
		void *p;
		r = c->fn.vkMapMemory(c->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &p);
		b->map = p;
		b->coherent = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	}
	if (r != VK_SUCCESS) {
		vk_buf_destroy(c, b);
		return vk_memory_fail(c, "vkAllocateMemory", r, size);
	}
	*out = b;
	return GLLMK_OK;
}

void vk_buf_destroy(struct vk_ctx *c, struct vk_buf *b)
{
	if (!b)
		return;
	if (b->buf)
		c->fn.vkDestroyBuffer(c->dev, b->buf, NULL);
	if (b->mem)
		c->fn.vkFreeMemory(c->dev, b->mem, NULL); /* unmaps */
	free(b);
}

gllmk_status vk_buffer_alloc(void *st, uint64_t size, void **impl)
{
	return vk_buf_create(st, size, false, (struct vk_buf **)impl);
}

void vk_buffer_free(void *st, void *impl)
{
	struct vk_ctx *c = st;
	struct vk_buf *b = impl;

	/* the device may still use it: let it finish first */
	if (vk_buf_busy(c, b))
		vk_drain(c);
	vk_buf_destroy(c, b);
}

static VkMappedMemoryRange vk_range(const struct vk_buf *b)
{
	return (VkMappedMemoryRange){
		.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
		.memory = b->mem,
		.size = VK_WHOLE_SIZE,
	};
}

/* The staging buffer, made on first use (unified devices never need it). */
static gllmk_status vk_staging(struct vk_ctx *c)
{
	return c->staging ? GLLMK_OK : vk_buf_create(c, VK_STAGING_BYTES, true, &c->staging);
}

static gllmk_status vk_write_staged(struct vk_ctx *c, struct vk_buf *b, uint64_t off, const uint8_t *src,
				    uint64_t size)
{
	gllmk_status st = vk_staging(c);

	while (!st && size) {
		uint64_t n = size < VK_STAGING_BYTES ? size : VK_STAGING_BYTES;
		memcpy(c->staging->map, src, n);
		if (!c->staging->coherent) {
			VkMappedMemoryRange r = vk_range(c->staging);
			c->fn.vkFlushMappedMemoryRanges(c->dev, 1, &r);
		}
		st = vk_record_copy(c, b, off, c->staging, 0, n);
		if (!st)
			st = vk_finish(c);
		off += n;
		src += n;
		size -= n;
	}
	return st;
}

gllmk_status vk_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size)
{
	struct vk_ctx *c = st;
	struct vk_buf *b = impl;
	gllmk_status s;

	if (size == 0)
		return GLLMK_OK;
	/* Small writes go into the stream (vkCmdUpdateBuffer) where the host
	 * cannot just copy: into a buffer pending ops use, or a device-local
	 * one, which staging would copy and wait for (a decode step's token id
	 * and position: a host wait each on a discrete GPU). */
	if (size <= VK_UPDATE_MAX && off % 4 == 0 && size % 4 == 0 && (vk_buf_busy(c, b) || !b->map))
		return vk_record_update(c, b, off, src, size);
	if (vk_buf_busy(c, b)) {
		s = vk_finish(c);
		if (s)
			return s;
	}
	if (!b->map)
		return vk_write_staged(c, b, off, src, size);
	memcpy(b->map + off, src, size);
	if (!b->coherent) {
		VkMappedMemoryRange r = vk_range(b);
		c->fn.vkFlushMappedMemoryRanges(c->dev, 1, &r);
	}
	return GLLMK_OK;
}

/* The staging buffer's first n bytes, after the device wrote them. */
static void staging_out(struct vk_ctx *c, void *out, uint64_t n)
{
	if (!c->staging->coherent) {
		VkMappedMemoryRange r = vk_range(c->staging);
		c->fn.vkInvalidateMappedMemoryRanges(c->dev, 1, &r);
	}
	memcpy(out, c->staging->map, n);
}

gllmk_status vk_read_raw(struct vk_ctx *c, struct vk_buf *b, uint64_t off, void *dst, uint64_t size)
{
	uint8_t *out = dst;
	gllmk_status s = vk_buf_pending_write(c, b) ? vk_drain(c) : GLLMK_OK;

	if (s)
		return s;
	if (b->map) {
		if (!b->coherent) {
			VkMappedMemoryRange r = vk_range(b);
			c->fn.vkInvalidateMappedMemoryRanges(c->dev, 1, &r);
		}
		memcpy(out, b->map + off, size);
		return GLLMK_OK;
	}
	s = vk_staging(c);
	while (!s && size) {
		uint64_t n = size < VK_STAGING_BYTES ? size : VK_STAGING_BYTES;
		s = vk_record_copy(c, c->staging, 0, b, off, n);
		if (!s)
			s = vk_drain(c);
		if (s)
			break;
		staging_out(c, out, n);
		off += n;
		out += n;
		size -= n;
	}
	return s;
}

/* A device-local buffer's first staging copy is recorded behind the pending
 * work, so that one wait covers both (a decode step's sampled id waited
 * twice on a discrete GPU: for the step, then for the copy). */
gllmk_status vk_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size)
{
	struct vk_ctx *c = st;
	struct vk_buf *b = impl;
	const uint64_t n = size < VK_STAGING_BYTES ? size : VK_STAGING_BYTES;
	gllmk_status s;

	if (b->map || !size) {
		s = vk_finish(c);
		return s ? s : vk_read_raw(c, b, off, dst, size);
	}
	s = vk_staging(c);
	if (!s)
		s = vk_record_copy(c, c->staging, 0, b, off, n);
	if (!s)
		s = vk_finish(c);
	if (s)
		return s;
	staging_out(c, dst, n);
	return n == size ? GLLMK_OK : vk_read_raw(c, b, off + n, (uint8_t *)dst + n, size - n);
}

gllmk_status vk_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size)
{
	return size ? vk_record_copy(st, dst, dst_off, src, src_off, size) : GLLMK_OK;
}

gllmk_status vk_sync(void *st)
{
	return vk_finish(st);
}
