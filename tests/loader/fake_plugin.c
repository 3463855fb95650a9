/* One fake plugin, many behaviours.
 *
 * tests/loader/meson.build compiles this file once per behaviour with FAKE_*
 * defines; test_loader.c installs the results under the names the core looks
 * for (libgllmk-vulkan.so, ...) and checks the verdict the core gives each.
 *
 *   FAKE_KIND        the behaviour's name (always set by the build)
 *   FAKE_NAME        the name in the table (default "vulkan")
 *   FAKE_ENTRY       the exported entry symbol (default gllmk_plugin_entry_v1)
 *   FAKE_ABI_MAJOR   abi_major in the table (default the core's)
 *   FAKE_ABI_MINOR   abi_minor in the table (default the core's)
 *   FAKE_NEWER_TABLE the table carries two slots of a future minor
 *   FAKE_LAST_SLOT   the table's size ends after this op slot; the slots
 *                    past it hold a trap the core must never call
 *   FAKE_PROBE       the probe's answer (default GLLMK_PROBE_YES)
 *   FAKE_REASON      the probe's (or entry's, or open's) reason text
 *   FAKE_NEEDS_MINOR the entry refuses (NULL, FAKE_REASON) a core whose
 *                    highest minor is below this (default 0: never)
 *   FAKE_OPEN_FAILS  open returns GLLMK_E_BACKEND with FAKE_REASON
 *   FAKE_EXTRA       export gllmk_fake_extra = FAKE_EXTRA (symbol leak test)
 *
 * Loading fakes implement the buffer slots and scale on host memory, so a
 * context on them works; every other op is left NULL (or trapped past the
 * table's size) so the core must answer GLLMK_E_UNSUPPORTED itself.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gllmk_plugin.h"

#ifndef FAKE_KIND
#error "FAKE_KIND names the behaviour; tests/loader/meson.build sets it"
#endif
#ifndef FAKE_NAME
#define FAKE_NAME "vulkan"
#endif
#ifndef FAKE_ENTRY
#define FAKE_ENTRY gllmk_plugin_entry_v1
#endif
#ifndef FAKE_ABI_MAJOR
#define FAKE_ABI_MAJOR GLLMK_ABI_MAJOR
#endif
#ifndef FAKE_ABI_MINOR
#define FAKE_ABI_MINOR GLLMK_ABI_MINOR
#endif
#ifndef FAKE_PROBE
#define FAKE_PROBE GLLMK_PROBE_YES
#endif
#ifndef FAKE_REASON
#define FAKE_REASON ""
#endif
#ifndef FAKE_NEEDS_MINOR
#define FAKE_NEEDS_MINOR 0
#endif

#define FAKE_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------ extra exports */

#ifdef FAKE_EXTRA
/* Two fakes export these with different values. Loaded RTLD_LOCAL, each one's
 * own references (through its GOT/PLT) resolve to its own definition; loaded
 * RTLD_GLOBAL, the second would see the first one's. */
FAKE_EXPORT int gllmk_fake_extra = FAKE_EXTRA;
FAKE_EXPORT int gllmk_fake_extra_fn(void)
{
	return FAKE_EXTRA;
}

static int fake_extra_seen(void)
{
	return gllmk_fake_extra * 100 + gllmk_fake_extra_fn();
}
#else
static int fake_extra_seen(void)
{
	return -1;
}
#endif

/* The test program exports loader_test_count_entry (it links with
 * -rdynamic) to count how often the core calls an entry. */
static void fake_count_entry(void)
{
	void (*count)(const char *kind);

	*(void **)&count = dlsym(RTLD_DEFAULT, "loader_test_count_entry");
	if (count)
		count(FAKE_KIND);
}

/* ------------------------------------------------------------ lifecycle */

static gllmk_probe_result fake_probe(gllmk_probe_info *info)
{
	snprintf(info->device, sizeof(info->device), "fake %s, extra=%d", FAKE_KIND, fake_extra_seen());
	snprintf(info->reason, sizeof(info->reason), "%s", FAKE_REASON);
	return FAKE_PROBE;
}

struct fake_state {
	int n_threads;
};

#ifdef FAKE_OPEN_FAILS
static gllmk_status fake_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	(void)args;
	(void)state;
	snprintf(reason, reason_len, "%s", FAKE_REASON);
	return GLLMK_E_BACKEND;
}
#else
static gllmk_status fake_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct fake_state *st = calloc(1, sizeof(*st));

	if (!st) {
		snprintf(reason, reason_len, "fake %s: out of memory", FAKE_KIND);
		return GLLMK_E_NO_MEMORY;
	}
	st->n_threads = args->n_threads;
	*state = st;
	return GLLMK_OK;
}
#endif

static void fake_close(void *state)
{
	free(state);
}

/* --------------------------------------------------------------- memory */

static gllmk_status fake_buffer_alloc(void *st, uint64_t size, void **impl)
{
	(void)st;
	*impl = calloc(1, size);
	return *impl ? GLLMK_OK : GLLMK_E_NO_MEMORY;
}

static void fake_buffer_free(void *st, void *impl)
{
	(void)st;
	free(impl);
}

static gllmk_status fake_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size)
{
	(void)st;
	memcpy((char *)impl + off, src, size);
	return GLLMK_OK;
}

static gllmk_status fake_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size)
{
	(void)st;
	memcpy(dst, (const char *)impl + off, size);
	return GLLMK_OK;
}

static gllmk_status fake_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off,
				     uint64_t size)
{
	(void)st;
	memmove((char *)dst + dst_off, (const char *)src + src_off, size);
	return GLLMK_OK;
}

static gllmk_status fake_sync(void *st)
{
	(void)st;
	return GLLMK_OK;
}

/* ------------------------------------------------------------ operators */

/* Byte offset of row r of t, walking the outer dims in row-major order. */
static uint64_t fake_row_offset(const gllmk_tensor *t, int64_t r)
{
	uint64_t off = t->offset;

	for (int d = t->ndim - 2; d >= 0; d--) {
		off += (uint64_t)(r % t->shape[d]) * (uint64_t)t->stride[d];
		r /= t->shape[d];
	}
	return off;
}

/* The only op the fakes implement: enough to see a context work. */
static gllmk_status fake_scale(void *st, gllmk_t y, gllmk_t x, float s)
{
	int64_t n = y->shape[y->ndim - 1];
	int64_t rows = 1;

	(void)st;
	for (int d = 0; d < y->ndim - 1; d++)
		rows *= y->shape[d];
	for (int64_t r = 0; r < rows; r++) {
		float *yr = (float *)((char *)y->buf->impl + fake_row_offset(y, r));
		const float *xr = (const float *)((const char *)x->buf->impl + fake_row_offset(x, r));

		for (int64_t i = 0; i < n; i++)
			yr[i] = xr[i] * s;
	}
	return GLLMK_OK;
}

/* What a slot past the table's declared size holds: the core must never
 * call it (it answers GLLMK_E_UNSUPPORTED for such ops instead). Called
 * through the wrong type on purpose: it reads no argument. */
static gllmk_status fake_trap(void)
{
	fprintf(stderr, "fake %s: the core called a slot past the table's size\n", FAKE_KIND);
	return GLLMK_E_BACKEND;
}

/* ---------------------------------------------------------------- table */

/* The table and two slots of a future minor, for the newer-minor fake. */
struct fake_table {
	gllmk_plugin_table t;
	gllmk_sync_fn future[2];
};

#define FAKE_SLOT_OFFSET(slot) offsetof(gllmk_plugin_table, slot)

#if defined(FAKE_NEWER_TABLE)
#define FAKE_TABLE_SIZE sizeof(struct fake_table)
#elif defined(FAKE_LAST_SLOT)
#define FAKE_TABLE_SIZE (FAKE_SLOT_OFFSET(FAKE_LAST_SLOT) + sizeof(void *))
#else
#define FAKE_TABLE_SIZE sizeof(gllmk_plugin_table)
#endif

#define FAKE_PAST_END(slot) (FAKE_SLOT_OFFSET(slot) >= FAKE_TABLE_SIZE)
#define FAKE_IS_SCALE(slot) (FAKE_SLOT_OFFSET(slot) == FAKE_SLOT_OFFSET(scale))
#define FAKE_AS(type, fn) ((type)(void (*)(void))(fn))

/* Every op slot: the trap past the table's size, scale where it is, NULL else. */
#define FAKE_OP_SLOT(slot, type)                                         \
	.slot = FAKE_PAST_END(slot) ? FAKE_AS(type, fake_trap) :          \
		FAKE_IS_SCALE(slot) ? FAKE_AS(type, fake_scale) : NULL,

static const struct fake_table fake_table = {
	.t = {
		.size = FAKE_TABLE_SIZE,
		.abi_major = FAKE_ABI_MAJOR,
		.abi_minor = FAKE_ABI_MINOR,
		.name = FAKE_NAME,
		.probe = fake_probe,
		.open = fake_open,
		.close = fake_close,
		.buffer_alloc = fake_buffer_alloc,
		.buffer_wrap = NULL,
		.buffer_free = fake_buffer_free,
		.buffer_write = fake_buffer_write,
		.buffer_read = fake_buffer_read,
		.buffer_copy = fake_buffer_copy,
		.sync = fake_sync,
		GLLMK_OPS(FAKE_OP_SLOT)
	},
	.future = { FAKE_AS(gllmk_sync_fn, fake_trap), FAKE_AS(gllmk_sync_fn, fake_trap) },
};

/* ---------------------------------------------------------------- entry */

FAKE_EXPORT const gllmk_plugin_table *FAKE_ENTRY(const gllmk_host *host, char *reason, size_t reason_len);

FAKE_EXPORT const gllmk_plugin_table *FAKE_ENTRY(const gllmk_host *host, char *reason, size_t reason_len)
{
	fake_count_entry();
#if FAKE_NEEDS_MINOR > 0
	if (host->abi_minor < FAKE_NEEDS_MINOR) {
		snprintf(reason, reason_len, "%s", FAKE_REASON);
		return NULL;
	}
#else
	(void)host;
	(void)reason;
	(void)reason_len;
#endif
	return &fake_table.t;
}
