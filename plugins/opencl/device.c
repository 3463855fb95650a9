/* The ICD loader (dlopened: the plugin loads where none is installed), the
 * choice of a device that can take one of the embedded programs, and a
 * context's open and close. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_plugin.h"

int ocl_api_open(struct ocl_api *api, char *reason, size_t reason_len)
{
	memset(api, 0, sizeof(*api));
	api->dl = dlopen(OCL_LOADER, RTLD_NOW | RTLD_LOCAL);
	if (!api->dl) {
		snprintf(reason, reason_len, "OpenCL ICD loader (" OCL_LOADER ") not installed");
		return 0;
	}
#define OCL_RESOLVE(name, req)                                                                   \
	api->name = (__typeof__(name) *)dlsym(api->dl, #name);                                  \
	if (!api->name && req) {                                                                 \
		snprintf(reason, reason_len, OCL_LOADER " lacks %s (an OpenCL 1.2 loader is needed)", \
			 #name);                                                                 \
		ocl_api_close(api);                                                      \
		return 0;                                                                        \
	}
	OCL_FUNCS(OCL_RESOLVE)
#undef OCL_RESOLVE
	return 1;
}

/* The loader stays mapped (the handle's reference is dropped without
 * dlclose): ocl-icd and the drivers it loads keep their platform lists and
 * threads for the life of the process, and unloading them under those
 * leaks them and risks the threads, as ABI-LESSONS.md says of plugins. */
void ocl_api_close(struct ocl_api *api)
{
	memset(api, 0, sizeof(*api));
}

const char *ocl_path_name(enum ocl_program_path path)
{
	switch (path) {
	case OCL_PATH_SPIRV:
		return "SPIR-V (IL)";
	case OCL_PATH_SPIR12:
		return "SPIR 1.2";
	default:
		return "none";
	}
}

int ocl_device_is_cpu(const struct ocl_device *dev)
{
	return !(dev->type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR));
}

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Which embedded program this device takes. Both modules use 64-bit
 * addressing (spir64), so a 32-bit device takes neither. */
static enum ocl_program_path program_path(const struct ocl_api *api, cl_device_id id)
{
	char text[4096] = "";
	cl_uint bits = 0;

	if (api->clGetDeviceInfo(id, CL_DEVICE_ADDRESS_BITS, sizeof(bits), &bits, NULL) != CL_SUCCESS || bits != 64)
		return OCL_PATH_NONE;
	if (api->clCreateProgramWithIL &&
	    api->clGetDeviceInfo(id, CL_DEVICE_IL_VERSION, sizeof(text) - 1, text, NULL) == CL_SUCCESS &&
	    strstr(text, "SPIR-V"))
		return OCL_PATH_SPIRV;
	memset(text, 0, sizeof(text));
	if (api->clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, sizeof(text) - 1, text, NULL) == CL_SUCCESS &&
	    has_word(text, "cl_khr_spir"))
		return OCL_PATH_SPIR12;
	return OCL_PATH_NONE;
}

/* A string query truncated to len: the full value may be longer than
 * what the report keeps, and a short buffer would fail the query. */
static void info_str(const struct ocl_api *api, cl_device_id id, cl_device_info param, char *out, size_t len)
{
	char full[1024] = "";

	api->clGetDeviceInfo(id, param, sizeof(full) - 1, full, NULL);
	snprintf(out, len, "%s", full);
}

static void read_device(const struct ocl_api *api, cl_platform_id plat, cl_device_id id, struct ocl_device *d)
{
	memset(d, 0, sizeof(*d));
	d->platform = plat;
	d->id = id;
	api->clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof(d->type), &d->type, NULL);
	api->clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(d->memory), &d->memory, NULL);
	info_str(api, id, CL_DEVICE_NAME, d->name, sizeof(d->name));
	info_str(api, id, CL_DEVICE_VENDOR, d->vendor, sizeof(d->vendor));
	info_str(api, id, CL_DEVICE_VERSION, d->version, sizeof(d->version));
	d->path = program_path(api, id);
}

/* Appends "name; " of a refused device to the reason, as far as it fits. */
static void note_refused(char *list, size_t len, const struct ocl_device *d)
{
	size_t used = strlen(list);

	if (used + 1 < len)
		snprintf(list + used, len - used, "%s%s", used ? "; " : "", d->name);
}

int ocl_choose_device(const struct ocl_api *api, struct ocl_device *dev, char *reason, size_t reason_len)
{
	cl_platform_id plats[16];
	cl_uint np = 0;
	char refused[160] = "";
	int found = 0;
	cl_int err = api->clGetPlatformIDs(16, plats, &np);

	if (err != CL_SUCCESS || np == 0) {
		snprintf(reason, reason_len, "no OpenCL platform (clGetPlatformIDs: %s)",
			 err == CL_SUCCESS ? "0 platforms" : ocl_error_name(err));
		return 0;
	}
	for (cl_uint p = 0; p < np && p < 16; p++) {
		cl_device_id ids[16];
		cl_uint nd = 0;

		if (api->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, ids, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint i = 0; i < nd && i < 16; i++) {
			struct ocl_device d;

			read_device(api, plats[p], ids[i], &d);
			if (d.path == OCL_PATH_NONE) {
				note_refused(refused, sizeof(refused), &d);
				continue;
			}
			/* GPUs and accelerators first; the first CPU device otherwise */
			if (!found || (ocl_device_is_cpu(dev) && !ocl_device_is_cpu(&d))) {
				*dev = d;
				found = 1;
			}
		}
	}
	if (!found)
		snprintf(reason, reason_len,
			 "no OpenCL device takes a precompiled program: SPIR-V needs CL_DEVICE_IL_VERSION, SPIR 1.2 "
			 "needs cl_khr_spir, both a 64-bit device (%s)",
			 refused[0] ? refused : "no devices");
	return found;
}

static const char *type_name(cl_device_type t)
{
	if (t & CL_DEVICE_TYPE_GPU)
		return "GPU";
	if (t & CL_DEVICE_TYPE_ACCELERATOR)
		return "accelerator";
	if (t & CL_DEVICE_TYPE_CPU)
		return "CPU";
	return "other";
}

void ocl_describe(const struct ocl_device *dev, char *out, size_t len)
{
	snprintf(out, len, "%s (%s %s, %s, %llu MiB, program: %s)", dev->name, dev->vendor, type_name(dev->type),
		 dev->version, (unsigned long long)(dev->memory >> 20), ocl_path_name(dev->path));
}

const char *ocl_error_name(cl_int err)
{
	switch (err) {
#define CASE(e) \
	case e: \
		return #e;
	CASE(CL_SUCCESS)
	CASE(CL_DEVICE_NOT_FOUND)
	CASE(CL_DEVICE_NOT_AVAILABLE)
	CASE(CL_COMPILER_NOT_AVAILABLE)
	CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
	CASE(CL_OUT_OF_RESOURCES)
	CASE(CL_OUT_OF_HOST_MEMORY)
	CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
	CASE(CL_MEM_COPY_OVERLAP)
	CASE(CL_IMAGE_FORMAT_MISMATCH)
	CASE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
	CASE(CL_BUILD_PROGRAM_FAILURE)
	CASE(CL_MAP_FAILURE)
	CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
	CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
	CASE(CL_COMPILE_PROGRAM_FAILURE)
	CASE(CL_LINKER_NOT_AVAILABLE)
	CASE(CL_LINK_PROGRAM_FAILURE)
	CASE(CL_DEVICE_PARTITION_FAILED)
	CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
	CASE(CL_INVALID_VALUE)
	CASE(CL_INVALID_DEVICE_TYPE)
	CASE(CL_INVALID_PLATFORM)
	CASE(CL_INVALID_DEVICE)
	CASE(CL_INVALID_CONTEXT)
	CASE(CL_INVALID_QUEUE_PROPERTIES)
	CASE(CL_INVALID_COMMAND_QUEUE)
	CASE(CL_INVALID_HOST_PTR)
	CASE(CL_INVALID_MEM_OBJECT)
	CASE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
	CASE(CL_INVALID_IMAGE_SIZE)
	CASE(CL_INVALID_SAMPLER)
	CASE(CL_INVALID_BINARY)
	CASE(CL_INVALID_BUILD_OPTIONS)
	CASE(CL_INVALID_PROGRAM)
	CASE(CL_INVALID_PROGRAM_EXECUTABLE)
	CASE(CL_INVALID_KERNEL_NAME)
	CASE(CL_INVALID_KERNEL_DEFINITION)
	CASE(CL_INVALID_KERNEL)
	CASE(CL_INVALID_ARG_INDEX)
	CASE(CL_INVALID_ARG_VALUE)
	CASE(CL_INVALID_ARG_SIZE)
	CASE(CL_INVALID_KERNEL_ARGS)
	CASE(CL_INVALID_WORK_DIMENSION)
	CASE(CL_INVALID_WORK_GROUP_SIZE)
	CASE(CL_INVALID_WORK_ITEM_SIZE)
	CASE(CL_INVALID_GLOBAL_OFFSET)
	CASE(CL_INVALID_EVENT_WAIT_LIST)
	CASE(CL_INVALID_EVENT)
	CASE(CL_INVALID_OPERATION)
	CASE(CL_INVALID_GL_OBJECT)
	CASE(CL_INVALID_BUFFER_SIZE)
	CASE(CL_INVALID_MIP_LEVEL)
	CASE(CL_INVALID_GLOBAL_WORK_SIZE)
	CASE(CL_INVALID_PROPERTY)
	CASE(CL_INVALID_IMAGE_DESCRIPTOR)
	CASE(CL_INVALID_COMPILER_OPTIONS)
	CASE(CL_INVALID_LINKER_OPTIONS)
	CASE(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef CASE
	case -1001: /* cl_khr_icd: the loader found no platform */
		return "CL_PLATFORM_NOT_FOUND_KHR";
	default:
		return "CL_UNKNOWN_ERROR";
	}
}

/* ------------------------------------------------------ open, close */

static void release(struct ocl_ctx *s)
{
	ocl_program_release(s);
	if (s->status)
		s->api.clReleaseMemObject(s->status);
	if (s->queue)
		s->api.clReleaseCommandQueue(s->queue);
	if (s->ctx)
		s->api.clReleaseContext(s->ctx);
	ocl_api_close(&s->api);
	free(s);
}

static gllmk_status open_device(struct ocl_ctx *s, int by_name, char *reason, size_t reason_len)
{
	cl_context_properties props[3] = { CL_CONTEXT_PLATFORM, 0, 0 };
	cl_int err;

	if (!ocl_choose_device(&s->api, &s->dev, reason, reason_len))
		return GLLMK_E_NO_PLUGIN;
	props[1] = (cl_context_properties)s->dev.platform;
	if (ocl_device_is_cpu(&s->dev) && !by_name) {
		snprintf(reason, reason_len, "%s is a CPU OpenCL device: used only when asked for by name", s->dev.name);
		return GLLMK_E_NO_PLUGIN;
	}
	s->ctx = s->api.clCreateContext(props, 1, &s->dev.id, NULL, NULL, &err);
	if (err != CL_SUCCESS) {
		snprintf(reason, reason_len, "clCreateContext(%s): %s", s->dev.name, ocl_error_name(err));
		return GLLMK_E_BACKEND;
	}
	s->queue = s->api.clCreateCommandQueue(s->ctx, s->dev.id, 0, &err);
	if (err != CL_SUCCESS) {
		snprintf(reason, reason_len, "clCreateCommandQueue(%s): %s", s->dev.name, ocl_error_name(err));
		return GLLMK_E_BACKEND;
	}
	s->status = s->api.clCreateBuffer(s->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
					  OCL_STATUS_WORDS * sizeof(int32_t), (int32_t[OCL_STATUS_WORDS]){ 0 }, &err);
	if (err != CL_SUCCESS) {
		snprintf(reason, reason_len, "clCreateBuffer (status, %s): %s", s->dev.name, ocl_error_name(err));
		return GLLMK_E_BACKEND;
	}
	return ocl_program_load(s, reason, reason_len) == CL_SUCCESS ? GLLMK_OK : GLLMK_E_BACKEND;
}

gllmk_status ocl_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct ocl_ctx *s = calloc(1, sizeof(*s));
	gllmk_status st;

	if (!s) {
		snprintf(reason, reason_len, "out of host memory");
		return GLLMK_E_NO_MEMORY;
	}
	s->host = args->host;
	if (!ocl_api_open(&s->api, reason, reason_len)) {
		free(s);
		return GLLMK_E_NO_PLUGIN;
	}
	st = open_device(s, args->by_name, reason, reason_len);
	if (st != GLLMK_OK) {
		release(s);
		return st;
	}
	*state = s;
	return GLLMK_OK;
}

void ocl_close(void *st)
{
	struct ocl_ctx *s = st;

	s->api.clFinish(s->queue);
	release(s);
}
