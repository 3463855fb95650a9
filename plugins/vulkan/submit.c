/* The command stream: operators are recorded into the current batch's
 * command buffer and submitted when the batch fills or at sync; nothing
 * waits per operator. Two batches alternate, so the host records one while
 * the device runs the other.
 *
 * Barriers: a dispatch or copy gets a global memory barrier before it only
 * when it reads a buffer written, or writes a buffer read or written, since
 * the last barrier (buffer granularity, tracked across batches: a barrier's
 * first scope covers earlier submissions too).
 *
 * The pipelines a dispatch binds are program.c's.
 */
#include <stdio.h>
#include <string.h>

#include "vk_plugin.h"

gllmk_status vk_fail(struct vk_ctx *c, const char *what, VkResult r)
{
	gllmk_status st = GLLMK_E_BACKEND;

	if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ||
	    r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL)
		st = GLLMK_E_NO_MEMORY;
	return c->host->set_error(st, "vulkan: %s: %s", what, vk_error_name(r));
}

static VkResult vk_batch_init(struct vk_ctx *c, struct vk_batch *b)
{
	const VkCommandBufferAllocateInfo cb = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = c->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	const VkFenceCreateInfo fence = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	const VkDescriptorPoolSize size = {
		.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.descriptorCount = VK_BATCH_SETS * VK_BINDINGS,
	};
	const VkDescriptorPoolCreateInfo pool = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
		.maxSets = VK_BATCH_SETS,
		.poolSizeCount = 1,
		.pPoolSizes = &size,
	};
	VkResult r = c->fn.vkAllocateCommandBuffers(c->dev, &cb, &b->cmd);

	if (r == VK_SUCCESS)
		r = c->fn.vkCreateFence(c->dev, &fence, NULL, &b->fence);
	if (r == VK_SUCCESS)
		r = c->fn.vkCreateDescriptorPool(c->dev, &pool, NULL, &b->pool);
	return r;
}

gllmk_status vk_stream_init(struct vk_ctx *c)
{
	const VkCommandPoolCreateInfo pool = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = c->queue_family,
	};
	VkResult r = c->fn.vkCreateCommandPool(c->dev, &pool, NULL, &c->cmd_pool);

	for (int i = 0; i < 2 && r == VK_SUCCESS; i++)
		r = vk_batch_init(c, &c->batch[i]);
	if (r != VK_SUCCESS)
		return vk_fail(c, "creating the command stream", r);
	gllmk_status st = vk_buf_create(c, 64, true, &c->status);
	if (!st)
		memset(c->status->map, 0, 64);
	return st ? st : vk_profile_init(c);
}

void vk_stream_destroy(struct vk_ctx *c)
{
	vk_profile_finish(c);
	for (int i = 0; i < 2; i++) {
		if (c->batch[i].fence)
			c->fn.vkDestroyFence(c->dev, c->batch[i].fence, NULL);
		if (c->batch[i].pool)
			c->fn.vkDestroyDescriptorPool(c->dev, c->batch[i].pool, NULL);
	}
	if (c->cmd_pool)
		c->fn.vkDestroyCommandPool(c->dev, c->cmd_pool, NULL);
	vk_buf_destroy(c, c->status);
	vk_buf_destroy(c, c->staging);
	vk_buf_destroy(c, c->scratch);
	vk_buf_destroy(c, c->codebooks);
}

/* ------------------------------------------------------------ batches */

static gllmk_status vk_wait(struct vk_ctx *c, struct vk_batch *b)
{
	VkResult r;

	if (!b->in_flight)
		return GLLMK_OK;
	r = c->fn.vkWaitForFences(c->dev, 1, &b->fence, VK_TRUE, UINT64_MAX);
	if (r != VK_SUCCESS)
		return vk_fail(c, "vkWaitForFences", r);
	b->in_flight = false;
	vk_profile_collect(c, b);
	if (b->seq > c->done_seq)
		c->done_seq = b->seq;
	r = c->fn.vkResetFences(c->dev, 1, &b->fence);
	return r == VK_SUCCESS ? GLLMK_OK : vk_fail(c, "vkResetFences", r);
}

static gllmk_status vk_begin(struct vk_ctx *c, struct vk_batch **out)
{
	struct vk_batch *b = &c->batch[c->cur];
	gllmk_status st;
	VkResult r;

	*out = b;
	if (b->recording)
		return GLLMK_OK;
	st = vk_wait(c, b);
	if (st)
		return st;
	r = c->fn.vkResetDescriptorPool(c->dev, b->pool, 0);
	if (r != VK_SUCCESS)
		return vk_fail(c, "vkResetDescriptorPool", r);
	const VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	r = c->fn.vkBeginCommandBuffer(b->cmd, &bi);
	if (r != VK_SUCCESS)
		return vk_fail(c, "vkBeginCommandBuffer", r);
	b->sets = 0;
	b->seq = ++c->next_seq;
	b->recording = true;
	vk_profile_begin(c, b);
	return GLLMK_OK;
}

static void vk_barrier(struct vk_ctx *c, VkCommandBuffer cmd, VkPipelineStageFlags dst_stage, VkAccessFlags dst)
{
	const VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = dst,
	};
	c->fn.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
				   dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
	c->hz.n_read = 0;
	c->hz.n_written = 0;
}

static gllmk_status vk_submit(struct vk_ctx *c)
{
	struct vk_batch *b = &c->batch[c->cur];
	VkResult r;

	if (!b->recording)
		return GLLMK_OK;
	/* make the batch's writes visible to the host's reads of mapped memory */
	vk_barrier(c, b->cmd, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
				      VK_PIPELINE_STAGE_TRANSFER_BIT,
		   VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
			   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
	b->recording = false;
	r = c->fn.vkEndCommandBuffer(b->cmd);
	if (r != VK_SUCCESS)
		return vk_fail(c, "vkEndCommandBuffer", r);
	const VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &b->cmd,
	};
	r = c->fn.vkQueueSubmit(c->queue, 1, &si, b->fence);
	if (r != VK_SUCCESS)
		return vk_fail(c, "vkQueueSubmit", r);
	b->in_flight = true;
	c->cur ^= 1;
	vk_profile_submit(c, false);
	return GLLMK_OK;
}

gllmk_status vk_drain(struct vk_ctx *c)
{
	gllmk_status st = vk_submit(c);

	if (c->batch[0].in_flight || c->batch[1].in_flight)
		vk_profile_submit(c, true);
	/* the older batch first: fences finish in submission order */
	if (!st)
		st = vk_wait(c, &c->batch[c->cur]);
	if (!st)
		st = vk_wait(c, &c->batch[c->cur ^ 1]);
	return st;
}

gllmk_status vk_finish(struct vk_ctx *c)
{
	gllmk_status st = vk_drain(c);
	volatile uint32_t *s = (volatile uint32_t *)c->status->map;

	if (st || !s[0])
		return st;
	uint32_t op = s[1], pos = s[2], limit = s[4];
	int32_t value = (int32_t)s[3];
	uint32_t slot = s[5];
	memset(c->status->map, 0, 64);
	if (op == 1)
		return c->host->set_error(GLLMK_E_BOUNDS, "gllmk_get_rows: ids[%u] = %d, table has %u rows", pos,
					  value, limit);
	if (op == 3)
		return c->host->set_error(GLLMK_E_BOUNDS,
					  "gllmk_attention_varlen: sequence %u: block id %d, k has %u blocks", pos, value,
					  limit);
	if (op == 5)
		return c->host->set_error(GLLMK_E_BOUNDS,
					  "gllmk_kv_store: slots[%u] = %d, cache has %u slots (-1 skips a row)", pos, value,
					  limit);
	if (op == 4)
		return c->host->set_error(GLLMK_E_BOUNDS,
					  "gllmk_matmul_id: ids[%u, %u] = %d (token %u, slot %u), w has %u experts", pos,
					  slot, value, pos, slot, limit);
	return c->host->set_error(GLLMK_E_BOUNDS, "gllmk_attention: block_table[%u] = %d, k has %u blocks", pos,
				  value, limit);
}

bool vk_buf_busy(const struct vk_ctx *c, const struct vk_buf *b)
{
	return b->last_use > c->done_seq;
}

bool vk_buf_pending_write(const struct vk_ctx *c, const struct vk_buf *b)
{
	return b->last_write > c->done_seq;
}

/* ------------------------------------------------------------ recording */

static bool vk_listed(const VkBuffer *set, uint32_t n, VkBuffer b)
{
	for (uint32_t i = 0; i < n; i++)
		if (set[i] == b)
			return true;
	return false;
}

static void vk_note(VkBuffer *set, uint32_t *n, VkBuffer b)
{
	if (!vk_listed(set, *n, b))
		set[(*n)++] = b;
}

/* Barrier if needed before a command touching bufs, then track them. */
static void vk_hazard(struct vk_ctx *c, VkCommandBuffer cmd, struct vk_buf *const *bufs, uint32_t n,
		      uint32_t writes)
{
	struct vk_hazards *h = &c->hz;
	bool need = h->n_read + n > VK_HAZARD_MAX || h->n_written + n > VK_HAZARD_MAX;

	for (uint32_t i = 0; i < n && !need; i++) {
		if (!bufs[i])
			continue;
		need = vk_listed(h->written, h->n_written, bufs[i]->buf) ||
		       ((writes >> i & 1) && vk_listed(h->read, h->n_read, bufs[i]->buf));
	}
	if (need)
		vk_barrier(c, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
			   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
				   VK_ACCESS_TRANSFER_WRITE_BIT);
	for (uint32_t i = 0; i < n; i++) {
		if (!bufs[i])
			continue;
		if (writes >> i & 1)
			vk_note(h->written, &h->n_written, bufs[i]->buf);
		else
			vk_note(h->read, &h->n_read, bufs[i]->buf);
	}
}

static void vk_mark(struct vk_buf *const *bufs, uint32_t n, uint32_t writes, uint64_t seq)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!bufs[i])
			continue;
		bufs[i]->last_use = seq;
		if (writes >> i & 1)
			bufs[i]->last_write = seq;
	}
}

/* One past the tensor's last byte (the core has checked it fits). */
static uint64_t vk_tensor_end(const gllmk_tensor *t)
{
	static const struct {
		uint16_t elems, bytes;
	} block[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, ...) [e] = { elems, bytes },
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
	};
	uint64_t qk = block[t->dtype].elems;
	uint64_t end = t->offset + (uint64_t)t->shape[t->ndim - 1] / qk * block[t->dtype].bytes;

	for (int d = 0; d < t->ndim - 1; d++)
		end += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->stride[d];
	return end;
}

uint32_t vk_bind(struct vk_ctx *c, struct vk_call *call, int slot, const gllmk_tensor *t, bool write)
{
	struct vk_buf *b = t->buf->impl;
	uint64_t base = 0;

	/* buffers beyond maxStorageBufferRange are bound from the tensor on;
	 * shaders address bytes in 32 bits */
	if (b->size > c->max_range) {
		base = t->offset & ~(c->bind_align - 1);
		uint64_t limit = c->max_range < UINT32_MAX ? c->max_range : UINT32_MAX;
		if (vk_tensor_end(t) - base > limit)
			call->too_big = t;
	}
	call->buf[slot] = b;
	call->base[slot] = base;
	if (write)
		call->writes |= 1u << slot;
	return (uint32_t)(t->offset - base);
}

void vk_bind_buf(struct vk_call *call, int slot, struct vk_buf *b, bool write)
{
	call->buf[slot] = b;
	call->base[slot] = 0;
	if (write)
		call->writes |= 1u << slot;
}

static VkDescriptorBufferInfo vk_binding(const struct vk_ctx *c, struct vk_buf *b, uint64_t base)
{
	uint64_t range = b->size - base;

	if (range > c->max_range)
		range = c->max_range & ~(uint64_t)3;
	return (VkDescriptorBufferInfo){ .buffer = b->buf, .offset = base, .range = range };
}

gllmk_status vk_dispatch(struct vk_ctx *c, enum vk_kernel k, struct vk_call *call, const void *push,
			 uint32_t push_bytes, uint64_t groups)
{
	VkDescriptorBufferInfo info[VK_BINDINGS];
	VkWriteDescriptorSet wr[VK_BINDINGS];
	struct vk_batch *b;
	VkDescriptorSet set;
	VkPipeline pipe = VK_NULL_HANDLE;
	gllmk_status st;
	VkResult r;

	if (call->too_big)
		return c->host->set_error(GLLMK_E_UNSUPPORTED,
					  "vulkan: %s: a tensor of %llu bytes is more than one storage buffer binding "
					  "holds on this device (maxStorageBufferRange %llu)",
					  vk_blobs[k].name,
					  (unsigned long long)(vk_tensor_end(call->too_big) - call->too_big->offset),
					  (unsigned long long)c->max_range);
	if (groups == 0)
		return GLLMK_OK;
	uint32_t gx = groups < 65535 ? (uint32_t)groups : 65535;
	uint64_t gy = (groups + gx - 1) / gx;
	if (gy > c->props.limits.maxComputeWorkGroupCount[1])
		return c->host->set_error(GLLMK_E_UNSUPPORTED, "vulkan: %s needs %llu workgroups, more than the device takes",
					  vk_blobs[k].name, (unsigned long long)groups);
	st = vk_pipeline(c, k, &pipe);
	if (!st)
		st = vk_begin(c, &b);
	if (!st && b->sets == VK_BATCH_SETS) {
		st = vk_submit(c);
		if (!st)
			st = vk_begin(c, &b);
	}
	if (st)
		return st;
	const VkDescriptorSetAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
		.descriptorPool = b->pool,
		.descriptorSetCount = 1,
		.pSetLayouts = &c->set_layout,
	};
	r = c->fn.vkAllocateDescriptorSets(c->dev, &ai, &set);
	if (r != VK_SUCCESS)
		return vk_fail(c, "vkAllocateDescriptorSets", r);
	b->sets++;
	call->buf[VK_STATUS_BINDING] = NULL;
	for (uint32_t i = 0; i < VK_BINDINGS; i++) {
		struct vk_buf *buf = call->buf[i] ? call->buf[i] : c->status;
		info[i] = vk_binding(c, buf, call->buf[i] ? call->base[i] : 0);
		wr[i] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = set,
			.dstBinding = i,
			.descriptorCount = 1,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.pBufferInfo = &info[i],
		};
	}
	c->fn.vkUpdateDescriptorSets(c->dev, VK_BINDINGS, wr, 0, NULL);
	vk_hazard(c, b->cmd, call->buf, VK_BINDINGS, call->writes);
	c->fn.vkCmdBindPipeline(b->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
	c->fn.vkCmdBindDescriptorSets(b->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c->layout, 0, 1, &set, 0, NULL);
	c->fn.vkCmdPushConstants(b->cmd, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
	c->fn.vkCmdDispatch(b->cmd, gx, (uint32_t)gy, 1);
	vk_profile_dispatch(c, b, k);
	vk_mark(call->buf, VK_BINDINGS, call->writes, b->seq);
	return GLLMK_OK;
}

gllmk_status vk_record_copy(struct vk_ctx *c, struct vk_buf *dst, uint64_t dst_off, struct vk_buf *src,
			    uint64_t src_off, uint64_t size)
{
	struct vk_buf *bufs[2] = { src, dst };
	struct vk_batch *b;
	gllmk_status st = vk_begin(c, &b);

	if (st)
		return st;
	vk_hazard(c, b->cmd, bufs, 2, 2);
	const VkBufferCopy region = { .srcOffset = src_off, .dstOffset = dst_off, .size = size };
	c->fn.vkCmdCopyBuffer(b->cmd, src->buf, dst->buf, 1, &region);
	vk_mark(bufs, 2, 2, b->seq);
	return GLLMK_OK;
}

gllmk_status vk_record_update(struct vk_ctx *c, struct vk_buf *dst, uint64_t off, const void *src, uint64_t size)
{
	struct vk_batch *b;
	gllmk_status st = vk_begin(c, &b);

	if (st)
		return st;
	vk_hazard(c, b->cmd, &dst, 1, 1);
	c->fn.vkCmdUpdateBuffer(b->cmd, dst->buf, off, size, src);
	vk_mark(&dst, 1, 1, b->seq);
	return GLLMK_OK;
}
