/* gllmk-probe: OpenCL platforms and devices, through the ICD loader opened
 * at run time.
 *
 * libOpenCL.so.1 is dlopen()ed, never linked, so the probe runs where no
 * loader is installed and says so. Reported per device: what the OpenCL
 * plugin chooses by (type, version, memory) and how it can take the plugin's
 * precompiled programs: an IL version (SPIR-V) or cl_khr_spir (SPIR 1.2).
 */
#include <dlfcn.h>
#include <string.h>

#include "probe_report.h"

#if !PROBE_HAVE_CL_H

void probe_opencl(struct probe_opencl *cl, const char *loader)
{
	*cl = (struct probe_opencl){ .state = PROBE_API_SKIPPED };
	probe_copy(cl->loader, loader);
	probe_copy(cl->error, "gllmk-probe was built without the OpenCL headers");
}

#else

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

/* The ICD entry points, typed here since the library is not linked. */
struct cl_fns {
	cl_int (*get_platforms)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*platform_info)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
	cl_int (*get_devices)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*device_info)(cl_device_id, cl_device_info, size_t, void *, size_t *);
};

static const char *cl_error_name(cl_int e)
{
	switch (e) {
	case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
	case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
	case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
	case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
	case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
	case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
	case CL_PLATFORM_NOT_FOUND_KHR: return "CL_PLATFORM_NOT_FOUND_KHR";
	default: return "an OpenCL error";
	}
}

static const char *device_type(cl_device_type t)
{
	if (t & CL_DEVICE_TYPE_GPU)
		return "gpu";
	if (t & CL_DEVICE_TYPE_ACCELERATOR)
		return "accelerator";
	if (t & CL_DEVICE_TYPE_CPU)
		return "cpu";
	if (t & CL_DEVICE_TYPE_CUSTOM)
		return "custom";
	return "other";
}

/* A string property; "" when the device does not know it (IL before 2.1). */
static void info_string(const struct cl_fns *fn, cl_device_id dev, cl_device_info what, char *out, size_t len)
{
	out[0] = '\0';
	if (fn->device_info(dev, what, len - 1, out, NULL) != CL_SUCCESS)
		out[0] = '\0';
	out[len - 1] = '\0';
}

static bool has_extension(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

static void describe(const struct cl_fns *fn, cl_device_id dev, struct probe_cl_device *d)
{
	char ext[16384];
	cl_device_type type = 0;
	cl_ulong mem = 0;
	cl_uint units = 0;

	info_string(fn, dev, CL_DEVICE_NAME, d->name, sizeof(d->name));
	info_string(fn, dev, CL_DEVICE_VENDOR, d->vendor, sizeof(d->vendor));
	info_string(fn, dev, CL_DEVICE_VERSION, d->version, sizeof(d->version));
	info_string(fn, dev, CL_DRIVER_VERSION, d->driver_version, sizeof(d->driver_version));
	info_string(fn, dev, CL_DEVICE_IL_VERSION, d->il_version, sizeof(d->il_version));
	info_string(fn, dev, CL_DEVICE_EXTENSIONS, ext, sizeof(ext));
	fn->device_info(dev, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	fn->device_info(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
	fn->device_info(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL);
	probe_copy(d->type, device_type(type));
	d->global_mem = mem;
	d->compute_units = units;
	d->spir = has_extension(ext, "cl_khr_spir");
	d->fp16 = has_extension(ext, "cl_khr_fp16");
	d->il_program = has_extension(ext, "cl_khr_il_program");
}

static void describe_platform(const struct cl_fns *fn, cl_platform_id id, struct probe_cl_platform *p)
{
	cl_device_id devs[PROBE_MAX_DEVICES];
	cl_uint n = 0;
	cl_int e;

	fn->platform_info(id, CL_PLATFORM_NAME, sizeof(p->name) - 1, p->name, NULL);
	fn->platform_info(id, CL_PLATFORM_VENDOR, sizeof(p->vendor) - 1, p->vendor, NULL);
	fn->platform_info(id, CL_PLATFORM_VERSION, sizeof(p->version) - 1, p->version, NULL);
	e = fn->get_devices(id, CL_DEVICE_TYPE_ALL, PROBE_MAX_DEVICES, devs, &n);
	if (e != CL_SUCCESS) {
		probe_set(p->error, "clGetDeviceIDs: %s (%d)", cl_error_name(e), (int)e);
		return;
	}
	if (n > PROBE_MAX_DEVICES)
		n = PROBE_MAX_DEVICES;
	for (cl_uint i = 0; i < n; i++)
		describe(fn, devs[i], &p->devices[i]);
	p->n_devices = n;
}

static void enumerate(struct probe_opencl *cl, const struct cl_fns *fn)
{
	cl_platform_id ids[PROBE_MAX_PLATFORMS];
	cl_uint n = 0;
	cl_int e = fn->get_platforms(PROBE_MAX_PLATFORMS, ids, &n);

	if (e == CL_PLATFORM_NOT_FOUND_KHR) {
		cl->state = PROBE_API_OK;
		probe_copy(cl->error, "the ICD loader found no OpenCL platform (no ICD installed)");
		return;
	}
	if (e != CL_SUCCESS) {
		probe_set(cl->error, "clGetPlatformIDs: %s (%d)", cl_error_name(e), (int)e);
		return;
	}
	if (n > PROBE_MAX_PLATFORMS)
		n = PROBE_MAX_PLATFORMS;
	for (cl_uint i = 0; i < n; i++)
		describe_platform(fn, ids[i], &cl->platforms[i]);
	cl->n_platforms = n;
	cl->state = PROBE_API_OK;
}

void probe_opencl(struct probe_opencl *cl, const char *loader)
{
	struct cl_fns fn;
	void *lib;

	*cl = (struct probe_opencl){ .state = PROBE_API_SKIPPED };
	probe_copy(cl->loader, loader);
	if (strcmp(loader, "none") == 0)
		return;
	/* Kept loaded: ICDs are not all safe to unload. */
	lib = dlopen(loader, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		cl->state = PROBE_API_NOT_INSTALLED;
		probe_set(cl->error, "OpenCL ICD loader not installed: %s", dlerror());
		return;
	}
	cl->state = PROBE_API_FAILED;
	*(void **)&fn.get_platforms = dlsym(lib, "clGetPlatformIDs");
	*(void **)&fn.platform_info = dlsym(lib, "clGetPlatformInfo");
	*(void **)&fn.get_devices = dlsym(lib, "clGetDeviceIDs");
	*(void **)&fn.device_info = dlsym(lib, "clGetDeviceInfo");
	if (!fn.get_platforms || !fn.platform_info || !fn.get_devices || !fn.device_info) {
		probe_set(cl->error, "%s lacks the OpenCL 1.0 platform and device queries", loader);
		return;
	}
	enumerate(cl, &fn);
}

#endif
