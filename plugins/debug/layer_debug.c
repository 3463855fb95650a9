/* libgllmk-debug.so: the layer's entry, its tables, open and close, and the
 * operator wrappers.
 *
 * Preloaded, the layer is found by the core (SPEC/ABI.md §9) and offers one
 * of three static const tables:
 * - GLLMK_DEBUG unset or empty: only open and close, so every slot falls
 *   through to the plugin and a call costs what it costs without the layer;
 * - trace, stats, compare: every operator, buffers left to the plugin;
 * - check: every slot, buffers included, so it can put guards around them.
 * Each operator's wrapper is generated from GLLMK_OPS below; what it does
 * around the forwarded call lives in check.c, compare.c, trace.c, stats.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "debug.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *const debug_op_names[DEBUG_OP_COUNT] = {
#define DEBUG_OP_NAME(op, type) [DEBUG_OP_##op] = #op,
	GLLMK_OPS(DEBUG_OP_NAME)
#undef DEBUG_OP_NAME
};

/* ------------------------------------------------------------ output */

void debug_print(struct debug_ctx *d, const char *fmt, ...)
{
	char line[2048];
	size_t prefix = sizeof(DEBUG_PREFIX) - 1;
	va_list ap;
	int n;

	memcpy(line, DEBUG_PREFIX, prefix);
	va_start(ap, fmt);
	n = vsnprintf(line + prefix, sizeof(line) - prefix - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - prefix - 2)
		n = sizeof(line) - prefix - 2;
	n += prefix;
	line[n++] = '\n';
	/* One write per line: lines of contexts on other threads never mix. */
	if (write(d->fd, line, n) < 0)
		return;
}

uint64_t debug_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ one call */

static void call_begin(struct debug_call *c, void *st, enum debug_op op, const gllmk_tensor *const *args,
		       const char *const *names, int n_args, int n_out)
{
	struct debug_ctx *d = st;
	int i;

	c->d = d;
	c->op = op;
	c->number = ++d->calls;
	c->n_args = n_args;
	c->n_out = n_out;
	c->names = names;
	c->cmp = NULL;
	c->ns = 0;
	c->status = GLLMK_OK;
	for (i = 0; i < n_args; i++)
		c->user[i] = c->t[i] = args[i];
	if (d->owns_memory)
		debug_translate(c);
	/* Before the op: an in-place op overwrites its inputs. */
	if (d->cfg.modes & DEBUG_COMPARE)
		debug_compare_before(c);
}

static gllmk_status call_unsupported(struct debug_call *c)
{
	return c->d->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_%s: plugin '%s' does not implement %s",
				     debug_op_names[c->op], c->d->next->name, debug_op_names[c->op]);
}

static gllmk_status call_end(struct debug_call *c)
{
	struct debug_ctx *d = c->d;

	if (d->cfg.modes & DEBUG_TRACE)
		debug_trace(c);
	if (d->cfg.modes & DEBUG_CHECK)
		debug_check_after(c);
	if (c->cmp)
		debug_compare_after(c);
	debug_stats_add(c);
	return c->status;
}

/* The wrapper of one operator: the next plugin's slot, timed, between
 * call_begin and call_end; then, in compare mode, the same call on the
 * cpu-generic context with its copies of the arguments. FWD lists the
 * slot's arguments after the state, T(i) standing for tensor argument i. */
#define DEBUG_LIST(...) __VA_ARGS__
#define NEXT_T(i) c.t[i]
#define CMP_T(i) debug_compare_tensor(&c, i)

#define DEBUG_OP_WRAPPER(op, PARAMS, TENSORS, NAMES, N_OUT, FWD)                             \
	static gllmk_status debug_##op PARAMS                                                \
	{                                                                                    \
		static const char *const names[] = { DEBUG_LIST NAMES };                     \
		const gllmk_tensor *const args[] = { DEBUG_LIST TENSORS };                   \
		struct debug_call c;                                                         \
		uint64_t t0;                                                                 \
                                                                                             \
		call_begin(&c, st, DEBUG_OP_##op, args, names, ARRAY_SIZE(args), N_OUT);     \
		if (!c.d->next->op) {                                                        \
			c.status = call_unsupported(&c);                                     \
		} else {                                                                     \
			t0 = debug_now_ns();                                                 \
			c.status = c.d->next->op(c.d->next_state, FWD(NEXT_T));              \
			c.ns = debug_now_ns() - t0;                                          \
		}                                                                            \
		if (c.cmp && c.status == GLLMK_OK && c.d->api.op)                            \
			debug_compare_ran(&c, c.d->api.op(debug_compare_context(&c),         \
							  FWD(CMP_T)));                      \
		return call_end(&c);                                                         \
	}

/* One line per slot type: its parameters, tensors, their names, outputs. */
#define FWD_UNARY(T) T(0), T(1)
#define FWD_BINARY(T) T(0), T(1), T(2)
#define FWD_MATMUL(T) T(0), T(1), T(2), T(3)
#define FWD_GEMM(T) T(0), T(1), T(2), p
#define FWD_SCALE(T) T(0), T(1), s
#define FWD_RMS_NORM(T) T(0), T(1), T(2), eps
#define FWD_LAYER_NORM(T) T(0), T(1), T(2), T(3), eps
#define FWD_SOFTMAX(T) T(0), T(1), T(2), p
#define FWD_ROPE(T) T(0), T(1), T(2), p
#define FWD_ATTENTION(T) T(0), T(1), T(2), T(3), T(4), T(5), p
#define FWD_SAMPLE(T) T(0), T(1), uniform, p
#define FWD_ROPE_EXT(T) T(0), T(1), T(2), T(3), p
#define FWD_ATTENTION_EXT(T) T(0), T(1), T(2), T(3), T(4), T(5), T(6), p
#define FWD_ATTENTION_VARLEN(T) T(0), T(1), T(2), T(3), T(4), T(5), T(6), T(7), T(8), p
#define FWD_MOE_ROUTE(T) T(0), T(1), T(2), T(3), p
#define FWD_MATMUL_ID(T) T(0), T(1), T(2), T(3), T(4), T(5)
#define FWD_GLU(T) T(0), T(1), T(2), p
#define FWD_CLAMP(T) T(0), T(1), lo, hi

#define DEBUG_WRAP_gllmk_unary_fn(op) \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x), (y, x), ("y", "x"), 1, FWD_UNARY)
#define DEBUG_WRAP_gllmk_binary_fn(op) \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t a, gllmk_t b), (y, a, b), ("y", "a", "b"), 1, FWD_BINARY)
#define DEBUG_WRAP_gllmk_matmul_fn(op)                                                             \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias), (y, x, w, bias), \
			 ("y", "x", "w", "bias"), 1, FWD_MATMUL)
#define DEBUG_WRAP_gllmk_gemm_fn(op)                                                                 \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t c_, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p), \
			 (c_, a, b), ("c", "a", "b"), 1, FWD_GEMM)
#define DEBUG_WRAP_gllmk_scale_fn(op) \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, float s), (y, x), ("y", "x"), 1, FWD_SCALE)
#define DEBUG_WRAP_gllmk_rms_norm_fn(op)                                                          \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps), (y, x, w), \
			 ("y", "x", "w"), 1, FWD_RMS_NORM)
#define DEBUG_WRAP_gllmk_layer_norm_fn(op)                                                                  \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps), (y, x, w, b), \
			 ("y", "x", "w", "b"), 1, FWD_LAYER_NORM)
#define DEBUG_WRAP_gllmk_softmax_fn(op)                                                                     \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *p), \
			 (y, x, mask), ("y", "x", "mask"), 1, FWD_SOFTMAX)
#define DEBUG_WRAP_gllmk_rope_fn(op)                                                                  \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, gllmk_t pos, const gllmk_rope_params *p), \
			 (y, x, pos), ("y", "x", "pos"), 1, FWD_ROPE)
#define DEBUG_WRAP_gllmk_get_rows_fn(op)                                                      \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t table, gllmk_t ids), (y, table, ids), \
			 ("y", "table", "ids"), 1, FWD_BINARY)
#define DEBUG_WRAP_gllmk_attention_fn(op)                                                               \
	DEBUG_OP_WRAPPER(op,                                                                            \
			 (void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,             \
			  gllmk_t block_table, const gllmk_attention_params *p),                            \
			 (out, q, k, v, mask, block_table), ("out", "q", "k", "v", "mask", "block_table"), 1, \
			 FWD_ATTENTION)
#define DEBUG_WRAP_gllmk_argmax_fn(op) \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t ids, gllmk_t x), (ids, x), ("ids", "x"), 1, FWD_UNARY)
#define DEBUG_WRAP_gllmk_sample_fn(op)                                                             \
	DEBUG_OP_WRAPPER(op,                                                                       \
			 (void *st, gllmk_t ids, gllmk_t logits, const float *uniform,             \
			  const gllmk_sample_params *p),                                           \
			 (ids, logits), ("ids", "logits"), 1, FWD_SAMPLE)

#define DEBUG_WRAP_gllmk_rope_ext_fn(op)                                                            \
	DEBUG_OP_WRAPPER(op,                                                                        \
			 (void *st, gllmk_t y, gllmk_t x, gllmk_t pos, gllmk_t freq_factors,        \
			  const gllmk_rope_ext_params *p),                                          \
			 (y, x, pos, freq_factors), ("y", "x", "pos", "freq_factors"), 1, FWD_ROPE_EXT)
#define DEBUG_WRAP_gllmk_attention_ext_fn(op)                                                         \
	DEBUG_OP_WRAPPER(op,                                                                          \
			 (void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,           \
			  gllmk_t block_table, gllmk_t sinks, const gllmk_attention_ext_params *p),       \
			 (out, q, k, v, mask, block_table, sinks),                                    \
			 ("out", "q", "k", "v", "mask", "block_table", "sinks"), 1, FWD_ATTENTION_EXT)
#define DEBUG_WRAP_gllmk_attention_varlen_fn(op)                                                      \
	DEBUG_OP_WRAPPER(op,                                                                          \
			 (void *st, gllmk_t out, gllmk_t q, gllmk_t k, gllmk_t v, gllmk_t mask,           \
			  gllmk_t cu_q, gllmk_t kv_len, gllmk_t block_tables, gllmk_t sinks,              \
			  const gllmk_attention_ext_params *p),                                         \
			 (out, q, k, v, mask, cu_q, kv_len, block_tables, sinks),                     \
			 ("out", "q", "k", "v", "mask", "cu_q", "kv_len", "block_tables", "sinks"), 1,  \
			 FWD_ATTENTION_VARLEN)
#define DEBUG_WRAP_gllmk_kv_store_fn(op)                                                          \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t cache, gllmk_t x, gllmk_t slots), (cache, x, slots), \
			 ("cache", "x", "slots"), 1, FWD_BINARY)
#define DEBUG_WRAP_gllmk_top_k_fn(op)                                                            \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t values, gllmk_t ids, gllmk_t x), (values, ids, x), \
			 ("values", "ids", "x"), 2, FWD_BINARY)
#define DEBUG_WRAP_gllmk_moe_route_fn(op)                                                           \
	DEBUG_OP_WRAPPER(op,                                                                        \
			 (void *st, gllmk_t ids, gllmk_t weights, gllmk_t logits, gllmk_t bias,     \
			  const gllmk_moe_route_params *p),                                         \
			 (ids, weights, logits, bias), ("ids", "weights", "logits", "bias"), 2,      \
			 FWD_MOE_ROUTE)
#define DEBUG_WRAP_gllmk_matmul_id_fn(op)                                                            \
	DEBUG_OP_WRAPPER(op,                                                                         \
			 (void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias,      \
			  gllmk_t slot_weights),                                                     \
			 (y, x, w, ids, bias, slot_weights), ("y", "x", "w", "ids", "bias", "slot_weights"), 1, \
			 FWD_MATMUL_ID)
#define DEBUG_WRAP_gllmk_matmul_batched_fn(op)                                                 \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, gllmk_t w), (y, x, w), ("y", "x", "w"), 1, \
			 FWD_BINARY)
#define DEBUG_WRAP_gllmk_glu_fn(op)                                                                \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p), \
			 (y, gate, up), ("y", "gate", "up"), 1, FWD_GLU)
#define DEBUG_WRAP_gllmk_clamp_fn(op)                                                          \
	DEBUG_OP_WRAPPER(op, (void *st, gllmk_t y, gllmk_t x, float lo, float hi), (y, x), ("y", "x"), 1, \
			 FWD_CLAMP)

#define DEBUG_WRAP(op, type) DEBUG_WRAP_##type(op)
GLLMK_OPS(DEBUG_WRAP)
#undef DEBUG_WRAP

/* ------------------------------------------------------------ open, close */

static int open_output(struct debug_ctx *d, char *reason, size_t reason_len)
{
	if (!d->cfg.file[0]) {
		d->fd = STDERR_FILENO;
		return 0;
	}
	d->fd = open(d->cfg.file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (d->fd < 0) {
		snprintf(reason, reason_len, "GLLMK_DEBUG_FILE: cannot open '%s': %s", d->cfg.file, strerror(errno));
		return -1;
	}
	return 0;
}

static gllmk_status debug_open_common(const gllmk_open_args *args, void **state, char *reason, size_t reason_len,
				      int owns_memory)
{
	struct debug_ctx *d;

	if (!args->next || !args->host) {
		snprintf(reason, reason_len, "debug: opened without a next table");
		return GLLMK_E_INVALID;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(reason, reason_len, "debug: out of memory");
		return GLLMK_E_NO_MEMORY;
	}
	d->host = args->host;
	d->next = args->next;
	d->next_state = args->next_state;
	d->owns_memory = owns_memory;
	d->open_flags = args->flags; /* compare loosens matmul's bound where it permits bf16 activations */
	d->fd = -1;
	if (debug_config_read(&d->cfg, reason, reason_len) < 0 ||
	    debug_api_resolve(&d->api, d->host, reason, reason_len) < 0)
		goto fail;
	if (open_output(d, reason, reason_len) < 0)
		goto fail;
	/* Memory the layer does not own has no guards to check. */
	if (!owns_memory && (d->cfg.modes & DEBUG_CHECK))
		debug_print(d, "check: guard bytes are off (the layer was inserted without its buffer slots)");
	*state = d;
	return GLLMK_OK;
fail:
	debug_api_release(&d->api);
	free(d);
	return GLLMK_E_INVALID;
}

static gllmk_status debug_open_ops(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	return debug_open_common(args, state, reason, reason_len, 0);
}

static gllmk_status debug_open_owning(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	return debug_open_common(args, state, reason, reason_len, 1);
}

/* The core has freed every buffer and closes the plugin after this. */
static void debug_close(void *state)
{
	struct debug_ctx *d = state;

	if (d->cfg.modes & DEBUG_STATS)
		debug_stats_print(d);
	debug_compare_close(d);
	if (d->fd > STDERR_FILENO)
		close(d->fd);
	debug_api_release(&d->api);
	free(d);
}

static gllmk_status debug_open_off(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	(void)args;
	(void)reason;
	(void)reason_len;
	*state = NULL;
	return GLLMK_OK;
}

static void debug_close_off(void *state)
{
	(void)state;
}

/* ------------------------------------------------------------ tables */

#define DEBUG_TABLE_HEADER(table_name)              \
	.size = sizeof(gllmk_plugin_table),         \
	.abi_major = GLLMK_ABI_MAJOR,               \
	.abi_minor = GLLMK_ABI_MINOR,               \
	.name = table_name

#define DEBUG_TABLE_OP(op, type) .op = debug_##op,

/* GLLMK_DEBUG unset: nothing is wrapped, every slot is the plugin's. */
static const gllmk_plugin_table debug_off_table = {
	DEBUG_TABLE_HEADER("debug-off"),
	.open = debug_open_off,
	.close = debug_close_off,
};

/* trace, stats, compare: the operators; buffers stay the plugin's. */
static const gllmk_plugin_table debug_ops_table = {
	DEBUG_TABLE_HEADER("debug"),
	.open = debug_open_ops,
	.close = debug_close,
	GLLMK_OPS(DEBUG_TABLE_OP)
};

/* check: every slot, so every buffer has guards (SPEC/ABI.md §9 rule 4). */
static const gllmk_plugin_table debug_owning_table = {
	DEBUG_TABLE_HEADER("debug"),
	.open = debug_open_owning,
	.close = debug_close,
	.buffer_alloc = debug_buffer_alloc,
	.buffer_wrap = debug_buffer_wrap,
	.buffer_free = debug_buffer_free,
	.buffer_write = debug_buffer_write,
	.buffer_read = debug_buffer_read,
	.buffer_copy = debug_buffer_copy,
	.sync = debug_sync,
	GLLMK_OPS(DEBUG_TABLE_OP)
	.weights_prepare = debug_weights_prepare,
};

__attribute__((visibility("default")))
const gllmk_plugin_table *GLLMK_LAYER_ENTRY(const gllmk_host *host, const gllmk_plugin_table *next, char *reason,
					   size_t reason_len);

const gllmk_plugin_table *GLLMK_LAYER_ENTRY(const gllmk_host *host, const gllmk_plugin_table *next, char *reason,
					   size_t reason_len)
{
	struct debug_config cfg;

	if (!host || host->abi_major != GLLMK_ABI_MAJOR || !next) {
		snprintf(reason, reason_len, "debug speaks ABI %d.%d; the core speaks %u.%u", GLLMK_ABI_MAJOR,
			 GLLMK_ABI_MINOR, host ? host->abi_major : 0u, host ? host->abi_minor : 0u);
		return NULL;
	}
	if (debug_config_read(&cfg, reason, reason_len) < 0)
		return NULL;
	if (!cfg.modes)
		return &debug_off_table;
	return (cfg.modes & DEBUG_CHECK) ? &debug_owning_table : &debug_ops_table;
}
