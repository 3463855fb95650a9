/* GLLMK_VULKAN_PROFILE=1: the device's time per kernel, printed to stderr
 * when the context closes. A batch starts with a timestamp and each
 * dispatch writes one when it completes (bottom of pipe); the difference
 * from the one before is charged to the dispatch, so the barrier it waited
 * behind and the copies recorded before it count as its time, and the gaps
 * between batches (the host recording or waiting) count nowhere. Off by
 * default: it costs a timestamp write per dispatch and a query read per
 * batch. Devices whose compute queue takes no timestamps print why and run
 * unprofiled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_plugin.h"

#define VK_PROFILE_QUERIES (VK_BATCH_SETS + 1) /* a batch's start and each dispatch */

struct vk_profile {
	VkQueryPool pool;                  /* batch i's queries from i · VK_PROFILE_QUERIES */
	uint32_t n[2];                     /* queries written in each batch */
	uint16_t kernel[2][VK_BATCH_SETS]; /* the kernel of each dispatch */
	double ns_per_tick;
	uint64_t mask;                     /* the queue's timestampValidBits */
	uint64_t calls[VK_KERNEL_COUNT];
	double ns[VK_KERNEL_COUNT];
	uint64_t submits, drains;          /* batches submitted; host waits for all of them */
};

static uint32_t vk_timestamp_bits(const struct vk_ctx *c)
{
	VkQueueFamilyProperties q[16];
	uint32_t n = 16;

	c->fn.vkGetPhysicalDeviceQueueFamilyProperties(c->pdev, &n, q);
	return c->queue_family < n ? q[c->queue_family].timestampValidBits : 0;
}

gllmk_status vk_profile_init(struct vk_ctx *c)
{
	const char *env = secure_getenv("GLLMK_VULKAN_PROFILE");
	uint32_t bits;

	if (!env || strcmp(env, "1") != 0)
		return GLLMK_OK;
	bits = vk_timestamp_bits(c);
	if (bits == 0 || c->props.limits.timestampPeriod <= 0) {
		fprintf(stderr, "gllmk vulkan: GLLMK_VULKAN_PROFILE=1: %s's compute queue takes no timestamps; "
				"not profiling\n", c->props.deviceName);
		return GLLMK_OK;
	}
	struct vk_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return c->host->set_error(GLLMK_E_NO_MEMORY, "vulkan: no host memory for the profile");
	const VkQueryPoolCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		.queryCount = 2 * VK_PROFILE_QUERIES,
	};
	VkResult r = c->fn.vkCreateQueryPool(c->dev, &info, NULL, &p->pool);
	if (r != VK_SUCCESS) {
		free(p);
		return vk_fail(c, "vkCreateQueryPool (GLLMK_VULKAN_PROFILE)", r);
	}
	p->mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
	p->ns_per_tick = c->props.limits.timestampPeriod;
	c->prof = p;
	return GLLMK_OK;
}

void vk_profile_begin(struct vk_ctx *c, struct vk_batch *b)
{
	struct vk_profile *p = c->prof;
	uint32_t i = (uint32_t)(b - c->batch);

	if (!p)
		return;
	c->fn.vkCmdResetQueryPool(b->cmd, p->pool, i * VK_PROFILE_QUERIES, VK_PROFILE_QUERIES);
	c->fn.vkCmdWriteTimestamp(b->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, p->pool, i * VK_PROFILE_QUERIES);
	p->n[i] = 1;
}

void vk_profile_dispatch(struct vk_ctx *c, struct vk_batch *b, enum vk_kernel k)
{
	struct vk_profile *p = c->prof;
	uint32_t i = (uint32_t)(b - c->batch);

	if (!p || p->n[i] == 0 || p->n[i] >= VK_PROFILE_QUERIES)
		return;
	p->kernel[i][p->n[i] - 1] = (uint16_t)k;
	c->fn.vkCmdWriteTimestamp(b->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->pool,
				  i * VK_PROFILE_QUERIES + p->n[i]);
	p->n[i]++;
}

/* After batch b's fence: charge its dispatches. */
void vk_profile_collect(struct vk_ctx *c, struct vk_batch *b)
{
	struct vk_profile *p = c->prof;
	uint32_t i = (uint32_t)(b - c->batch);
	uint64_t ts[VK_PROFILE_QUERIES];

	if (!p)
		return;
	uint32_t n = p->n[i];
	p->n[i] = 0;
	if (n < 2 || c->fn.vkGetQueryPoolResults(c->dev, p->pool, i * VK_PROFILE_QUERIES, n, sizeof(ts), ts,
						 sizeof(ts[0]), VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
		return;
	for (uint32_t j = 1; j < n; j++) {
		uint16_t k = p->kernel[i][j - 1];
		p->calls[k]++;
		p->ns[k] += (double)((ts[j] - ts[j - 1]) & p->mask) * p->ns_per_tick;
	}
}

/* A batch submitted; drain: the host then waits for every batch out (a
 * read, an index check that reads back, a sync), the device idling until
 * the host records again. */
void vk_profile_submit(struct vk_ctx *c, bool drain)
{
	struct vk_profile *p = c->prof;

	if (p) {
		p->submits += !drain;
		p->drains += drain;
	}
}

static void vk_profile_print(const struct vk_ctx *c, const struct vk_profile *p)
{
	double total = 0;
	bool done[VK_KERNEL_COUNT] = { false };

	for (int k = 0; k < VK_KERNEL_COUNT; k++)
		total += p->ns[k];
	fprintf(stderr, "gllmk vulkan profile (GLLMK_VULKAN_PROFILE=1), %s: device time %.3f ms\n",
		c->props.deviceName, total * 1e-6);
	fprintf(stderr, "  %llu batches submitted, %llu host waits for the device\n", (unsigned long long)p->submits,
		(unsigned long long)p->drains);
	fprintf(stderr, "  %-32s %10s %12s %10s %7s\n", "kernel", "calls", "ms", "us/call", "share");
	for (;;) { /* heaviest first */
		int best = -1;
		for (int k = 0; k < VK_KERNEL_COUNT; k++)
			if (!done[k] && p->calls[k] && (best < 0 || p->ns[k] > p->ns[best]))
				best = k;
		if (best < 0)
			break;
		done[best] = true;
		fprintf(stderr, "  %-32s %10llu %12.3f %10.2f %6.1f%%\n", vk_blobs[best].name,
			(unsigned long long)p->calls[best], p->ns[best] * 1e-6, p->ns[best] * 1e-3 / (double)p->calls[best],
			total > 0 ? 100.0 * p->ns[best] / total : 0.0);
	}
}

/* At close: the batches still out are waited for (vk_drain collects
 * them), then the table. */
void vk_profile_finish(struct vk_ctx *c)
{
	struct vk_profile *p = c->prof;

	if (!p)
		return;
	vk_drain(c);
	vk_profile_print(c, p);
	c->fn.vkDestroyQueryPool(c->dev, p->pool, NULL);
	free(p);
	c->prof = NULL;
}
