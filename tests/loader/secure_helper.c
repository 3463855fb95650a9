/* secure_helper LIBGLLMK PLUGIN_DIR FLAGS
 *
 * Opens a context on PLUGIN_DIR with options.flags = FLAGS and prints one
 * line: "secure=<AT_SECURE> plugin=<name>" or
 * "secure=<AT_SECURE> status=<n> error=<gllmk_last_error()>".
 *
 * test_loader runs it with GLLMK_PLUGIN set, once as built and once as a
 * setgid copy (AT_SECURE = 1, where secure_getenv refuses). It dlopens the
 * core by absolute path instead of linking it: a setgid process ignores
 * LD_LIBRARY_PATH and $ORIGIN run paths, so a linked build-tree core would
 * not be found.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "gllmk.h"

struct core_api {
	gllmk_status (*open)(const gllmk_options *opts, gllmk_context **ctx);
	void (*close)(gllmk_context *ctx);
	const char *(*plugin)(const gllmk_context *ctx);
	const char *(*last_error)(void);
};

static int core_bind(void *lib, struct core_api *api)
{
	*(void **)&api->open = dlsym(lib, "gllmk_open");
	*(void **)&api->close = dlsym(lib, "gllmk_close");
	*(void **)&api->plugin = dlsym(lib, "gllmk_context_plugin");
	*(void **)&api->last_error = dlsym(lib, "gllmk_last_error");
	return api->open && api->close && api->plugin && api->last_error;
}

int main(int argc, char **argv)
{
	struct core_api api;
	gllmk_context *ctx = NULL;
	gllmk_options opts;
	gllmk_status st;
	void *lib;

	if (argc != 4) {
		fprintf(stderr, "usage: %s LIBGLLMK PLUGIN_DIR FLAGS\n", argv[0]);
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib || !core_bind(lib, &api)) {
		printf("secure=%lu error=cannot load %s: %s\n", getauxval(AT_SECURE), argv[1], dlerror());
		return 2;
	}
	opts = (gllmk_options){
		.struct_size = sizeof(opts),
		.flags = (uint32_t)strtoul(argv[3], NULL, 0),
		.plugin_dir = argv[2],
	};
	st = api.open(&opts, &ctx);
	printf("secure=%lu ", getauxval(AT_SECURE));
	if (st == GLLMK_OK)
		printf("plugin=%s\n", api.plugin(ctx));
	else
		printf("status=%d error=%s\n", (int)st, api.last_error());
	api.close(ctx);
	return 0;
}
