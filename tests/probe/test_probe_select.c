/* Prints the plugin gllmk_open(NULL) selects in this process, so the probe's
 * test can check that gllmk-probe reports the same one (check_probe.py). */
#include <stdio.h>

#include "gllmk.h"

int main(void)
{
	gllmk_context *ctx;
	gllmk_status st = gllmk_open(NULL, &ctx);

	if (st != GLLMK_OK) {
		fprintf(stderr, "gllmk_open(NULL): %s: %s\n", gllmk_status_string(st), gllmk_last_error());
		return 1;
	}
	printf("%s\n", gllmk_context_plugin(ctx));
	gllmk_close(ctx);
	return 0;
}
