/* The core's public API, as the layer uses it for compare (its own context
 * on cpu-generic) and for names in messages.
 *
 * The layer does not link libgllmk: LD_PRELOAD loads it before the program's
 * libraries, and the program may carry its own copy of the core. The core
 * that called the layer is the one whose host struct it received, so the
 * functions are looked up in the object that holds that struct.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "debug.h"

#define API_VERSION "GLLMK_1.0"

static int api_lookup(void *handle, void *slot, const char *name, char *reason, size_t reason_len)
{
	void *sym = dlvsym(handle, name, API_VERSION);

	if (!sym)
		sym = dlsym(handle, name);
	if (!sym) {
		snprintf(reason, reason_len, "debug: the core has no %s", name);
		return -1;
	}
	/* A function pointer from dlsym's void *: POSIX's way, through bytes. */
	memcpy(slot, &sym, sizeof(sym));
	return 0;
}

static void api_lookup_optional(void *handle, void *slot, const char *name)
{
	void *sym = dlsym(handle, name);

	memcpy(slot, &sym, sizeof(sym));
}

int debug_api_resolve(struct debug_api *api, const gllmk_host *host, char *reason, size_t reason_len)
{
	Dl_info info;
	int bad = 0;

	memset(api, 0, sizeof(*api));
	if (!dladdr(host, &info) || !info.dli_fname) {
		snprintf(reason, reason_len, "debug: cannot tell which library the core is");
		return -1;
	}
	/* Already loaded (it called us): this only takes a reference. */
	api->handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!api->handle) {
		snprintf(reason, reason_len, "debug: cannot reach the core %s: %s", info.dli_fname, dlerror());
		return -1;
	}
#define API_FN(fn) bad |= api_lookup(api->handle, &api->fn, "gllmk_" #fn, reason, reason_len);
	API_FN(open)
	API_FN(close)
	API_FN(buffer_alloc)
	API_FN(buffer_free)
	API_FN(buffer_write)
	API_FN(buffer_read)
	API_FN(last_error)
	API_FN(status_string)
	API_FN(dtype_name)
	API_FN(dtype_row_bytes)
#define API_OP(op, type) API_FN(op)
	GLLMK_OPS_V1_0(API_OP)
#undef API_OP
	/* A 1.0 core has none of 1.1's: those wrappers then only forward. */
#define API_OP_NEW(op, type) api_lookup_optional(api->handle, &api->op, "gllmk_" #op);
	GLLMK_OPS_V1_1(API_OP_NEW)
#undef API_OP_NEW
#undef API_FN
	if (bad) {
		debug_api_release(api);
		return -1;
	}
	return 0;
}

void debug_api_release(struct debug_api *api)
{
	if (api->handle)
		dlclose(api->handle);
	api->handle = NULL;
}
