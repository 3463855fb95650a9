/* check: guard bytes around every buffer the layer allocates, verified
 * after each operator on the buffers it touched, and outputs scanned for
 * NaN/Inf; the first offender is named with its op and call number.
 *
 * To put guards around buffers the layer owns the buffer slots (SPEC/ABI.md
 * §9 rule 4): its handle is a struct debug_buffer whose inner buffer of the
 * next plugin holds guard, bytes, guard. So every op is translated: the
 * plugin gets, per call, copies of the caller's tensors on the stack whose
 * buffer is the inner one and whose offset is shifted past the guard.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug.h"

#define GUARD_BYTE 0xa5

/* ------------------------------------------------------------ buffers */

static gllmk_status guard_fill(struct debug_ctx *d, const struct debug_buffer *b)
{
	unsigned char g[DEBUG_GUARD];
	gllmk_status st;

	memset(g, GUARD_BYTE, sizeof(g));
	st = d->next->buffer_write(d->next_state, b->inner, 0, g, sizeof(g));
	if (!st)
		st = d->next->buffer_write(d->next_state, b->inner, DEBUG_GUARD + b->size, g, sizeof(g));
	return st;
}

gllmk_status debug_buffer_alloc(void *st, uint64_t size, void **impl)
{
	struct debug_ctx *d = st;
	struct debug_buffer *b = calloc(1, sizeof(*b));
	gllmk_status s;

	if (!b)
		return d->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_buffer_alloc: debug: out of host memory");
	if (size > UINT64_MAX - 2 * DEBUG_GUARD) {
		free(b);
		return d->host->set_error(GLLMK_E_OVERFLOW, "gllmk_buffer_alloc: debug: %llu bytes and two guards",
					  (unsigned long long)size);
	}
	s = d->next->buffer_alloc(d->next_state, size + 2 * DEBUG_GUARD, &b->inner);
	if (s) {
		free(b);
		return s;
	}
	b->size = size;
	b->base = DEBUG_GUARD;
	b->id = ++d->buffers;
	s = guard_fill(d, b);
	if (s) {
		d->next->buffer_free(d->next_state, b->inner);
		free(b);
		return s;
	}
	*impl = b;
	return GLLMK_OK;
}

/* Caller memory cannot grow guards: a wrapped buffer is used as it is. */
gllmk_status debug_buffer_wrap(void *st, void *host, uint64_t size, void **impl)
{
	struct debug_ctx *d = st;
	struct debug_buffer *b;
	gllmk_status s;

	if (!d->next->buffer_wrap)
		return d->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_buffer_wrap: plugin '%s' cannot wrap host memory",
					  d->next->name);
	b = calloc(1, sizeof(*b));
	if (!b)
		return d->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_buffer_wrap: debug: out of host memory");
	s = d->next->buffer_wrap(d->next_state, host, size, &b->inner);
	if (s) {
		free(b);
		return s;
	}
	b->size = size;
	b->id = ++d->buffers;
	*impl = b;
	return GLLMK_OK;
}

/* Which side of b lost its guard, -1 if none; *first the first bad byte. */
static int guard_damage(struct debug_ctx *d, const struct debug_buffer *b, uint64_t *first)
{
	unsigned char g[DEBUG_GUARD];
	uint64_t at[2] = { 0, DEBUG_GUARD + b->size };
	int side;
	size_t i;

	if (!b->base)
		return -1;
	for (side = 0; side < 2; side++) {
		if (d->next->buffer_read(d->next_state, b->inner, at[side], g, sizeof(g)))
			return -1;
		for (i = 0; i < sizeof(g); i++) {
			/* Before the buffer the nearest byte is the last one. */
			size_t k = side ? i : sizeof(g) - 1 - i;

			if (g[k] != GUARD_BYTE) {
				*first = k;
				return side;
			}
		}
	}
	return -1;
}

static void guard_report(struct debug_ctx *d, const struct debug_buffer *b, const char *who)
{
	uint64_t k;
	int side = guard_damage(d, b, &k);

	if (side < 0)
		return;
	if (side)
		debug_print(d, "check: %s: guard bytes after buffer #%llu (%llu bytes) overwritten: byte %llu past its end",
			    who, (unsigned long long)b->id, (unsigned long long)b->size, (unsigned long long)k);
	else
		debug_print(d, "check: %s: guard bytes before buffer #%llu (%llu bytes) overwritten: byte %llu before its start",
			    who, (unsigned long long)b->id, (unsigned long long)b->size,
			    (unsigned long long)(DEBUG_GUARD - k));
	/* Repaired, so the next report is new damage. */
	guard_fill(d, b);
}

void debug_buffer_free(void *st, void *impl)
{
	struct debug_ctx *d = st;
	struct debug_buffer *b = impl;
	char who[64];

	snprintf(who, sizeof(who), "buffer_free after call #%llu", (unsigned long long)d->calls);
	if (d->cfg.modes & DEBUG_CHECK)
		guard_report(d, b, who);
	d->next->buffer_free(d->next_state, b->inner);
	free(b);
}

gllmk_status debug_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size)
{
	struct debug_ctx *d = st;
	struct debug_buffer *b = impl;

	return d->next->buffer_write(d->next_state, b->inner, b->base + off, src, size);
}

gllmk_status debug_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size)
{
	struct debug_ctx *d = st;
	struct debug_buffer *b = impl;

	return d->next->buffer_read(d->next_state, b->inner, b->base + off, dst, size);
}

gllmk_status debug_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size)
{
	struct debug_ctx *d = st;
	struct debug_buffer *db = dst, *sb = src;

	return d->next->buffer_copy(d->next_state, db->inner, db->base + dst_off, sb->inner, sb->base + src_off, size);
}

/* The plugin's prepared copy of w (gllmk_weights_prepare), held like a
 * wrapped buffer: the plugin allocates it, so it has no guards. */
gllmk_status debug_weights_prepare(void *st, const gllmk_tensor *w, void **impl, uint64_t *size, uint32_t *layout)
{
	struct debug_ctx *d = st;
	const struct debug_buffer *src = w->buf->impl;
	gllmk_buffer inner = *w->buf;
	gllmk_tensor shadow = *w;
	struct debug_buffer *b;
	gllmk_status s;

	if (!d->next->weights_prepare)
		return d->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_weights_prepare: plugin '%s' prepares no weights",
					  d->next->name);
	b = calloc(1, sizeof(*b));
	if (!b)
		return d->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_weights_prepare: debug: out of host memory");
	inner.impl = src->inner;
	inner.size = src->size + 2 * src->base;
	shadow.buf = &inner;
	shadow.offset += src->base;
	s = d->next->weights_prepare(d->next_state, &shadow, &b->inner, size, layout);
	if (s) {
		free(b);
		return s;
	}
	b->size = *size;
	b->id = ++d->buffers;
	*impl = b;
	return GLLMK_OK;
}

gllmk_status debug_sync(void *st)
{
	struct debug_ctx *d = st;

	return d->next->sync(d->next_state);
}

/* ------------------------------------------------------------ ops */

/* Arguments on one buffer share one shadow buffer, so a plugin that tells
 * in-place calls by their buffer pointer still sees them as such. */
void debug_translate(struct debug_call *c)
{
	int i, j;

	for (i = 0; i < c->n_args; i++) {
		const gllmk_tensor *u = c->user[i];
		const struct debug_buffer *b;

		if (!u)
			continue;
		b = u->buf->impl;
		c->shadow[i] = *u;
		c->shadow[i].offset += b->base;
		for (j = 0; j < i; j++)
			if (c->user[j] && c->user[j]->buf == u->buf)
				break;
		if (j == i) {
			c->shadow_buf[i] = *u->buf;
			c->shadow_buf[i].impl = b->inner;
			c->shadow_buf[i].size = b->size + 2 * b->base;
		}
		c->shadow[i].buf = &c->shadow_buf[j];
		c->t[i] = &c->shadow[i];
	}
}

struct scan {
	int32_t dtype;
	uint64_t count;
	int64_t first_idx[GLLMK_MAX_DIMS];
	int64_t first_i;
	double first;
};

static int scan_row(const unsigned char *row, int64_t n, const int64_t *idx, void *user)
{
	struct scan *s = user;
	int64_t i;

	for (i = 0; i < n; i++) {
		double v = debug_float_at(s->dtype, row, i);

		if (isfinite(v))
			continue;
		if (!s->count++) {
			memcpy(s->first_idx, idx, sizeof(s->first_idx));
			s->first_i = i;
			s->first = v;
		}
	}
	return 0;
}

/* Non-finite elements of float argument arg (0 when not a float or unread). */
static uint64_t scan_arg(struct debug_call *c, int arg, struct scan *s)
{
	void *host;

	memset(s, 0, sizeof(*s));
	s->dtype = c->t[arg]->dtype;
	if (!debug_dtype_is_float(s->dtype))
		return 0;
	host = debug_view_read(c->d, c, arg);
	if (!host)
		return 0;
	debug_view_rows(c->t[arg], host, scan_row, s);
	free(host);
	return s->count;
}

/* Says whether the caller handed the op non-finite data already. */
static void describe_inputs(struct debug_call *c, char *s, size_t len)
{
	struct scan in;
	size_t n = 0;
	int i;

	s[0] = '\0';
	for (i = c->n_out; i < c->n_args; i++) {
		if (!c->t[i] || !scan_arg(c, i, &in))
			continue;
		n += snprintf(s + n, n < len ? len - n : 0, "%s%s has %llu", n ? ", " : "", c->names[i],
			      (unsigned long long)in.count);
	}
	if (!n)
		snprintf(s, len, "every input is finite: the op made them");
	else if (n < len)
		snprintf(s + n, len - n, " (the inputs held NaN/Inf already)");
}

static void check_nonfinite(struct debug_call *c)
{
	char shape[96], where[96], inputs[256];
	struct scan s;
	int i;

	/* kv_store writes a few rows of a whole cache: the rows it did not
	 * write may hold anything (unused slots), and scanning the cache would
	 * read all of it back on every call. */
	if (c->op == DEBUG_OP_kv_store)
		return;
	for (i = 0; i < c->n_out && !c->d->nonfinite_seen; i++) {
		/* an optional output left out (top_k's values) */
		if (!c->t[i] || !scan_arg(c, i, &s))
			continue;
		c->d->nonfinite_seen = 1;
		debug_shape_str(c->d, c->user[i], shape, sizeof(shape));
		debug_index_str(c->user[i], s.first_idx, s.first_i, where, sizeof(where));
		describe_inputs(c, inputs, sizeof(inputs));
		debug_print(c->d,
			    "check: call #%llu %s: output %s %s has %llu NaN/Inf, the first %s at %s; %s "
			    "(later NaN/Inf are not reported)",
			    (unsigned long long)c->number, debug_op_names[c->op], c->names[i], shape,
			    (unsigned long long)s.count, isnan(s.first) ? "NaN" : s.first > 0 ? "+Inf" : "-Inf",
			    where, inputs);
	}
}

static void check_guards(struct debug_call *c)
{
	char who[96];
	int i, j;

	for (i = 0; i < c->n_args; i++) {
		if (!c->user[i])
			continue;
		for (j = 0; j < i; j++)
			if (c->user[j] && c->user[j]->buf == c->user[i]->buf)
				break;
		if (j < i)
			continue;
		snprintf(who, sizeof(who), "call #%llu %s, argument %s", (unsigned long long)c->number,
			 debug_op_names[c->op], c->names[i]);
		guard_report(c->d, c->user[i]->buf->impl, who);
	}
}

void debug_check_after(struct debug_call *c)
{
	if (c->d->owns_memory)
		check_guards(c);
	if (c->status == GLLMK_OK)
		check_nonfinite(c);
}
