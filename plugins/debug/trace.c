/* trace: one line per operator call, written when it returns:
 *
 *   gllmk-debug: #3 add y=f32[4,8] a=f32[4,8] b=f32[1,8] 1.2 us OK
 *
 * The time is the plugin's slot alone (for a GPU plugin, the time to
 * enqueue), not the layer's checks. A failed call adds its status and the
 * message the plugin set.
 */
#include <stdio.h>

#include "debug.h"

void debug_trace(const struct debug_call *c)
{
	struct debug_ctx *d = c->d;
	char args[768], shape[96];
	size_t n = 0;
	int i;

	args[0] = '\0';
	for (i = 0; i < c->n_args && n < sizeof(args); i++) {
		if (c->user[i])
			debug_shape_str(d, c->user[i], shape, sizeof(shape));
		else
			snprintf(shape, sizeof(shape), "-");
		n += snprintf(args + n, sizeof(args) - n, " %s=%s", c->names[i], shape);
	}
	if (c->status == GLLMK_OK)
		debug_print(d, "#%llu %s%s %.1f us OK", (unsigned long long)c->number, debug_op_names[c->op], args,
			    c->ns / 1e3);
	else
		debug_print(d, "#%llu %s%s %.1f us %s: %s", (unsigned long long)c->number, debug_op_names[c->op], args,
			    c->ns / 1e3, d->api.status_string(c->status), d->api.last_error());
}
