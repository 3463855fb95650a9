/* The core's private structures: contexts, buffers, reports, and the
 * functions the core's files share. Nothing here is exported: every public
 * symbol is a gllmk_* function declared in abi/gllmk.h.
 */
#ifndef GLLMK_CORE_H
#define GLLMK_CORE_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gllmk_plugin.h"

#define CORE_CONTEXT_MAGIC 0x676c6378u /* "glcx" */
#define CORE_BUFFER_MAGIC 0x676c6266u  /* "glbf" */
#define CORE_BUFFER_DEAD 0xdeadbeefu

#define CORE_NAME_MAX 64     /* a plugin name, NUL included */
#define CORE_REASON_MAX 512  /* a verdict's reason, NUL included */
#define CORE_MAX_NAMED 16    /* names in one override */
#define CORE_MAX_CANDIDATES (CORE_MAX_NAMED + 6)

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------ errors */

/* Writes this thread's gllmk_last_error() and returns st. */
gllmk_status core_error(gllmk_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What every plugin and layer is handed (static const, process lifetime). */
extern const gllmk_host core_host;

/* ------------------------------------------------------------ dtypes */

/* Blocks and alignments are powers of two, so the op path checks them with
 * masks and shifts: a 64-bit division would cost more than the rest of a
 * view's validation. */
struct core_dtype {
	const char *name;      /* NULL: not a gllmk dtype */
	int64_t block_elems;   /* 1, 32 or 256 */
	int64_t block_bytes;
	uint32_t block_shift;  /* log2(block_elems) */
	uint32_t align;        /* of offsets and outer strides: 1, 2 or 4 */
	uint32_t elem_stride;  /* the innermost stride other than 0: the element size; 0 for blocks */
	uint32_t since_minor;  /* the ABI minor that added it */
	bool weight, kv;       /* abi/gllmk_dtypes.def's WEIGHT and KV columns */
};

#define CORE_DTYPE_ENTRY(...) CORE_DTYPE_ENTRY_(__VA_ARGS__)
#define CORE_DTYPE_ENTRY_(str, elems, bytes, al, minor, w, k)                                           \
	{ .name = str, .block_elems = elems, .block_bytes = bytes,                                      \
	  .block_shift = (elems) == 256 ? 8 : (elems) == 32 ? 5 : 0, .align = al,                       \
	  .elem_stride = (elems) == 1 ? (bytes) : 0, .since_minor = minor, .weight = w, .kv = k }
/* f32's entry, also folded into the op path's checks (validate.h) */
#define CORE_DTYPE_F32_LAYOUT "f32", 1, 4, 4, 0, 1, 1

extern const struct core_dtype core_dtypes[GLLMK_DTYPE_LIMIT];

/* The entry of t, or NULL for a value that is not a dtype. */
static inline const struct core_dtype *core_dtype(int32_t t)
{
	if (t < 0 || t >= GLLMK_DTYPE_LIMIT || !core_dtypes[t].name)
		return NULL;
	return &core_dtypes[t];
}

/* The dtypes a plugin of ABI minor `minor` may be handed: the others are
 * answered GLLMK_E_UNSUPPORTED before they reach it. */
uint64_t core_dtype_mask(uint32_t minor);

/* ---------------------------------------------------------- dispatch */

/* One {function, state} pair per slot after the lifecycle slots, generated
 * from the header's slot lists so a new slot cannot be forgotten here. A
 * NULL fn means "not implemented" and answers GLLMK_E_UNSUPPORTED. */
#define CORE_DISPATCH_SLOT(name, type) \
	struct {                       \
		type fn;               \
		void *state;           \
	} name;
struct core_dispatch {
	GLLMK_BACKEND_SLOTS(CORE_DISPATCH_SLOT)
	GLLMK_OPS(CORE_DISPATCH_SLOT)
	GLLMK_SLOTS_V1_2(CORE_DISPATCH_SLOT)
};

/* Whether a table of t->size bytes reaches slot `slot` (older minors end
 * earlier; their missing slots count as NULL). */
#define CORE_TABLE_HAS(t, slot) \
	((t)->size >= offsetof(gllmk_plugin_table, slot) + sizeof((t)->slot))
#define CORE_TABLE_SLOT(t, slot) (CORE_TABLE_HAS(t, slot) ? (t)->slot : NULL)

/* ------------------------------------------------------------ loader */

/* The version node ("" if none) of the loaded symbol at addr; -1 if its
 * object's ELF tables cannot be read (elf_version.c). */
int core_symbol_version(const void *addr, char *node, size_t len);

/* ------------------------------------------------------------ reports */

/* One candidate's strings; the public gllmk_plugin_report points into it. */
struct core_record {
	char name[CORE_NAME_MAX];
	char path[PATH_MAX];
	char reason[CORE_REASON_MAX];
	char device[GLLMK_PROBE_TEXT];
	int no_memory; /* it failed for lack of memory: gllmk_open says GLLMK_E_NO_MEMORY */
};

/* A report and everything it points to, in one allocation. */
struct core_report {
	gllmk_report pub; /* first: gllmk_report_free casts back */
	gllmk_plugin_report plugins[CORE_MAX_CANDIDATES];
	struct core_record rec[CORE_MAX_CANDIDATES];
	char plugin_dir[PATH_MAX];
	char layer[CORE_NAME_MAX];
};

/* ------------------------------------------------------------ loader */

/* What gllmk_open/gllmk_survey were asked for, options and environment
 * already read and checked. */
/* The bits of gllmk_options.flags that the core hands to the plugin and the
 * layer in gllmk_open_args.flags; the others are the core's own. */
#define CORE_PLUGIN_FLAGS ((uint32_t)GLLMK_OPEN_BF16_ACTIVATIONS)

struct core_plan {
	char dir[PATH_MAX];
	const char *source;   /* "options->plugins", "GLLMK_PLUGIN" or NULL */
	int n_named;
	char named[CORE_MAX_NAMED][CORE_NAME_MAX];
	uint32_t flags;
	int32_t n_threads;
};

/* The plugin the loader chose and opened, for the context to adopt. */
struct core_choice {
	const gllmk_plugin_table *table;
	void *state;
	int by_name;
};

/* <dir>/libgllmk-<name>.so into path; 0 if it does not fit. */
int core_plugin_path(char *path, size_t len, const char *dir, const char *name);
gllmk_status core_plan_make(const char *fn, const gllmk_options *opts, struct core_plan *plan);
/* Walks the candidates in order; opens the first that runs (open = 1) or
 * only probes them all (open = 0). Fills report, and choice with the
 * selected table (and, when open, its state). */
gllmk_status core_walk(const char *fn, const struct core_plan *plan, int open, struct core_report *report,
		       struct core_choice *choice);
/* Lifecycle calls into plugins and layers are serialised by the core. */
void core_loader_lock(void);
void core_loader_unlock(void);

/* ----------------------------------------------------------- contexts */

struct core_buffer {
	struct gllmk_buffer pub; /* first: plugins and users see only this */
	struct core_buffer *prev, *next;
	/* prepared weights (pub.layout != 0): the one view that reads them,
	 * the w gllmk_weights_prepare was given, made contiguous at offset 0 */
	gllmk_tensor prepared;
};

/* The core's record of a public buffer. */
static inline const struct core_buffer *core_buffer_of(const gllmk_buffer *buf)
{
	return (const struct core_buffer *)buf;
}

struct gllmk_context {
	struct core_dispatch d; /* first: the one thing every op reads */
	uint32_t magic;
	const gllmk_plugin_table *plugin;
	void *plugin_state;
	const gllmk_plugin_table *layer; /* NULL when no layer was inserted */
	gllmk_plugin_table next;         /* the plugin's table, zero-padded, for the layer */
	void *layer_state;
	struct core_buffer *buffers;     /* still allocated, freed by close */
	struct core_report *report;
	uint64_t dtypes_ok;              /* dtypes the plugin's minor knows (core_dtype_mask) */
};

/* Frees one buffer of ctx (plugin handle, record); close uses it too. */
void core_buffer_release(gllmk_context *ctx, gllmk_buffer *buf);

/* GLLMK_E_UNSUPPORTED naming the op and the plugin. */
gllmk_status core_unsupported(const gllmk_context *ctx, const char *fn, const char *slot);

/* One indirect call through the context's dispatch, or UNSUPPORTED. */
#define CORE_DISPATCH(ctx, fn_name, slot, ...)                                 \
	(likely((ctx)->d.slot.fn != NULL) ?                                    \
		 (ctx)->d.slot.fn((ctx)->d.slot.state, __VA_ARGS__) :          \
		 core_unsupported((ctx), (fn_name), #slot))

#endif /* GLLMK_CORE_H */
