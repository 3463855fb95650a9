/* The Vulkan loader, the instance and the choice of device.
 *
 * libvulkan.so.1 is opened with dlopen at probe/open time, never linked, so
 * the plugin loads on a machine without a Vulkan loader and says so in its
 * probe. The handle is opened once per process and kept.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_plugin.h"

static VkResult vk_instance_create(struct vk_fns *fn, PFN_vkGetInstanceProcAddr gipa, VkInstance *out);

/* The process-wide part, made once (pthread_once) and kept for the life of
 * the process: the loader handle and one VkInstance that the probe and
 * every context share. Creating an instance makes the loader open every
 * installed driver (~70 ms on a machine with lavapipe and three Mesa
 * drivers), so doing it once halves the time to the first operator. */
struct vk_process {
	void *lib;
	struct vk_fns fn;        /* global and instance functions */
	VkInstance instance;
	char why[GLLMK_PROBE_TEXT];
};

static struct vk_process vk_proc;
static pthread_once_t vk_proc_once = PTHREAD_ONCE_INIT;

static void vk_process_init(void)
{
	struct vk_process *p = &vk_proc;
	PFN_vkGetInstanceProcAddr gipa;
	VkResult r;

	p->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!p->lib) {
		snprintf(p->why, sizeof(p->why), "Vulkan loader (libvulkan.so.1) not installed");
		return;
	}
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(p->lib, "vkGetInstanceProcAddr");
	if (!gipa) {
		snprintf(p->why, sizeof(p->why), "libvulkan.so.1 has no vkGetInstanceProcAddr");
		return;
	}
	r = vk_instance_create(&p->fn, gipa, &p->instance);
	if (r != VK_SUCCESS) {
		snprintf(p->why, sizeof(p->why), "vkCreateInstance (Vulkan 1.1): %s%s", vk_error_name(r),
			 r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan 1.1 loader or driver)" : "");
		p->instance = VK_NULL_HANDLE;
	}
}

bool vk_process_instance(struct vk_fns *fn, VkInstance *inst, char *why, size_t why_len)
{
	pthread_once(&vk_proc_once, vk_process_init);
	if (!vk_proc.instance) {
		snprintf(why, why_len, "%s", vk_proc.why);
		return false;
	}
	*fn = vk_proc.fn;
	*inst = vk_proc.instance;
	return true;
}

const char *vk_error_name(VkResult r)
{
	switch (r) {
#define VK_RESULT_CASE(x) case x: return #x;
	VK_RESULT_CASE(VK_SUCCESS)
	VK_RESULT_CASE(VK_NOT_READY)
	VK_RESULT_CASE(VK_TIMEOUT)
	VK_RESULT_CASE(VK_INCOMPLETE)
	VK_RESULT_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
	VK_RESULT_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
	VK_RESULT_CASE(VK_ERROR_INITIALIZATION_FAILED)
	VK_RESULT_CASE(VK_ERROR_DEVICE_LOST)
	VK_RESULT_CASE(VK_ERROR_MEMORY_MAP_FAILED)
	VK_RESULT_CASE(VK_ERROR_LAYER_NOT_PRESENT)
	VK_RESULT_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
	VK_RESULT_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
	VK_RESULT_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
	VK_RESULT_CASE(VK_ERROR_TOO_MANY_OBJECTS)
	VK_RESULT_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
	VK_RESULT_CASE(VK_ERROR_FRAGMENTED_POOL)
	VK_RESULT_CASE(VK_ERROR_UNKNOWN)
	VK_RESULT_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
#undef VK_RESULT_CASE
	default:
		return "VkResult (unnamed)";
	}
}

const char *vk_device_type_name(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
		return "discrete GPU";
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return "integrated GPU";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return "virtual GPU";
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return "CPU";
	default:
		return "other device";
	}
}

static VkResult vk_instance_create(struct vk_fns *fn, PFN_vkGetInstanceProcAddr gipa, VkInstance *out)
{
	uint32_t version = VK_API_VERSION_1_0;
	VkResult r;

	fn->vkGetInstanceProcAddr = gipa;
#define VK_LOAD_GLOBAL(name) fn->name = (PFN_##name)gipa(NULL, #name);
	VK_GLOBAL_FUNCS(VK_LOAD_GLOBAL)
#undef VK_LOAD_GLOBAL
	if (!fn->vkCreateInstance)
		return VK_ERROR_INITIALIZATION_FAILED;
	if (fn->vkEnumerateInstanceVersion)
		fn->vkEnumerateInstanceVersion(&version);
	if (version < VK_API_VERSION_1_1)
		return VK_ERROR_INCOMPATIBLE_DRIVER;

	const VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "gllmk",
		.pEngineName = "gllmk",
		.apiVersion = VK_API_VERSION_1_1,
	};
	const VkInstanceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	r = fn->vkCreateInstance(&info, NULL, out);
	if (r != VK_SUCCESS)
		return r;
#define VK_LOAD_INSTANCE(name) fn->name = (PFN_##name)gipa(*out, #name);
	VK_INSTANCE_FUNCS(VK_LOAD_INSTANCE)
#undef VK_LOAD_INSTANCE
	return VK_SUCCESS;
}

static int vk_type_rank(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
		return 4;
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return 3;
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return 2;
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return 0;
	default:
		return 1;
	}
}

static bool vk_compute_family(const struct vk_fns *fn, VkPhysicalDevice pd, uint32_t *family)
{
	VkQueueFamilyProperties q[16];
	uint32_t n = 16;

	fn->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
	/* a compute queue without graphics first: it is often the freer one */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			bool compute = q[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
			bool graphics = q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
			if (compute && (pass == 1 || !graphics)) {
				*family = i;
				return true;
			}
		}
	}
	return false;
}

static void vk_describe(const struct vk_fns *fn, struct vk_choice *c)
{
	VkPhysicalDeviceMemoryProperties mp;
	VkPhysicalDeviceDriverProperties drv = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
	};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = c->props.apiVersion >= VK_API_VERSION_1_2 ? &drv : NULL,
	};

	fn->vkGetPhysicalDeviceMemoryProperties(c->pdev, &mp);
	c->memory = 0;
	for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
		if ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) && mp.memoryHeaps[i].size > c->memory)
			c->memory = mp.memoryHeaps[i].size;
	fn->vkGetPhysicalDeviceProperties2(c->pdev, &p2);
	if (p2.pNext)
		snprintf(c->driver, sizeof(c->driver), "%.31s %.31s", drv.driverName, drv.driverInfo);
	else
		snprintf(c->driver, sizeof(c->driver), "driver 0x%x", c->props.driverVersion);
}

bool vk_choose_device(const struct vk_fns *fn, VkInstance inst, struct vk_choice *c, char *why, size_t why_len)
{
	VkPhysicalDevice pd[16];
	uint32_t n = 16;
	int best_rank = -1;

	if (fn->vkEnumeratePhysicalDevices(inst, &n, pd) < 0 || n == 0) {
		snprintf(why, why_len, "the Vulkan loader found no device (no driver installed)");
		return false;
	}
	snprintf(why, why_len, "no Vulkan device offers Vulkan >= 1.1 and a compute queue");
	for (uint32_t i = 0; i < n; i++) {
		VkPhysicalDeviceProperties props;
		uint32_t family;

		fn->vkGetPhysicalDeviceProperties(pd[i], &props);
		if (props.apiVersion < VK_API_VERSION_1_1 || !vk_compute_family(fn, pd[i], &family))
			continue;
		if (vk_type_rank(props.deviceType) <= best_rank)
			continue;
		best_rank = vk_type_rank(props.deviceType);
		c->pdev = pd[i];
		c->props = props;
		c->queue_family = family;
	}
	if (best_rank < 0)
		return false;
	vk_describe(fn, c);
	return true;
}

static gllmk_status vk_device_create(struct vk_ctx *c, char *reason, size_t reason_len)
{
	const float prio = 1.0f;
	const VkDeviceQueueCreateInfo q = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = c->queue_family,
		.queueCount = 1,
		.pQueuePriorities = &prio,
	};
	const VkDeviceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &q,
	};
	VkResult r = c->fn.vkCreateDevice(c->pdev, &info, NULL, &c->dev);

	if (r != VK_SUCCESS) {
		snprintf(reason, reason_len, "vkCreateDevice: %s", vk_error_name(r));
		return r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? GLLMK_E_NO_MEMORY
											 : GLLMK_E_BACKEND;
	}
#define VK_LOAD_DEVICE(name) c->fn.name = (PFN_##name)c->fn.vkGetDeviceProcAddr(c->dev, #name);
	VK_DEVICE_FUNCS(VK_LOAD_DEVICE)
#undef VK_LOAD_DEVICE
	c->fn.vkGetDeviceQueue(c->dev, c->queue_family, 0, &c->queue);
	return GLLMK_OK;
}

/* Subgroup size when compute shaders have Vulkan 1.1 subgroup arithmetic
 * (subgroupAdd), else 0: the matvec kernels then reduce through shared
 * memory. GLLMK_VULKAN_SUBGROUP=0 forces the shared-memory variant, so one
 * device can test both. */
static uint32_t vk_subgroup_size(const struct vk_ctx *c)
{
	const VkSubgroupFeatureFlags need = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
	VkPhysicalDeviceSubgroupProperties sg = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
	};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &sg,
	};
	const char *env = secure_getenv("GLLMK_VULKAN_SUBGROUP");

	if (env && strcmp(env, "0") == 0)
		return 0;
	c->fn.vkGetPhysicalDeviceProperties2(c->pdev, &p2);
	if (!(sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) || (sg.supportedOperations & need) != need)
		return 0;
	return sg.subgroupSize;
}

/* Unified memory: on integrated GPUs and CPU devices every buffer lives in
 * host-visible memory and write/read are memcpy; discrete GPUs keep
 * buffers device-local and go through a staging buffer. */
static bool vk_unified(const struct vk_ctx *c)
{
	VkPhysicalDeviceType t = c->props.deviceType;

	if (t != VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU && t != VK_PHYSICAL_DEVICE_TYPE_CPU)
		return false;
	for (uint32_t i = 0; i < c->mem_props.memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = c->mem_props.memoryTypes[i].propertyFlags;
		if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
			return true;
	}
	return false;
}

gllmk_status vk_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct vk_choice choice;
	struct vk_ctx *c;
	gllmk_status st;

	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(reason, reason_len, "no memory for the Vulkan context");
		return GLLMK_E_NO_MEMORY;
	}
	c->host = args->host;
	st = GLLMK_E_NO_PLUGIN;
	if (!vk_process_instance(&c->fn, &c->instance, reason, reason_len) ||
	    !vk_choose_device(&c->fn, c->instance, &choice, reason, reason_len))
		goto fail;
	if (choice.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && !args->by_name) {
		snprintf(reason, reason_len, "%.200s is a CPU device: used only when the vulkan plugin is named",
			 choice.props.deviceName);
		goto fail;
	}
	c->pdev = choice.pdev;
	c->props = choice.props;
	c->queue_family = choice.queue_family;
	c->max_range = c->props.limits.maxStorageBufferRange;
	c->bind_align = c->props.limits.minStorageBufferOffsetAlignment;
	c->fn.vkGetPhysicalDeviceMemoryProperties(c->pdev, &c->mem_props);
	c->unified = vk_unified(c);
	c->subgroup_size = vk_subgroup_size(c);
	/* GLLMK_VULKAN_ATTN_SPLIT=0: attention never splits the tokens over
	 * workgroups (ops_attention.c), to measure what splitting gives */
	const char *split_env = secure_getenv("GLLMK_VULKAN_ATTN_SPLIT");
	c->attn_split = !(split_env && strcmp(split_env, "0") == 0);
	/* GLLMK_VULKAN_TEST_STAGING=1: device buffers are never mapped, so
	 * lavapipe runs a discrete GPU's memory paths (memory.c; run-tests) */
	const char *staging_env = secure_getenv("GLLMK_VULKAN_TEST_STAGING");
	c->test_staging = staging_env && strcmp(staging_env, "1") == 0;
	st = vk_device_create(c, reason, reason_len);
	if (st)
		goto fail;
	st = vk_program_load(c);
	if (!st)
		st = vk_stream_init(c);
	if (st) {
		snprintf(reason, reason_len, "setting up the pipelines and the command stream failed");
		vk_close(c);
		return st;
	}
	*state = c;
	return GLLMK_OK;
fail:
	free(c);
	return st;
}

void vk_close(void *state)
{
	struct vk_ctx *c = state;

	if (!c)
		return;
	if (c->dev) {
		c->fn.vkDeviceWaitIdle(c->dev);
		vk_stream_destroy(c);
		vk_program_release(c);
		c->fn.vkDestroyDevice(c->dev, NULL);
	}
	free(c);  /* the instance is the process's (vk_process_instance) */
}
