/* The Vulkan entry points the plugin uses, as X-macro lists. libvulkan is
 * never linked: device.c opens it with dlopen and resolves these through
 * vkGetInstanceProcAddr / vkGetDeviceProcAddr into struct vk_fns. */
#ifndef GLLMK_VK_FUNCS_H
#define GLLMK_VK_FUNCS_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* Resolved with a NULL instance. */
#define VK_GLOBAL_FUNCS(X)                      \
	X(vkCreateInstance)                     \
	X(vkEnumerateInstanceVersion)

/* Resolved with the instance. */
#define VK_INSTANCE_FUNCS(X)                    \
	X(vkDestroyInstance)                    \
	X(vkEnumeratePhysicalDevices)           \
	X(vkGetPhysicalDeviceProperties)        \
	X(vkGetPhysicalDeviceProperties2)       \
	X(vkGetPhysicalDeviceQueueFamilyProperties) \
	X(vkGetPhysicalDeviceMemoryProperties)  \
	X(vkCreateDevice)                       \
	X(vkGetDeviceProcAddr)

/* Resolved with the device. */
#define VK_DEVICE_FUNCS(X)                      \
	X(vkDestroyDevice)                      \
	X(vkGetDeviceQueue)                     \
	X(vkCreateBuffer)                       \
	X(vkDestroyBuffer)                      \
	X(vkGetBufferMemoryRequirements)        \
	X(vkAllocateMemory)                     \
	X(vkFreeMemory)                         \
	X(vkBindBufferMemory)                   \
	X(vkMapMemory)                          \
	X(vkFlushMappedMemoryRanges)            \
	X(vkInvalidateMappedMemoryRanges)       \
	X(vkCreateCommandPool)                  \
	X(vkDestroyCommandPool)                 \
	X(vkAllocateCommandBuffers)             \
	X(vkBeginCommandBuffer)                 \
	X(vkEndCommandBuffer)                   \
	X(vkQueueSubmit)                        \
	X(vkCreateFence)                        \
	X(vkDestroyFence)                       \
	X(vkWaitForFences)                      \
	X(vkResetFences)                        \
	X(vkCmdPipelineBarrier)                 \
	X(vkCmdCopyBuffer)                      \
	X(vkCmdUpdateBuffer)                    \
	X(vkCmdBindPipeline)                    \
	X(vkCmdBindDescriptorSets)              \
	X(vkCmdPushConstants)                   \
	X(vkCmdDispatch)                        \
	X(vkCreateShaderModule)                 \
	X(vkDestroyShaderModule)                \
	X(vkCreateComputePipelines)             \
	X(vkDestroyPipeline)                    \
	X(vkCreatePipelineLayout)               \
	X(vkDestroyPipelineLayout)              \
	X(vkCreateDescriptorSetLayout)          \
	X(vkDestroyDescriptorSetLayout)         \
	X(vkCreateDescriptorPool)               \
	X(vkDestroyDescriptorPool)              \
	X(vkResetDescriptorPool)                \
	X(vkAllocateDescriptorSets)             \
	X(vkUpdateDescriptorSets)               \
	X(vkCreatePipelineCache)                \
	X(vkDestroyPipelineCache)               \
	X(vkDeviceWaitIdle)                      \
	X(vkCreateQueryPool)                    \
	X(vkDestroyQueryPool)                   \
	X(vkCmdResetQueryPool)                  \
	X(vkCmdWriteTimestamp)                  \
	X(vkGetQueryPoolResults)

#define VK_FN_FIELD(name) PFN_##name name;
struct vk_fns {
	PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
	VK_GLOBAL_FUNCS(VK_FN_FIELD)
	VK_INSTANCE_FUNCS(VK_FN_FIELD)
	VK_DEVICE_FUNCS(VK_FN_FIELD)
};

#endif
