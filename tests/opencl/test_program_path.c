/* Opens the opencl plugin by name and checks what the probe reported: the
 * program came in precompiled, as SPIR-V (IL) or SPIR 1.2 bitcode, never as
 * source. Skipped (77) where no OpenCL device can run the plugin.
 *   test_program_path <plugin dir> */
#include <stdio.h>
#include <string.h>

#include "gllmk.h"

#define SKIP 77

static const gllmk_plugin_report *find(const gllmk_report *r, const char *name)
{
	for (size_t i = 0; i < r->count; i++)
		if (strcmp(r->plugins[i].name, name) == 0)
			return &r->plugins[i];
	return NULL;
}

int main(int argc, char **argv)
{
	gllmk_options opts = {
		.struct_size = sizeof(opts),
		.flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_NO_LAYERS,
		.plugins = "opencl",
		.plugin_dir = argc > 1 ? argv[1] : NULL,
	};
	gllmk_context *ctx = NULL;
	const gllmk_plugin_report *p;
	gllmk_status st;
	int ok;

	st = gllmk_open(&opts, &ctx);
	if (st != GLLMK_OK) {
		printf("SKIP: the opencl plugin cannot run here: %s\n", gllmk_last_error());
		return SKIP;
	}
	p = find(gllmk_context_report(ctx), "opencl");
	ok = p && (strstr(p->device, "program: SPIR-V (IL)") || strstr(p->device, "program: SPIR 1.2"));
	printf("%s: opencl device: %s\n", ok ? "ok" : "FAIL", p ? p->device : "(no report)");
	gllmk_close(ctx);
	return ok ? 0 : 1;
}
