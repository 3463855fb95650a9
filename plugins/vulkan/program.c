/* The embedded kernels made ready to dispatch: one pipeline per SPIR-V
 * kernel of kernels/vulkan/kernels.list (vk_blobs[k]), all with the same
 * layout (8 storage buffers, 128 bytes of push constants), created on first
 * use through the context's VkPipelineCache and kept until close; there are
 * ~110 kernels but a model uses a handful. The OpenCL plugin's program.c
 * is the same step for its one program.
 */
#include "vk_plugin.h"

static VkResult vk_layouts_create(struct vk_ctx *c)
{
	VkDescriptorSetLayoutBinding bind[VK_BINDINGS];
	VkResult r;

	for (uint32_t i = 0; i < VK_BINDINGS; i++)
		bind[i] = (VkDescriptorSetLayoutBinding){
			.binding = i,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	const VkDescriptorSetLayoutCreateInfo set = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = VK_BINDINGS,
		.pBindings = bind,
	};
	r = c->fn.vkCreateDescriptorSetLayout(c->dev, &set, NULL, &c->set_layout);
	if (r != VK_SUCCESS)
		return r;
	const VkPushConstantRange push = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = VK_PUSH_BYTES,
	};
	const VkPipelineLayoutCreateInfo layout = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &c->set_layout,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &push,
	};
	r = c->fn.vkCreatePipelineLayout(c->dev, &layout, NULL, &c->layout);
	if (r != VK_SUCCESS)
		return r;
	const VkPipelineCacheCreateInfo cache = { .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO };
	return c->fn.vkCreatePipelineCache(c->dev, &cache, NULL, &c->cache);
}

gllmk_status vk_program_load(struct vk_ctx *c)
{
	VkResult r = vk_layouts_create(c);

	return r == VK_SUCCESS ? GLLMK_OK : vk_fail(c, "creating the pipeline layout", r);
}

void vk_program_release(struct vk_ctx *c)
{
	for (int k = 0; k < VK_KERNEL_COUNT; k++)
		if (c->pipes[k])
			c->fn.vkDestroyPipeline(c->dev, c->pipes[k], NULL);
	if (c->cache)
		c->fn.vkDestroyPipelineCache(c->dev, c->cache, NULL);
	if (c->layout)
		c->fn.vkDestroyPipelineLayout(c->dev, c->layout, NULL);
	if (c->set_layout)
		c->fn.vkDestroyDescriptorSetLayout(c->dev, c->set_layout, NULL);
}

gllmk_status vk_pipeline(struct vk_ctx *c, enum vk_kernel k, VkPipeline *out)
{
	VkShaderModule mod;
	VkResult r;

	if (c->pipes[k]) {
		*out = c->pipes[k];
		return GLLMK_OK;
	}
	const VkShaderModuleCreateInfo mi = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = vk_blobs[k].bytes,
		.pCode = vk_blobs[k].words,
	};
	r = c->fn.vkCreateShaderModule(c->dev, &mi, NULL, &mod);
	if (r != VK_SUCCESS)
		return vk_fail(c, "vkCreateShaderModule", r);
	const VkComputePipelineCreateInfo pi = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = mod,
			.pName = "main",
		},
		.layout = c->layout,
	};
	r = c->fn.vkCreateComputePipelines(c->dev, c->cache, 1, &pi, NULL, &c->pipes[k]);
	c->fn.vkDestroyShaderModule(c->dev, mod, NULL);
	if (r != VK_SUCCESS) {
		c->pipes[k] = VK_NULL_HANDLE;
		return c->host->set_error(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
						  ? GLLMK_E_NO_MEMORY
						  : GLLMK_E_BACKEND,
					  "vulkan: vkCreateComputePipelines (%s): %s", vk_blobs[k].name,
					  vk_error_name(r));
	}
	*out = c->pipes[k];
	return GLLMK_OK;
}
