/* Views as the layer reads them: a tensor's bytes from its offset to the
 * end of its last row, read back through the next plugin (so GPU buffers
 * work too), then walked row by row on the host.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug.h"

uint64_t debug_view_extent(const struct debug_ctx *d, const gllmk_tensor *t)
{
	uint64_t end = 0;
	int i;

	if (d->api.dtype_row_bytes(t->dtype, t->shape[t->ndim - 1], &end))
		return 0;
	for (i = 0; i < t->ndim - 1; i++)
		end += (uint64_t)(t->shape[i] - 1) * (uint64_t)t->stride[i];
	return end;
}

void *debug_view_read(struct debug_ctx *d, const struct debug_call *c, int arg)
{
	const gllmk_tensor *t = c->t[arg];
	uint64_t n = debug_view_extent(d, t);
	void *host = n ? malloc(n) : NULL;
	gllmk_status st;

	if (!host) {
		debug_print(d, "call #%llu %s: cannot hold %llu bytes of %s to inspect them",
			    (unsigned long long)c->number, debug_op_names[c->op], (unsigned long long)n,
			    c->names[arg]);
		return NULL;
	}
	st = d->next->buffer_read(d->next_state, t->buf->impl, t->offset, host, n);
	if (st) {
		debug_print(d, "call #%llu %s: reading %s back failed: %s", (unsigned long long)c->number,
			    debug_op_names[c->op], c->names[arg], d->api.last_error());
		free(host);
		return NULL;
	}
	return host;
}

/* Rows are walked in index order over up to 3 outer dimensions. */
int debug_view_rows(const gllmk_tensor *t, const void *host, debug_row_fn fn, void *user)
{
	int64_t idx[GLLMK_MAX_DIMS] = { 0 };
	int last = t->ndim - 1, d;

	for (;;) {
		uint64_t off = 0;
		int r;

		for (d = 0; d < last; d++)
			off += (uint64_t)idx[d] * (uint64_t)t->stride[d];
		r = fn((const unsigned char *)host + off, t->shape[last], idx, user);
		if (r)
			return r;
		for (d = last - 1; d >= 0; d--) {
			if (++idx[d] < t->shape[d])
				break;
			idx[d] = 0;
		}
		if (d < 0)
			return 0;
	}
}

int debug_dtype_is_float(int32_t dtype)
{
	return dtype == GLLMK_F32 || dtype == GLLMK_F16 || dtype == GLLMK_BF16;
}

static double half_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (e == 0x1f)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(m | 0x400, e - 25);
	return (h & 0x8000) ? -v : v;
}

double debug_float_at(int32_t dtype, const unsigned char *row, int64_t i)
{
	float f;
	uint32_t u;
	uint16_t h;

	switch (dtype) {
	case GLLMK_F32:
		memcpy(&f, row + 4 * i, 4);
		return f;
	case GLLMK_F16:
		memcpy(&h, row + 2 * i, 2);
		return half_to_double(h);
	case GLLMK_BF16:
		memcpy(&h, row + 2 * i, 2);
		u = (uint32_t)h << 16;
		memcpy(&f, &u, 4);
		return f;
	default:
		return 0.0;
	}
}

void debug_shape_str(const struct debug_ctx *d, const gllmk_tensor *t, char *s, size_t len)
{
	const char *name = d->api.dtype_name(t->dtype);
	size_t n;
	int i;

	n = snprintf(s, len, "%s[", name ? name : "?");
	for (i = 0; i < t->ndim && n < len; i++)
		n += snprintf(s + n, len - n, "%s%lld", i ? "," : "", (long long)t->shape[i]);
	if (n < len)
		snprintf(s + n, len - n, "]");
}

void debug_index_str(const gllmk_tensor *t, const int64_t *idx, int64_t i, char *s, size_t len)
{
	size_t n = snprintf(s, len, "[");
	int d;

	for (d = 0; d < t->ndim - 1 && n < len; d++)
		n += snprintf(s + n, len - n, "%lld,", (long long)idx[d]);
	if (n < len)
		snprintf(s + n, len - n, "%lld]", (long long)i);
}
