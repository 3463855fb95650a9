/* libgllmk-debug.so: the layer's shared declarations.
 *
 * The layer sits between the core and the selected plugin (SPEC/ABI.md §9,
 * SPEC/DEBUG.md). Every operator goes through one wrapper generated from
 * GLLMK_OPS (layer_debug.c); the wrapper calls the concerns in this header
 * around the forwarded call: check (NaN/Inf and guard bytes), compare (the
 * same call on cpu-generic), trace and stats.
 */
#ifndef GLLMK_DEBUG_H
#define GLLMK_DEBUG_H

#include <limits.h>
#include <stdint.h>

#include "gllmk_plugin.h"

#define DEBUG_PREFIX "gllmk-debug: "

/* ------------------------------------------------------------ config */

enum debug_mode {
	DEBUG_TRACE = 1u << 0,
	DEBUG_CHECK = 1u << 1,
	DEBUG_COMPARE = 1u << 2,
	DEBUG_STATS = 1u << 3,
};

struct debug_config {
	unsigned modes;      /* enum debug_mode bits; 0: pass through */
	char file[PATH_MAX]; /* GLLMK_DEBUG_FILE; "" is stderr */
};

/* Reads GLLMK_DEBUG and GLLMK_DEBUG_FILE. Returns -1 with a sentence in
 * reason when GLLMK_DEBUG holds a word the layer does not know. */
int debug_config_read(struct debug_config *cfg, char *reason, size_t reason_len);

/* ------------------------------------------------------------ operators */

enum debug_op {
#define DEBUG_OP_ENUM(op, type) DEBUG_OP_##op,
	GLLMK_OPS(DEBUG_OP_ENUM)
#undef DEBUG_OP_ENUM
	DEBUG_OP_COUNT
};

extern const char *const debug_op_names[DEBUG_OP_COUNT];

/* ------------------------------------------------------------ public API */

/* The core's public functions, resolved in the core that called the layer
 * (the layer does not link libgllmk: it is preloaded before it). */
struct debug_api {
	void *handle;
	__typeof__(&gllmk_open) open;
	__typeof__(&gllmk_close) close;
	__typeof__(&gllmk_buffer_alloc) buffer_alloc;
	__typeof__(&gllmk_buffer_free) buffer_free;
	__typeof__(&gllmk_buffer_write) buffer_write;
	__typeof__(&gllmk_buffer_read) buffer_read;
	__typeof__(&gllmk_last_error) last_error;
	__typeof__(&gllmk_status_string) status_string;
	__typeof__(&gllmk_dtype_name) dtype_name;
	__typeof__(&gllmk_dtype_row_bytes) dtype_row_bytes;
#define DEBUG_API_OP(op, type) __typeof__(&gllmk_##op) op;
	GLLMK_OPS(DEBUG_API_OP)
#undef DEBUG_API_OP
};

/* ------------------------------------------------------------ state */

struct debug_op_stats {
	uint64_t calls;
	uint64_t failed;
	uint64_t ns;
};

/* The handle the layer gives out when it owns memory (check mode): the
 * next plugin's buffer holds a guard, the caller's bytes, and a guard. */
struct debug_buffer {
	void *inner;    /* the next plugin's handle */
	uint64_t size;  /* the caller's size */
	uint64_t base;  /* where the caller's byte 0 sits in inner */
	uint64_t id;    /* allocation number in the context, for messages */
};

#define DEBUG_GUARD 256 /* bytes each side; keeps 64- and 256-byte alignment */

/* One context's layer state. */
struct debug_ctx {
	const gllmk_host *host;
	const gllmk_plugin_table *next;
	void *next_state;
	struct debug_config cfg;
	struct debug_api api;
	int fd;              /* where lines go */
	int owns_memory;     /* the table with buffer slots: tensors are translated */
	uint32_t open_flags; /* gllmk_open_args.flags the context was opened with */
	int nonfinite_seen;  /* the first NaN/Inf offender was reported */
	int compare_off;     /* cpu-generic could not be opened: said once */
	int compare_prepared_said; /* calls on prepared weights go uncompared: said once */
	gllmk_context *ref;  /* compare's cpu-generic context, opened at first use */
	uint64_t calls;      /* operator calls so far */
	uint64_t buffers;    /* buffers allocated so far */
	struct debug_op_stats stats[DEBUG_OP_COUNT];
};

/* ------------------------------------------------------------ one call */

#define DEBUG_MAX_ARGS 9 /* attention_varlen: out, q, k, v, mask, cu_q, kv_len, block_tables, sinks */

struct debug_compare;

struct debug_call {
	struct debug_ctx *d;
	enum debug_op op;
	uint64_t number;                      /* 1 for the context's first op */
	int n_args, n_out;                    /* the first n_out args are outputs */
	const char *const *names;             /* argument names, for messages */
	const gllmk_tensor *user[DEBUG_MAX_ARGS];  /* the caller's (NULL: absent) */
	const gllmk_tensor *t[DEBUG_MAX_ARGS];     /* what the next plugin gets */
	gllmk_tensor shadow[DEBUG_MAX_ARGS];
	struct gllmk_buffer shadow_buf[DEBUG_MAX_ARGS];
	struct debug_compare *cmp;            /* compare's copies, or NULL */
	uint64_t ns;
	gllmk_status status;
};

/* ------------------------------------------------------------ helpers */

void debug_print(struct debug_ctx *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t debug_now_ns(void);

/* Bytes from a view's offset to the end of its last row. */
uint64_t debug_view_extent(const struct debug_ctx *d, const gllmk_tensor *t);
/* The extent of a view (as the next plugin sees it) read back into malloc'd
 * host memory; NULL when it could not be read (said on the output). */
void *debug_view_read(struct debug_ctx *d, const struct debug_call *c, int arg);

/* Calls fn(row, n, user) for each innermost row of a view whose extent
 * was read into host (row points at the row's first byte). */
typedef int (*debug_row_fn)(const unsigned char *row, int64_t n, const int64_t *idx, void *user);
int debug_view_rows(const gllmk_tensor *t, const void *host, debug_row_fn fn, void *user);

/* A float element of f32, f16 or bf16 as double; others are not floats. */
int debug_dtype_is_float(int32_t dtype);
double debug_float_at(int32_t dtype, const unsigned char *row, int64_t i);

/* "f32[4,64]" */
void debug_shape_str(const struct debug_ctx *d, const gllmk_tensor *t, char *s, size_t len);
/* "[2,7]": the index of element i of the row at idx. */
void debug_index_str(const gllmk_tensor *t, const int64_t *idx, int64_t i, char *s, size_t len);

/* ------------------------------------------------------------ concerns */

int debug_api_resolve(struct debug_api *api, const gllmk_host *host, char *reason, size_t reason_len);
void debug_api_release(struct debug_api *api);

/* check.c */
gllmk_status debug_buffer_alloc(void *st, uint64_t size, void **impl);
gllmk_status debug_buffer_wrap(void *st, void *host, uint64_t size, void **impl);
void debug_buffer_free(void *st, void *impl);
gllmk_status debug_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size);
gllmk_status debug_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size);
gllmk_status debug_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size);
gllmk_status debug_weights_prepare(void *st, const gllmk_tensor *w, void **impl, uint64_t *size, uint32_t *layout);
gllmk_status debug_sync(void *st);
void debug_translate(struct debug_call *c);
void debug_check_after(struct debug_call *c);

/* compare.c */
void debug_compare_close(struct debug_ctx *d);
void debug_compare_before(struct debug_call *c);
gllmk_context *debug_compare_context(const struct debug_call *c);
const gllmk_tensor *debug_compare_tensor(const struct debug_call *c, int arg);
void debug_compare_ran(struct debug_call *c, gllmk_status cmp_status);
void debug_compare_after(struct debug_call *c);

/* trace.c */
void debug_trace(const struct debug_call *c);

/* stats.c */
void debug_stats_add(struct debug_call *c);
void debug_stats_print(struct debug_ctx *d);

#endif
