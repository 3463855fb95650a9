/* stats: calls, failures, total and mean time per operator, printed when
 * the context closes (gllmk_close), one table per context. Times are the
 * plugin's slots alone, as trace shows them.
 */
#include "debug.h"

void debug_stats_add(struct debug_call *c)
{
	struct debug_op_stats *s = &c->d->stats[c->op];

	s->calls++;
	s->failed += c->status != GLLMK_OK;
	s->ns += c->ns;
}

void debug_stats_print(struct debug_ctx *d)
{
	uint64_t total_ns = 0;
	int op;

	debug_print(d, "stats: %llu operator calls over plugin '%s'", (unsigned long long)d->calls, d->next->name);
	debug_print(d, "stats: %-12s %10s %8s %14s %12s", "op", "calls", "failed", "total ms", "mean us");
	for (op = 0; op < DEBUG_OP_COUNT; op++) {
		const struct debug_op_stats *s = &d->stats[op];

		if (!s->calls)
			continue;
		total_ns += s->ns;
		debug_print(d, "stats: %-12s %10llu %8llu %14.3f %12.2f", debug_op_names[op],
			    (unsigned long long)s->calls, (unsigned long long)s->failed, s->ns / 1e6,
			    s->ns / 1e3 / s->calls);
	}
	debug_print(d, "stats: %-12s %10llu %8s %14.3f", "total", (unsigned long long)d->calls, "", total_ns / 1e6);
}
