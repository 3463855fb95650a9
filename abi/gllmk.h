/* gllmk — fast LLM operators on whatever hardware the machine has.
 *
 * This is the header a runtime includes. One context = one backend plugin,
 * chosen when the context is opened; every operator is validated here in the
 * core and then dispatched with one indirect call into the plugin.
 *
 * Changing anything in this file is an ABI change: see SPEC/ABI.md.
 */
#ifndef GLLMK_H
#define GLLMK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GLLMK_ABI_MAJOR 1
#define GLLMK_ABI_MINOR 2

#if defined(__GNUC__)
#define GLLMK_API __attribute__((visibility("default")))
#else
#define GLLMK_API
#endif

/* ------------------------------------------------------------------ status */

typedef enum gllmk_status {
	GLLMK_OK = 0,
	GLLMK_E_NULL = 1,          /* a required pointer argument is NULL */
	GLLMK_E_INVALID = 2,       /* a scalar argument is out of its range */
	GLLMK_E_DTYPE = 3,         /* unknown dtype, or a dtype the op does not take */
	GLLMK_E_SHAPE = 4,         /* shapes or ranks that do not fit together */
	GLLMK_E_OVERFLOW = 5,      /* a shape whose byte size does not fit in 64 bits */
	GLLMK_E_BOUNDS = 6,        /* a view or an index past the end of its buffer/table */
	GLLMK_E_BLOCK = 7,         /* a row length that is not a multiple of the quant block */
	GLLMK_E_ALIGN = 8,         /* an offset or stride not aligned to the dtype */
	GLLMK_E_ALIAS = 9,         /* an output overlaps an input where the op forbids it */
	GLLMK_E_CONTEXT = 10,      /* a buffer that belongs to another context */
	GLLMK_E_UNSUPPORTED = 11,  /* the plugin does not implement this op or variant */
	GLLMK_E_NO_MEMORY = 12,    /* host or device allocation failed */
	GLLMK_E_NO_PLUGIN = 13,    /* no plugin could be loaded/opened (see the report) */
	GLLMK_E_BACKEND = 14,      /* the device failed (lost device, driver error) */
} gllmk_status;

/* A sentence for a status code ("shape mismatch"). Never NULL. */
GLLMK_API const char *gllmk_status_string(gllmk_status st);

/* The message of the last failed call on this thread, naming the argument
 * and the rule it broke ("gllmk_matmul: w.shape[1] = 4096 but x.shape[1] = 4095 (K must match)").
 * Empty string if nothing failed yet. Thread-local; it stays until the next
 * failing gllmk call on this thread replaces it (successful calls leave it). */
GLLMK_API const char *gllmk_last_error(void);

/* ------------------------------------------------------------------- dtypes */

/* Values equal ggml's / GGUF's type ids, so a GGUF tensor type maps 1:1.
 * Every dtype's facts (id, name, block, alignment, the ABI minor that added
 * it) are one line of gllmk_dtypes.def, installed beside this header; block
 * layouts are ggml's, bit for bit: SPEC/QUANT.md. The dtypes of ABI 1.1
 * (the i-quants below 4 bits, the ternary tq1_0 / tq2_0 and mxfp4) reach
 * only plugins of minor 1 or later; an older plugin answers
 * GLLMK_E_UNSUPPORTED naming the dtype. */
typedef enum gllmk_dtype {
#define GLLMK_DTYPE(e, id, ...) e = id,
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
} gllmk_dtype;

#define GLLMK_DTYPE_LIMIT 40 /* every dtype value is below this (31 in ABI 1.0) */

/* "f32", "q4_K", ... ; NULL for a value that is not a gllmk dtype. */
GLLMK_API const char *gllmk_dtype_name(gllmk_dtype t);
/* Elements per block (1 for f32/f16/bf16/i32, 32 or 256 for quant types),
 * 0 for an unknown dtype. */
GLLMK_API int64_t gllmk_dtype_block_elems(gllmk_dtype t);
/* Bytes per block (4 for f32, 18 for q4_0, ...), 0 for an unknown dtype. */
GLLMK_API int64_t gllmk_dtype_block_bytes(gllmk_dtype t);
/* Bytes of a row of n elements; GLLMK_E_BLOCK if n is not a multiple of the
 * block, GLLMK_E_OVERFLOW if it does not fit, GLLMK_E_DTYPE if unknown. */
GLLMK_API gllmk_status gllmk_dtype_row_bytes(gllmk_dtype t, int64_t n, uint64_t *bytes);

/* ------------------------------------------------------- context, options */

typedef struct gllmk_context gllmk_context;
typedef struct gllmk_buffer gllmk_buffer;

enum gllmk_open_flags {
	/* Ignore the GLLMK_PLUGIN environment override (tests, embedders). */
	GLLMK_OPEN_NO_ENV = 1u << 0,
	/* Do not insert a preloaded layer (libgllmk-debug.so) into this context. */
	GLLMK_OPEN_NO_LAYERS = 1u << 1,
	/* (ABI 1.1) Permission, not a request: gllmk_matmul, gllmk_matmul_id and
	 * gllmk_matmul_batched with bf16 weights may round each element of x to
	 * bf16 (round to nearest even, as ggml does) before the products, so that
	 * a CPU with AVX512-BF16 runs them on vdpbf16ps. Their results then meet
	 * the looser bound of SPEC/TOLERANCES.md ("bf16 activations": 2^-8 of
	 * Σ|x·w| per element, 2^-8 norm-wise) instead of the f32 one. Nothing
	 * else changes: other weight dtypes, other ops and every plugin without
	 * such a path (today all but cpu-avx512 on AVX512-BF16, which also keeps
	 * small M exact) ignore it and stay exact. */
	GLLMK_OPEN_BF16_ACTIVATIONS = 1u << 2,
};

typedef struct gllmk_options {
	uint32_t struct_size;   /* sizeof(gllmk_options): lets the struct grow */
	uint32_t flags;         /* enum gllmk_open_flags */
	/* Plugin names to try in this order, comma-separated ("cpu-avx2,cpu-generic").
	 * Names only, never paths. NULL: automatic detection (or GLLMK_PLUGIN).
	 * A named plugin that cannot run here is an error, not a fallback. */
	const char *plugins;
	/* Directory that holds libgllmk-<name>.so. NULL: the installed one,
	 * found next to libgllmk.so.1 (<libdir>/gllmk). */
	const char *plugin_dir;
	/* Worker threads for CPU plugins; 0: one per physical core. */
	int32_t n_threads;
	int32_t reserved;
} gllmk_options;

/* Open a context on the best plugin (opts NULL = automatic detection).
 * On GLLMK_E_NO_PLUGIN, gllmk_last_error() says why each candidate failed and
 * gllmk_survey() gives the details. */
GLLMK_API gllmk_status gllmk_open(const gllmk_options *opts, gllmk_context **ctx);
/* Frees the context and every buffer still allocated in it. NULL is a no-op. */
GLLMK_API void gllmk_close(gllmk_context *ctx);
/* Waits until every operator enqueued on ctx has finished. */
GLLMK_API gllmk_status gllmk_sync(gllmk_context *ctx);

/* ------------------------------------------------------------ introspection */

typedef enum gllmk_verdict {
	GLLMK_VERDICT_SELECTED = 0,      /* serves this context */
	GLLMK_VERDICT_USABLE = 1,        /* could run, an earlier plugin was preferred */
	GLLMK_VERDICT_BY_NAME_ONLY = 2,  /* runs here, but only when asked for by name */
	GLLMK_VERDICT_NOT_INSTALLED = 3, /* no file */
	GLLMK_VERDICT_LOAD_FAILED = 4,   /* the file would not load (not ELF, missing library) */
	GLLMK_VERDICT_NO_ENTRY = 5,      /* no gllmk_plugin_entry_v<major> symbol */
	GLLMK_VERDICT_ABI_MISMATCH = 6,  /* another major, or a malformed table */
	GLLMK_VERDICT_REFUSED = 7,       /* the plugin's entry refused this core */
	GLLMK_VERDICT_CANNOT_RUN = 8,    /* the probe says this machine cannot run it */
	GLLMK_VERDICT_OPEN_FAILED = 9,   /* the probe said yes but opening failed */
	GLLMK_VERDICT_NOT_REQUESTED = 10,/* an override named other plugins */
	GLLMK_VERDICT_NOT_TRIED = 11,    /* after the selected one; not probed */
} gllmk_verdict;

typedef struct gllmk_plugin_report {
	const char *name;     /* "cpu-avx2" */
	const char *path;     /* the file considered */
	gllmk_verdict verdict;
	uint32_t abi_major;   /* as the plugin's table says; 0 if not read */
	uint32_t abi_minor;
	const char *reason;   /* a sentence: why this verdict */
	const char *device;   /* what the probe found ("AVX2+FMA, 2 cores"); "" if none */
} gllmk_plugin_report;

typedef struct gllmk_report {
	size_t count;
	const gllmk_plugin_report *plugins; /* in detection (or override) order */
	int32_t selected;                   /* index into plugins, -1 if none */
	const char *plugin_dir;             /* where the plugins were looked for */
	const char *layer;                  /* preloaded layer inserted, or NULL */
} gllmk_report;

/* What happened when ctx was opened. Owned by ctx. */
GLLMK_API const gllmk_report *gllmk_context_report(const gllmk_context *ctx);
/* Name of the plugin serving ctx ("cpu-avx512"). */
GLLMK_API const char *gllmk_context_plugin(const gllmk_context *ctx);
/* Loads and probes every candidate (opening none) and says which one
 * gllmk_open(opts) would select. Free with gllmk_report_free. */
GLLMK_API gllmk_status gllmk_survey(const gllmk_options *opts, gllmk_report **out);
GLLMK_API void gllmk_report_free(gllmk_report *r);
GLLMK_API const char *gllmk_verdict_string(gllmk_verdict v);

/* ------------------------------------------------------------------ buffers */

/* Buffers belong to the backend (device memory on a GPU). Operators are
 * enqueued in call order; gllmk_buffer_write copies src before returning;
 * gllmk_buffer_read waits for every earlier operator. */
GLLMK_API gllmk_status gllmk_buffer_alloc(gllmk_context *ctx, uint64_t size, gllmk_buffer **out);
/* Use host memory in place (it must outlive the buffer). GLLMK_E_UNSUPPORTED
 * where the backend cannot; then alloc + write. */
GLLMK_API gllmk_status gllmk_buffer_wrap(gllmk_context *ctx, void *host, uint64_t size, gllmk_buffer **out);
GLLMK_API void gllmk_buffer_free(gllmk_buffer *buf);
GLLMK_API uint64_t gllmk_buffer_size(const gllmk_buffer *buf);
GLLMK_API gllmk_status gllmk_buffer_write(gllmk_buffer *buf, uint64_t offset, const void *src, uint64_t size);
GLLMK_API gllmk_status gllmk_buffer_read(gllmk_buffer *buf, uint64_t offset, void *dst, uint64_t size);
GLLMK_API gllmk_status gllmk_buffer_copy(gllmk_buffer *dst, uint64_t dst_offset, gllmk_buffer *src,
					  uint64_t src_offset, uint64_t size);

/* ------------------------------------------------------------------ tensors */

#define GLLMK_MAX_DIMS 4

/* A view into a buffer. shape[0] is the outermost dimension, shape[ndim-1]
 * the innermost, which is always contiguous: stride[ndim-1] must be 0 or the
 * element size (0 for block dtypes). Outer strides are in bytes, so a view
 * can pick rows out of a larger tensor (a KV cache, a batch). Entries past
 * ndim are ignored. For block dtypes, shape[ndim-1] counts elements and must
 * be a multiple of the block. */
typedef struct gllmk_tensor {
	gllmk_buffer *buf;
	uint64_t offset;
	int32_t dtype;  /* gllmk_dtype */
	int32_t ndim;   /* 1..GLLMK_MAX_DIMS */
	int64_t shape[GLLMK_MAX_DIMS];
	int64_t stride[GLLMK_MAX_DIMS];
} gllmk_tensor;

/* A contiguous view: strides computed from the shape. Validation happens
 * when the view is used, so this never fails. */
GLLMK_API gllmk_tensor gllmk_tensor_make(gllmk_buffer *buf, uint64_t offset, gllmk_dtype dtype,
					 int32_t ndim, const int64_t *shape);

/* ---------------------------------------------------------------- operators */

/* All operators enqueue work on the context of their tensors' buffers and
 * return before it finishes (CPU plugins finish before returning). Unless an
 * op says otherwise: activations are f32; an output may be exactly one of the
 * inputs (in place) but must not partially overlap any input; rows are the
 * innermost dimension and outer dims are iterated. */

/* y[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N]). x, y, bias f32; w f32, f16, bf16 or
 * any quant dtype. y must not overlap x, w or bias. */
GLLMK_API gllmk_status gllmk_matmul(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
				    const gllmk_tensor *w, const gllmk_tensor *bias);

typedef struct gllmk_gemm_params {
	int32_t trans_a; /* 0: a is [M,K]; 1: a is [K,M] */
	int32_t trans_b; /* 0: b is [K,N]; 1: b is [N,K] */
	float alpha;
	float beta;      /* 0: c is not read (NaN in c does not propagate) */
} gllmk_gemm_params;

/* BLAS sgemm, row-major: c[M,N] = alpha·op(a)·op(b) + beta·c. All f32. */
GLLMK_API gllmk_status gllmk_gemm(gllmk_context *ctx, const gllmk_tensor *c, const gllmk_tensor *a,
				  const gllmk_tensor *b, const gllmk_gemm_params *p);

/* y (f32) = x decoded, x any dtype but i32; same shape. */
GLLMK_API gllmk_status gllmk_dequantize(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
/* y (q8_0 or q8_K) = x (f32) quantized as ggml does; same shape. */
GLLMK_API gllmk_status gllmk_quantize(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
/* y = x between f32, f16 and bf16 (round to nearest even); same shape. */
GLLMK_API gllmk_status gllmk_convert(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);

/* y = a + b, y = a * b. b broadcasts: aligned from the innermost dim, each of
 * its dims is 1 or equal to a's (b may have fewer dims). */
GLLMK_API gllmk_status gllmk_add(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *a,
				 const gllmk_tensor *b);
GLLMK_API gllmk_status gllmk_mul(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *a,
				 const gllmk_tensor *b);
/* y = x · s */
GLLMK_API gllmk_status gllmk_scale(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x, float s);

/* Unary activations, y and x of the same shape. */
GLLMK_API gllmk_status gllmk_silu(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
GLLMK_API gllmk_status gllmk_gelu_tanh(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
GLLMK_API gllmk_status gllmk_gelu_erf(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
GLLMK_API gllmk_status gllmk_relu(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
GLLMK_API gllmk_status gllmk_tanh(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
GLLMK_API gllmk_status gllmk_exp(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
/* y = silu(gate) · up */
GLLMK_API gllmk_status gllmk_swiglu(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *gate,
				    const gllmk_tensor *up);

/* y = x / sqrt(mean(x²) + eps) (· w). w: NULL or 1-D f32 of the row length. */
GLLMK_API gllmk_status gllmk_rms_norm(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
				      const gllmk_tensor *w, float eps);
/* y = (x − mean) / sqrt(var + eps) (· w) (+ b). w, b: NULL or 1-D f32. */
GLLMK_API gllmk_status gllmk_layer_norm(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
					const gllmk_tensor *w, const gllmk_tensor *b, float eps);

typedef struct gllmk_softmax_params {
	float scale;    /* applied to x before the mask; must be finite */
	int32_t causal; /* row i of the [.., R, N] rows sees columns j <= i + (N - R) */
	int32_t reserved;
} gllmk_softmax_params;

/* y = softmax(scale·x + mask) over the innermost dim, numerically stable.
 * mask: NULL or f32 [R, N] with R = x.shape[ndim-2] (ndim >= 2), added to
 * every matrix of the leading dims; -inf allowed. A row with every entry
 * masked gives zeros. */
GLLMK_API gllmk_status gllmk_softmax(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
				     const gllmk_tensor *mask, const gllmk_softmax_params *p);

enum gllmk_rope_mode {
	GLLMK_ROPE_NORMAL = 0, /* rotates pairs (x[2i], x[2i+1]) (GPT-J, LLaMA in GGUF) */
	GLLMK_ROPE_NEOX = 1,   /* rotates pairs (x[i], x[i + n_rot/2]) (GPT-NeoX, Qwen) */
};

typedef struct gllmk_rope_params {
	int32_t mode;     /* enum gllmk_rope_mode */
	int32_t n_rot;    /* dims rotated (even, <= head dim); 0: all; the rest copied */
	float theta_base; /* 10000 for LLaMA */
	float freq_scale; /* 1 = none; linear position interpolation otherwise */
} gllmk_rope_params;

/* y, x: f32 [T, H, D]; pos: i32 [T]. Pair i of token t turns by angle
 * pos[t] · freq_scale · theta_base^(−2i/n_rot). */
GLLMK_API gllmk_status gllmk_rope(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
				  const gllmk_tensor *pos, const gllmk_rope_params *p);

/* y[i,:] = table[ids[i],:] decoded to f32. table: [V, K] any dtype but i32;
 * ids: i32 [n]; y: f32 [n, K]. An id outside [0, V) is GLLMK_E_BOUNDS. */
GLLMK_API gllmk_status gllmk_get_rows(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *table,
				      const gllmk_tensor *ids);

typedef struct gllmk_attention_params {
	float scale;     /* on q·k; 0: 1/sqrt(head dim) */
	int32_t causal;  /* query i sees kv tokens t <= kv_len - Tq + i */
	int32_t kv_len;  /* valid kv tokens; 0: all of a contiguous k (required when paged) */
	int32_t reserved;
} gllmk_attention_params;

/* Fused attention with online softmax (no Tq×Tkv scores in memory).
 *   q: f32 [Tq, Hq, D]           out: f32 [Tq, Hq, Dv] (must not overlap inputs)
 *   contiguous: k [Tkv, Hkv, D], v [Tkv, Hkv, Dv]
 *   paged:      k [nblk, B, Hkv, D], v [nblk, B, Hkv, Dv], block_table i32 [npages];
 *               token t lives in block block_table[t / B], slot t % B.
 *   k, v: f32 or f16. Hq a multiple of Hkv (GQA/MQA).
 *   mask: NULL or f32 [Tq, >= kv_len], added to the scaled scores (tree masks).
 * A query that sees no token gives zeros. A block id outside [0, nblk) is
 * GLLMK_E_BOUNDS. */
GLLMK_API gllmk_status gllmk_attention(gllmk_context *ctx, const gllmk_tensor *out, const gllmk_tensor *q,
				       const gllmk_tensor *k, const gllmk_tensor *v, const gllmk_tensor *mask,
				       const gllmk_tensor *block_table, const gllmk_attention_params *p);

/* ids: i32 [R]; x: f32 [R, N]. The largest value's index; ties: the lowest. */
GLLMK_API gllmk_status gllmk_argmax(gllmk_context *ctx, const gllmk_tensor *ids, const gllmk_tensor *x);

typedef struct gllmk_sample_params {
	float temperature; /* <= 0: argmax */
	int32_t top_k;     /* <= 0 or >= N: no limit */
	float top_p;       /* >= 1: no limit; else keep the smallest prefix with mass >= top_p */
	int32_t reserved;
} gllmk_sample_params;

/* Temperature + top-k + top-p sampling, deterministic given uniform[r] in
 * [0, 1) for row r (host memory, R floats). SPEC/OPERATORS.md gives the exact
 * procedure every plugin follows. ids: i32 [R]; logits: f32 [R, N]. */
GLLMK_API gllmk_status gllmk_sample(gllmk_context *ctx, const gllmk_tensor *ids, const gllmk_tensor *logits,
				    const float *uniform, const gllmk_sample_params *p);

/* ------------------------------------------------------- operators, ABI 1.1 */
/* A plugin built for ABI 1.0 answers GLLMK_E_UNSUPPORTED for each of these.
 * Every params struct of 1.1 begins with struct_size: set it to
 * sizeof(the struct). Fields past struct_size read as 0 (their defaults), so
 * an older caller keeps working when a later minor appends fields; one too
 * small to hold the op's leading fields is GLLMK_E_INVALID.
 * SPEC/OPERATORS.md gives the exact semantics, after ggml's. */

typedef struct gllmk_rope_ext_params {
	uint32_t struct_size;
	int32_t mode;        /* enum gllmk_rope_mode */
	int32_t n_rot;       /* dims rotated (even, <= head dim); 0: all; the rest copied */
	float theta_base;    /* 10000 for LLaMA, 500000 for Llama 3 */
	float freq_scale;    /* 1 = none; linear interpolation (YaRN: 1/factor) */
	float ext_factor;    /* YaRN extrapolation mix; 0 = off */
	float attn_factor;   /* scales cos and sin; 0 is read as 1 */
	float beta_fast;     /* YaRN; 0 is read as 32 */
	float beta_slow;     /* YaRN; 0 is read as 1 */
	int32_t n_ctx_orig;  /* YaRN: the training context; 0 = off */
} gllmk_rope_ext_params;

/* rope with ggml's extensions. freq_factors: NULL or f32 [n_rot/2], pair i's
 * angle divided by freq_factors[i] (Llama 3.x rope_freqs, LongRoPE factors).
 * YaRN as ggml_rope_ext: the angle mixes interpolated and extrapolated
 * frequencies over ggml's correction dims, and cos/sin are scaled by
 * attn_factor · (1 + 0.1·ln(1/freq_scale)) when ext_factor != 0.
 * gllmk_rope(p) equals gllmk_rope_ext with freq_factors NULL and the YaRN
 * fields 0. y, x: f32 [T, H, D]; pos: i32 [T]. */
GLLMK_API gllmk_status gllmk_rope_ext(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
				      const gllmk_tensor *pos, const gllmk_tensor *freq_factors,
				      const gllmk_rope_ext_params *p);

typedef struct gllmk_attention_ext_params {
	uint32_t struct_size;
	float scale;       /* on q·k; 0: 1/sqrt(head dim) */
	int32_t causal;    /* query i sees kv tokens t <= kv_len - Tq + i (per sequence) */
	int32_t kv_len;    /* gllmk_attention_ext: as gllmk_attention_params.kv_len */
	float softcap;     /* > 0: scores = softcap · tanh(scores / softcap) (Gemma 2); 0 = off */
	float max_bias;    /* > 0: ALiBi: score += -slope_h · |p - t|, ggml's slope per head; 0 = off */
	int32_t window;    /* > 0: query at position p sees only t > p - window; 0 = off */
	int32_t reserved;
} gllmk_attention_ext_params;

/* gllmk_attention with the options of current model families:
 *   k, v: f32, f16, bf16, q8_0 or q4_0 (blocks along D; D a multiple of 32 for
 *         the block types), contiguous [Tkv, Hkv, D] or paged [nblk, B, Hkv, D];
 *   mask: NULL, f32 [Tq, >= kv_len] shared by the heads, or [Hq, Tq, >= kv_len];
 *   sinks: NULL or f32 [Hq], one extra logit per head in the softmax
 *          denominator (gpt-oss); it adds no value.
 * p = kv_len - Tq + i is query i's position. Order on a score: scale,
 * softcap, + ALiBi, + mask, then causal and window. */
GLLMK_API gllmk_status gllmk_attention_ext(gllmk_context *ctx, const gllmk_tensor *out, const gllmk_tensor *q,
					   const gllmk_tensor *k, const gllmk_tensor *v, const gllmk_tensor *mask,
					   const gllmk_tensor *block_table, const gllmk_tensor *sinks,
					   const gllmk_attention_ext_params *p);

/* Attention over S sequences in one call (continuous batching).
 *   q: f32 [sum Tq, Hq, D], out: f32 [sum Tq, Hq, Dv]; sequence s owns query
 *      rows cu_q[s] .. cu_q[s+1]-1 (cu_q: i32 [S+1], cu_q[0] = 0, non-decreasing,
 *      cu_q[S] = sum Tq);
 *   k, v: one paged cache [nblk, B, Hkv, D], dtypes as gllmk_attention_ext;
 *   kv_len: i32 [S], the tokens of sequence s (a sequence may have 0);
 *   block_tables: i32 [S, P], sequence s's token t in block block_tables[s, t/B];
 *   mask: NULL or f32 [sum Tq, >= max kv_len]: row r's column t applies to
 *         token t of r's sequence;
 *   sinks, p (kv_len ignored): as gllmk_attention_ext, causal per sequence.
 * Index data outside its range is GLLMK_E_BOUNDS naming the sequence. */
GLLMK_API gllmk_status gllmk_attention_varlen(gllmk_context *ctx, const gllmk_tensor *out, const gllmk_tensor *q,
					      const gllmk_tensor *k, const gllmk_tensor *v, const gllmk_tensor *mask,
					      const gllmk_tensor *cu_q, const gllmk_tensor *kv_len,
					      const gllmk_tensor *block_tables, const gllmk_tensor *sinks,
					      const gllmk_attention_ext_params *p);

/* Scatter x f32 [T, Hkv, D] into cache slots: slots i32 [T]; -1 skips the row.
 * cache: paged [nblk, B, Hkv, D] (slot s is block s / B, row s % B) or
 * contiguous [S, Hkv, D] (slot s is row s); f32, f16, bf16, q8_0 or q4_0,
 * converted on the way as gllmk_convert / gllmk_quantize would. A slot past
 * the cache is GLLMK_E_BOUNDS naming the row. */
GLLMK_API gllmk_status gllmk_kv_store(gllmk_context *ctx, const gllmk_tensor *cache, const gllmk_tensor *x,
				      const gllmk_tensor *slots);

/* Per row of x f32 [R, N]: the k = ids.shape[1] largest values, largest first
 * (ties: the lower index first). ids: i32 [R, k]; values: NULL or f32 [R, k]. */
GLLMK_API gllmk_status gllmk_top_k(gllmk_context *ctx, const gllmk_tensor *values, const gllmk_tensor *ids,
				   const gllmk_tensor *x);

enum gllmk_moe_gating {
	GLLMK_GATING_SOFTMAX = 0,       /* probs = softmax(logits) over E, then top-k */
	GLLMK_GATING_SIGMOID = 1,       /* probs = sigmoid(logits), then top-k (DeepSeek V3) */
	GLLMK_GATING_SOFTMAX_AFTER = 2, /* top-k of the logits, weights = softmax over the k */
};

typedef struct gllmk_moe_route_params {
	uint32_t struct_size;
	int32_t gating;     /* enum gllmk_moe_gating */
	int32_t n_group;    /* > 1: grouped top-k (DeepSeek V3); 0 or 1 = off */
	int32_t topk_group; /* groups kept when grouped */
	int32_t norm;       /* 1: weights divided by their sum */
	float scale;        /* weights multiplied by it; 0 is read as 1 */
} gllmk_moe_route_params;

/* Router logits f32 [T, E] -> expert ids i32 [T, k] and weights f32 [T, k]
 * (k = ids.shape[1]). bias: NULL or f32 [E], added to the scores used for
 * selection only (DeepSeek V3's exp_probs_b). Grouped: the E experts form
 * n_group groups of E/n_group; a group's score is the sum of its two best
 * selection scores; only the topk_group best groups are eligible. */
GLLMK_API gllmk_status gllmk_moe_route(gllmk_context *ctx, const gllmk_tensor *ids, const gllmk_tensor *weights,
				       const gllmk_tensor *logits, const gllmk_tensor *bias,
				       const gllmk_moe_route_params *p);

/* Expert matmul: w [E, N, K] in any weight dtype of gllmk_matmul, ids i32 [T, k].
 *   x: f32 [T, K] (every slot reads the token's row) or [T, k, K] (one row per slot);
 *   bias: NULL or f32 [E, N];
 *   slot_weights NULL: y f32 [T, k, N], y[t,j] = x[t(,j)] · w[ids[t,j]]ᵀ (+ bias[ids[t,j]]);
 *   slot_weights f32 [T, k]: y f32 [T, N] = sum_j slot_weights[t,j] · (the above).
 * An id outside [0, E) is GLLMK_E_BOUNDS naming the token and slot. */
GLLMK_API gllmk_status gllmk_matmul_id(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
				       const gllmk_tensor *w, const gllmk_tensor *ids, const gllmk_tensor *bias,
				       const gllmk_tensor *slot_weights);

/* y [B, M, N] = x [B, M, K] · w[b]ᵀ, w [B or 1, N, K] in any weight dtype of
 * gllmk_matmul (a w with shape[0] 1 serves every batch). */
GLLMK_API gllmk_status gllmk_matmul_batched(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x,
					    const gllmk_tensor *w);

enum gllmk_glu_op {
	GLLMK_GLU_SILU = 0,       /* SwiGLU: silu(g) · u */
	GLLMK_GLU_GELU_TANH = 1,  /* GEGLU */
	GLLMK_GLU_GELU_ERF = 2,
	GLLMK_GLU_RELU = 3,       /* ReGLU */
	GLLMK_GLU_SWIGLU_OAI = 4, /* gpt-oss: g' = min(g, limit), u' = clamp(u, -limit, limit),
				   * y = g' · sigmoid(alpha · g') · (u' + 1) */
};

typedef struct gllmk_glu_params {
	uint32_t struct_size;
	int32_t op;      /* enum gllmk_glu_op */
	int32_t swapped; /* fused input only: 1 = the up half comes first */
	float alpha;     /* SWIGLU_OAI: 0 is read as 1.702 */
	float limit;     /* SWIGLU_OAI: 0 is read as 7 */
} gllmk_glu_params;

/* y = act(gate) · up. up NULL: gate is fused [.., 2N] (gate half first unless
 * swapped) and y is [.., N]; else gate, up and y have one shape. */
GLLMK_API gllmk_status gllmk_glu(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *gate,
				 const gllmk_tensor *up, const gllmk_glu_params *p);

/* y = 1 / (1 + exp(-x)) */
GLLMK_API gllmk_status gllmk_sigmoid(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x);
/* y = min(max(x, lo), hi); lo <= hi, neither NaN */
GLLMK_API gllmk_status gllmk_clamp(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x, float lo,
				   float hi);
/* y = c · tanh(x / c), c > 0 and finite (Gemma's final logits) */
GLLMK_API gllmk_status gllmk_softcap(gllmk_context *ctx, const gllmk_tensor *y, const gllmk_tensor *x, float c);

/* ------------------------------------------------ prepared weights, ABI 1.2 */

/* A copy of the weight tensor w in a layout the plugin chose for its own
 * kernels (rows interleaved for its integer dot products, as llama.cpp
 * repacks Q4_0 when it loads a model), as a new buffer of ctx in *out. The
 * view gllmk_tensor_make(*out, 0, w->dtype, w->ndim, w->shape) then stands
 * for w as the w of gllmk_matmul, gllmk_matmul_id and gllmk_matmul_batched,
 * the table of gllmk_get_rows and the x of gllmk_dequantize, with w's
 * results (get_rows and dequantize exactly; the matmuls within w's
 * tolerance, SPEC/TOLERANCES.md). Nothing else: another op, another view of
 * the buffer (offset, shape, dtype, strides) and gllmk_buffer_read, _write
 * and _copy on it are GLLMK_E_INVALID, naming the rule. w is only read:
 * free it once the copy is all the runtime needs. gllmk_buffer_size(*out)
 * is the copy's memory (SPEC/ABI.md, "Prepared weights").
 *   w: a contiguous [N, K] matrix or [E, N, K] experts of a weight dtype.
 * A plugin without a layout for w's dtype or shape answers
 * GLLMK_E_UNSUPPORTED, saying why, and leaves *out NULL: keep using w (a
 * plugin of ABI 1.0 or 1.1 answers so for every w). */
GLLMK_API gllmk_status gllmk_weights_prepare(gllmk_context *ctx, const gllmk_tensor *w, gllmk_buffer **out);

#ifdef __cplusplus
}
#endif
#endif /* GLLMK_H */
