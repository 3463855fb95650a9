/* gllmk-probe: Vulkan devices, seen through the loader opened at run time.
 *
 * libvulkan.so.1 is dlopen()ed, never linked, so the probe runs where no
 * loader is installed and says so. Reported per device: what the Vulkan
 * plugin chooses by (type, API version, a compute queue) and needs (16-bit
 * storage, shaderFloat16/Int8, 8-bit storage, the subgroup size).
 */
#include <dlfcn.h>
#include <string.h>

#include "probe_report.h"

const char *probe_api_state_name(enum probe_api_state s)
{
	switch (s) {
	case PROBE_API_SKIPPED: return "skipped";
	case PROBE_API_NOT_INSTALLED: return "not-installed";
	case PROBE_API_FAILED: return "failed";
	case PROBE_API_OK: return "ok";
	}
	return "failed";
}

#if !PROBE_HAVE_VULKAN_H

void probe_vulkan(struct probe_vulkan *vk, const char *loader)
{
	*vk = (struct probe_vulkan){ .state = PROBE_API_SKIPPED };
	probe_copy(vk->loader, loader);
	probe_copy(vk->error, "gllmk-probe was built without the Vulkan headers");
}

#else

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

struct vk_fns {
	PFN_vkGetInstanceProcAddr get_proc;
	PFN_vkDestroyInstance destroy_instance;
	PFN_vkEnumeratePhysicalDevices enum_devices;
	PFN_vkGetPhysicalDeviceProperties props;
	PFN_vkGetPhysicalDeviceProperties2 props2;     /* NULL on a 1.0 instance */
	PFN_vkGetPhysicalDeviceFeatures2 features2;    /* NULL on a 1.0 instance */
	PFN_vkGetPhysicalDeviceMemoryProperties memory;
	PFN_vkGetPhysicalDeviceQueueFamilyProperties queues;
	PFN_vkEnumerateDeviceExtensionProperties extensions;
};

static const char *vk_result_name(VkResult r)
{
	switch (r) {
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
	case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
	case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
	case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver (ICD) installed?)";
	default: return "a Vulkan error";
	}
}

static void version_string(char *out, size_t len, uint32_t v)
{
	snprintf(out, len, "%u.%u.%u", (v >> 22) & 0x7f, (v >> 12) & 0x3ff, v & 0xfff);
}

static const char *device_type(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
	default: return "other";
	}
}

static bool has_extension(const struct vk_fns *fn, VkPhysicalDevice pd, const char *name)
{
	VkExtensionProperties ext[512];
	uint32_t n = 512;
	VkResult r = fn->extensions(pd, NULL, &n, ext);

	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(ext[i].extensionName, name) == 0)
			return true;
	return false;
}

/* Properties and features beyond 1.0: core from 1.1/1.2 on, else through
 * the extension that introduced them, and only chained where supported. */
static void describe_v11(const struct vk_fns *fn, VkPhysicalDevice pd, uint32_t api, struct probe_vk_device *d)
{
	bool v12 = api >= VK_MAKE_VERSION(1, 2, 0);
	bool drv = v12 || has_extension(fn, pd, "VK_KHR_driver_properties");
	bool f16i8 = v12 || has_extension(fn, pd, "VK_KHR_shader_float16_int8");
	bool s8 = v12 || has_extension(fn, pd, "VK_KHR_8bit_storage");
	VkPhysicalDeviceDriverProperties driver = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES };
	VkPhysicalDeviceSubgroupProperties subgroup = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES };
	VkPhysicalDeviceProperties2 props = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &subgroup };
	VkPhysicalDevice8BitStorageFeatures storage8 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES };
	VkPhysicalDeviceShaderFloat16Int8Features float16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
	};
	VkPhysicalDevice16BitStorageFeatures storage16 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES };
	VkPhysicalDeviceFeatures2 features = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &storage16 };

	/* Chain only the structs this device knows. */
	if (drv)
		subgroup.pNext = &driver;
	if (s8)
		storage16.pNext = &storage8;
	if (f16i8) {
		float16.pNext = storage16.pNext;
		storage16.pNext = &float16;
	}
	fn->props2(pd, &props);
	fn->features2(pd, &features);
	d->subgroup_size = subgroup.subgroupSize;
	if (drv) {
		probe_copy(d->driver_name, driver.driverName);
		probe_copy(d->driver_info, driver.driverInfo);
	}
	d->storage_buffer_16bit = storage16.storageBuffer16BitAccess;
	d->shader_float16 = float16.shaderFloat16;
	d->shader_int8 = float16.shaderInt8;
	d->storage_buffer_8bit = storage8.storageBuffer8BitAccess;
}

static void describe(const struct vk_fns *fn, VkPhysicalDevice pd, struct probe_vk_device *d)
{
	VkPhysicalDeviceProperties p;
	VkPhysicalDeviceMemoryProperties mem;
	VkQueueFamilyProperties q[64];
	uint32_t nq = 64;

	fn->props(pd, &p);
	probe_copy(d->name, p.deviceName);
	probe_copy(d->type, device_type(p.deviceType));
	d->vendor_id = p.vendorID;
	d->device_id = p.deviceID;
	d->driver_version = p.driverVersion;
	version_string(d->api_version, sizeof(d->api_version), p.apiVersion);

	fn->memory(pd, &mem);
	for (uint32_t i = 0; i < mem.memoryHeapCount && i < PROBE_MAX_HEAPS; i++) {
		d->heaps[i].size = mem.memoryHeaps[i].size;
		d->heaps[i].device_local = mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
		d->n_heaps = i + 1;
	}
	fn->queues(pd, &nq, q);
	for (uint32_t i = 0; i < nq; i++)
		d->compute_queue |= (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0;

	if (fn->props2 && fn->features2 && p.apiVersion >= VK_MAKE_VERSION(1, 1, 0))
		describe_v11(fn, pd, p.apiVersion, d);
}

#define VK_LOAD(fn, inst, name) ((PFN_##name)(fn)->get_proc((inst), #name))

static void enumerate(struct probe_vulkan *vk, struct vk_fns *fn)
{
	PFN_vkEnumerateInstanceVersion inst_version = VK_LOAD(fn, NULL, vkEnumerateInstanceVersion);
	PFN_vkCreateInstance create = VK_LOAD(fn, NULL, vkCreateInstance);
	uint32_t version = VK_MAKE_VERSION(1, 0, 0);
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "gllmk-probe",
		.pEngineName = "gllmk",
	};
	VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
	VkPhysicalDevice pds[PROBE_MAX_DEVICES];
	uint32_t n = PROBE_MAX_DEVICES;
	VkInstance inst;
	VkResult r;

	if (inst_version)
		inst_version(&version);
	version_string(vk->instance_version, sizeof(vk->instance_version), version);
	app.apiVersion = version;
	if (!create) {
		probe_copy(vk->error, "the loader has no vkCreateInstance");
		return;
	}
	r = create(&ci, NULL, &inst);
	if (r != VK_SUCCESS) {
		probe_set(vk->error, "vkCreateInstance: %s (%d)", vk_result_name(r), (int)r);
		return;
	}
	fn->destroy_instance = VK_LOAD(fn, inst, vkDestroyInstance);
	fn->enum_devices = VK_LOAD(fn, inst, vkEnumeratePhysicalDevices);
	fn->props = VK_LOAD(fn, inst, vkGetPhysicalDeviceProperties);
	fn->memory = VK_LOAD(fn, inst, vkGetPhysicalDeviceMemoryProperties);
	fn->queues = VK_LOAD(fn, inst, vkGetPhysicalDeviceQueueFamilyProperties);
	fn->extensions = VK_LOAD(fn, inst, vkEnumerateDeviceExtensionProperties);
	if (version >= VK_MAKE_VERSION(1, 1, 0)) {
		fn->props2 = VK_LOAD(fn, inst, vkGetPhysicalDeviceProperties2);
		fn->features2 = VK_LOAD(fn, inst, vkGetPhysicalDeviceFeatures2);
	}
	r = fn->enum_devices(inst, &n, pds);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		probe_set(vk->error, "vkEnumeratePhysicalDevices: %s (%d)", vk_result_name(r), (int)r);
	} else {
		for (uint32_t i = 0; i < n; i++)
			describe(fn, pds[i], &vk->devices[i]);
		vk->n_devices = n;
		vk->state = PROBE_API_OK;
	}
	fn->destroy_instance(inst, NULL);
}

void probe_vulkan(struct probe_vulkan *vk, const char *loader)
{
	struct vk_fns fn = { 0 };
	void *lib;

	*vk = (struct probe_vulkan){ .state = PROBE_API_SKIPPED };
	probe_copy(vk->loader, loader);
	if (strcmp(loader, "none") == 0)
		return;
	/* Kept loaded: drivers are not all safe to unload. */
	lib = dlopen(loader, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		vk->state = PROBE_API_NOT_INSTALLED;
		probe_set(vk->error, "Vulkan loader not installed: %s", dlerror());
		return;
	}
	vk->state = PROBE_API_FAILED;
	fn.get_proc = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
	if (!fn.get_proc) {
		probe_set(vk->error, "%s has no vkGetInstanceProcAddr", loader);
		return;
	}
	enumerate(vk, &fn);
}

#endif
