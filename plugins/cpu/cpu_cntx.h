/* The ISA-specific part of a CPU plugin, BLIS's context ("cntx"): which
 * kernel (an inner loop over one row or one register block) each slot
 * runs. Each CPU plugin fills `const struct cpu_cntx` tables in its
 * plugins/cpu-<isa>/cntx_<isa>.c, naming every kernel it adds, and the
 * framework in plugins/cpu/ calls through the one open picked (struct
 * cpu_state's k); nothing else differs between CPU plugins. Kernels never
 * validate: the core did, and the framework only hands them whole rows and
 * whole blocks.
 */
#ifndef GLLMK_CPU_CNTX_H
#define GLLMK_CPU_CNTX_H

#include <stdint.h>

#include "gllmk.h"

/* Decode n elements (a multiple of the block) of a row of dtype t to f32. */
typedef void (*cpu_dequant_row_fn)(const void *src, float *dst, int64_t n);
/* Encode n f32 elements (a multiple of the block) into a row of dtype t. */
typedef void (*cpu_quant_row_fn)(const float *src, void *dst, int64_t n);
/* Dot product of n elements: one weight row w (its dtype) with one
 * activation row xq already encoded in vec_dtype (see below). The dot
 * kernels' types are function types, so that a header declares its
 * kernels by name: cpu_vec_dot_fn avx2_vec_dot_q4_K, ...; */
typedef float cpu_vec_dot_fn(int64_t n, const void *w, const void *xq);

/* Elementwise, over n contiguous f32. y may equal x (in place). */
typedef void (*cpu_unary_row_fn)(float *y, const float *x, int64_t n);
typedef void (*cpu_binary_row_fn)(float *y, const float *a, const float *b, int64_t n);
typedef void (*cpu_scale_row_fn)(float *y, const float *x, float s, int64_t n);
/* Elementwise with two scalars: clamp (s = lo, t = hi), softcap (s = c,
 * t = 1/c); and the glu of two rows with two (swiglu_oai: alpha, limit). */
typedef void (*cpu_scalar2_row_fn)(float *y, const float *x, float s, float t, int64_t n);
typedef void (*cpu_binary2_row_fn)(float *y, const float *a, const float *b, float s, float t, int64_t n);
typedef void (*cpu_rms_norm_row_fn)(float *y, const float *x, const float *w, int64_t n, float eps);
typedef void (*cpu_layer_norm_row_fn)(float *y, const float *x, const float *w, const float *b, int64_t n,
				      float eps);
typedef void (*cpu_softmax_write_row_fn)(float *y, const float *x, const float *mask, float scale, float max,
					 float inv_sum, int64_t n);
typedef void (*cpu_rope_row_fn)(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot,
				int neox);

/* The row kernels that write a row of output, as slots of their own: struct
 * cpu_cntx's nt (see there). */
struct cpu_row_writers {
	cpu_binary_row_fn add_row, mul_row, swiglu_row;
	cpu_scale_row_fn scale_row;
	cpu_unary_row_fn silu_row, gelu_tanh_row, gelu_erf_row, relu_row, tanh_row, exp_row;
	cpu_unary_row_fn sigmoid_row;
	cpu_scalar2_row_fn clamp_row, softcap_row;
	cpu_binary_row_fn geglu_row, geglu_erf_row, reglu_row;
	cpu_binary2_row_fn swiglu_oai_row;
	cpu_rms_norm_row_fn rms_norm_row;
	cpu_layer_norm_row_fn layer_norm_row;
	cpu_softmax_write_row_fn softmax_write_row;
	cpu_rope_row_fn rope_row;
};

/* dot_rows weight rows w, w + w_stride, ... (w_stride in bytes, any value,
 * 0 included), each dotted with one activation row xq: out[r] is what
 * vec_dot(n, w + r·w_stride, xq) gives, up to f32 summation order. One call
 * shares the activation's loads and scales between the rows and gives the
 * core dot_rows independent chains (M = 1 streams the weights once). */
typedef void cpu_vec_dot_rows_fn(int64_t n, const void *w, int64_t w_stride, const void *xq, float *out);
#define CPU_DOT_ROWS_MAX 8
/* The same dot_rows weight rows against x_rows activation rows xq,
 * xq + xq_stride, ... (bytes): out[i·dot_rows + r] is row r against
 * activation row i. A register block for small M > 1 (several rows of
 * prompt): the weights are loaded once for x_rows activation rows. */
typedef void cpu_vec_dot_tile_fn(int64_t n, const void *w, int64_t w_stride, const void *xq, int64_t xq_stride,
				 float *out);
#define CPU_DOT_X_ROWS_MAX 8

/* How matmul treats weight dtype t: activation rows are encoded once per call
 * into vec_dtype (F32 = used as is; Q8_0 or Q8_K = quantized, as ggml does)
 * and each output is vec_dot(K, w_row, x_row). A NULL vec_dot means the
 * framework dequantizes weight rows to f32 and uses the f32 path. Optional:
 * vec_dot_rows with dot_rows (2..CPU_DOT_ROWS_MAX) rows a call, used for
 * groups of evenly spaced weight rows (vec_dot does the rest), and with it
 * vec_dot_tile, x_rows (2..CPU_DOT_X_ROWS_MAX) activation rows a call. */
struct cpu_matmul_kernel {
	int32_t vec_dtype;
	cpu_vec_dot_fn *vec_dot;
	cpu_vec_dot_rows_fn *vec_dot_rows;
	int dot_rows;
	cpu_vec_dot_tile_fn *vec_dot_tile;
	int x_rows;
};

/* The layouts of prepared weights (plugins/cpu/prepared.h): a buffer's
 * gllmk_buffer.layout, 0 for the file's own. */
enum cpu_layout {
	CPU_LAYOUT_PLAIN = 0,
	CPU_LAYOUT_Q4_0X8 = 1, /* q4_0, 8 rows interleaved; q8_0 activations */
	CPU_LAYOUT_Q4_KX8 = 2, /* q4_K, 8 rows interleaved; q8_K activations */
	CPU_LAYOUT_IQ4_XSX8 = 3, /* iq4_xs, 8 rows interleaved; q8_K activations */
	CPU_LAYOUT_Q5_KX8 = 4, /* q5_K, 8 rows interleaved; q8_K activations */
	CPU_LAYOUT_Q2_KX8 = 5, /* q2_K, 8 rows interleaved; q8_K activations */
	CPU_LAYOUT_Q3_KX8 = 6, /* q3_K, 8 rows interleaved; q8_K activations */
	CPU_LAYOUTS
};

/* A layout's group kernel: the 8 rows of one group against xrows
 * (1..CPU_GROUP_X_ROWS) activation rows of n elements in the layout's
 * activation format (q8_0 or q8_K), one after another at xq; for q8_0,
 * xsum[t·n/32 + b] the Σ of row t's block b's 32 quants (NULL for q8_K,
 * whose blocks carry their sums); out[8t + r] = weight row r's dot with
 * activation row t (as vec_dot, up to f32 summation order). */
#define CPU_GROUP_ROWS 8
#define CPU_GROUP_X_ROWS 4
typedef void cpu_dot_group_fn(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows,
			      float *out);

/* Attention's chunk kernels (struct cpu_cntx, attn). scores_t (optional):
 * a prompt's scores s[r][t] = q_r · k_t of `rows` query rows against the n
 * rows k, the query rows given as a panel qt[e·rp + r] (rp a multiple of
 * CPU_ATTN_ST_ROWS, rows rows..rp zero: a kernel may read them), kbuf
 * scratch of CPU_ATTN_ST_TOKENS·d floats; pf[t] (NULL: none), pf_bytes
 * each, prefetched as token t is reached (the chunk's V rows). */
#define CPU_ATTN_ST_TOKENS 6
#define CPU_ATTN_ST_ROWS 16     /* every plugin's vector width divides it */
struct cpu_attn_kernel {
	void (*scores)(float *s, int64_t ss, const float *q, int64_t qs, int64_t nh, const void *const *k,
		       int64_t n, int64_t d, const void *const *pf, int64_t npf);
	void (*accum)(float *acc, int64_t as, const float *p, int64_t ps, int64_t nh, const void *const *v,
		      int64_t n, int64_t dv, const void *const *pf, int64_t npf);
	void (*scores_t)(float *const *s, int64_t rows, const float *qt, int64_t rp, const void *const *k,
			 int64_t n, int64_t d, float *kbuf, const void *const *pf, int64_t pf_bytes);
};

/* The f32 GEMM microkernel (BLIS): C[mr×nr] = alpha·Apanel·Bpanel + beta·C
 * where Apanel is k×mr (packed column of mr), Bpanel k×nr (packed row of nr).
 * beta == 0 must not read C. */
typedef void (*cpu_sgemm_ukernel_fn)(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
				     float alpha, float beta);
/* Part of one B panel of that GEMM from weight rows of one dtype: rows w,
 * w + row_bytes, ... (cols of them, a multiple of 8), depths [0, kc) of
 * each (w already at the block's first depth), decoded to f32 at
 * dst[p·nr + jj] (nr a multiple of 8). */
typedef void (*cpu_sgemm_pack_fn)(const void *w, int64_t row_bytes, int64_t cols, int64_t kc, int64_t nr,
				  float *dst);

/* The int8 GEMM (plugins/cpu/gemm/qgemm.c, layouts in gemm/qgemm.h): block
 * weights at large M, activations quantized to int8. The microkernel adds
 * nsb sub-blocks of a packed mr-row A panel times a packed
 * CPU_QGEMM_NR-row weight panel into C[mr × CPU_QGEMM_NR] (row stride
 * ldc floats): accumulate == 0 stores, else adds to C. */
#define CPU_QGEMM_NR 16
typedef void (*cpu_qgemm_ukernel_fn)(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc,
				     int accumulate);
/* Pack weight rows w, w + row_bytes, ... (rows of them, 1..CPU_QGEMM_NR),
 * elements [0, kc) of each (kc a multiple of 64), into one B panel
 * (gemm/qgemm.h), w_bias subtracted from each u (0: the unsigned packing,
 * c: the signed one), rows past `rows` zero: the bytes the framework's
 * packer (qgemm_pack.c, cpu_qgemm_pack_b) writes for the dtype. */
typedef void (*cpu_qgemm_pack_fn)(const void *w, int64_t row_bytes, int64_t rows, int64_t kc, int w_bias,
				  void *dst);
struct cpu_qgemm_kernels {
	int mr;                         /* 0: no int8 GEMM (the f32 GEMM decodes the weights) */
	/* 0: weights packed as unsigned bytes u (u8×s8 dots: vpdpbusd);
	 * 1: as signed bytes u − c (s8×s8 dots: sdot, smull, vpmaddubsw with
	 * the sign trick), gemm/qgemm.h. */
	int signed_w;
	/* [sub-block of 16 (else 32) elements][weights with a min (else an offset of −c·scale)] */
	cpu_qgemm_ukernel_fn ukernel[2][2];
	/* Optional, indexed as ukernel (NULL: ukernel for every dtype): the
	 * microkernels for weight dtypes of 256-element blocks, whose
	 * activations the framework then encodes to q8_K, one xs per 256
	 * (gemm/qgemm.h, "xs256"): per sub-block only sum += scale·Σu·xq
	 * (+ offset·Σxq), per 256 elements acc += xs·sum. */
	cpu_qgemm_ukernel_fn ukernel_xs256[2][2];
	/* Optional, indexed [j][sub-block of 16][with a min] (NULL: ukernel):
	 * microkernels for weights whose unsigned bytes u stay at or below
	 * 2^(4+j) − 1 (struct cpu_qgemm_format.umax, j 0..3), on the unsigned
	 * packing whatever signed_w says: vpmaddubsw needs no sign trick on
	 * such bytes and can sum its pairs in i16 over several groups
	 * (plugins/cpu-avx2/qgemm_avx2.c). Not with xs256. */
	cpu_qgemm_ukernel_fn ukernel_narrow[4][2][2];
	/* Optional, per weight dtype (NULL: the above): the isc mode's
	 * microkernel (gemm/qgemm.h) for a dtype whose format has isc
	 * integers, on the unsigned packing (the signed one for
	 * CPU_QGEMM_ISC_SIGNED_FORMATS, whose u exceed 127); before
	 * ukernel_narrow. */
	cpu_qgemm_ukernel_fn ukernel_isc[GLLMK_DTYPE_LIMIT];
	/* Optional, per weight dtype (NULL: the framework's packer) */
	cpu_qgemm_pack_fn pack_b[GLLMK_DTYPE_LIMIT];
	/* Optional, per weight dtype (NULL: pack_b, then the framework's isc
	 * pass): the isc mode's packer, the unsigned bytes and the isc
	 * integers in one pass (gemm/qgemm.h). */
	cpu_qgemm_pack_fn pack_b_isc[GLLMK_DTYPE_LIMIT];
	/* Optional, per weight dtype (0: 16): the largest M that matmul keeps
	 * on the vec_dot rows before this GEMM takes it, where the two meet on
	 * this ISA (measured at the 1B model's shapes, SPEC/CPU.md "Small M":
	 * q8_0 and iq4_xs pack cheaply and cross by M = 4, the codebook
	 * i-quants decode slowly and stay on their tiles up to M = 64). */
	uint8_t small_m[GLLMK_DTYPE_LIMIT];
};
/* A table's .qgemm from its four microkernels. */
#define CPU_QGEMM_KERNELS(mr_, signed_w_, sb32, sb32_min, sb16, sb16_min) \
	{ .mr = (mr_), .signed_w = (signed_w_), .ukernel = { { sb32, sb32_min }, { sb16, sb16_min } } }
/* Defines the microkernel `name` as body(nsb, a, b, c, ldc, accumulate,
 * sb, has_min), an always_inline body whose sb and has_min are constants. */
#define CPU_QGEMM_UKERNEL(name, body, sb, has_min)                                                    \
	void name(int64_t nsb, const void *a, const void *b, float *c, int64_t ldc, int accumulate) \
	{                                                                                             \
		body(nsb, a, b, c, ldc, accumulate, sb, has_min);                                     \
	}

struct cpu_cntx {
	const char *isa;                /* "generic", "avx2", "avx512", "neon" */

	/* --- quantization and matmul (indexed by gllmk_dtype) --- */
	cpu_dequant_row_fn dequant_row[GLLMK_DTYPE_LIMIT]; /* every dtype but i32 */
	cpu_quant_row_fn quant_row[GLLMK_DTYPE_LIMIT];     /* f32, f16, bf16, q4_0, q8_0, q8_K */
	struct cpu_matmul_kernel matmul[GLLMK_DTYPE_LIMIT];
	/* M = 1 (decoding) on block-format weights (activations encoded):
	 * 1 to run each thread's weight rows one a call (vec_dot: one
	 * sequential stream per thread) rather than dot_rows a call
	 * (vec_dot_rows: dot_rows streams sharing each activation load).
	 * Which is faster depends on the core: one stream is on Zen 3 running
	 * cpu-avx2 (BENCHMARKS.md "Session 12": a 1B decode 1.2-1.4x); the
	 * float dots keep their rows there (one row was slower). */
	int decode_one_row;
	/* Optional, per layout (NULL: the plugin does not prepare into it,
	 * gllmk_weights_prepare answers UNSUPPORTED): the group kernel of
	 * prepared weights (prepared.h), which small M runs; the rest of their
	 * ops decode groups back to plain rows. */
	cpu_dot_group_fn *dot_group[CPU_LAYOUTS];
	int mr, nr;                     /* register block of sgemm_ukernel */
	cpu_sgemm_ukernel_fn sgemm_ukernel;
	/* Optional (NULL: none): the same mr×nr block on bf16 pairs, each
	 * 32-bit element of A and B two consecutive depths as bf16 (the pair
	 * products added to the f32 accumulators: vdpbf16ps), k counting pairs.
	 * matmul runs its bf16 weights on it at large M when the context was
	 * opened with GLLMK_OPEN_BF16_ACTIVATIONS (gemm/sgemm.h, bf16_pairs). */
	cpu_sgemm_ukernel_fn bf16_ukernel;
	/* Optional, per weight dtype (NULL: dequant_row, then the framework's
	 * 4×4 transposes, gemm/pack.c): the B packer of matmul's f32 GEMM for
	 * its whole groups of 8 weight rows. */
	cpu_sgemm_pack_fn sgemm_pack_b[GLLMK_DTYPE_LIMIT];
	/* Optional (mr 0): the int8 GEMM matmul takes at large M for the block
	 * dtypes gemm/qgemm_pack.c can pack. */
	struct cpu_qgemm_kernels qgemm;
	/* Optional (NULL: the framework's baseline loop). y += a·x over n
	 * contiguous elements: gemm with small M (rows of B), attention (V rows). */
	void (*axpy_f32)(float *y, float a, const float *x, int64_t n);
	/* f16 (IEEE half, as uint16_t) variants for attention's f16 K and V rows,
	 * read without decoding them first. dot_f32_f16 may accumulate in f32. */
	float (*dot_f32_f16)(int64_t n, const float *a, const uint16_t *b);
	void (*axpy_f16)(float *y, float a, const uint16_t *x, int64_t n);
	/* Optional, indexed by the K/V dtype (f32, f16, bf16, q8_0, q4_0, each
	 * decoded in registers; NULL: the framework composes the row kernels
	 * above, decoding one row at a time with dequant_row). A chunk of n KV tokens for the nh query heads sharing one KV head, whose rows are
	 * given by address (a paged cache has no single stride), read in place:
	 *   scores: s[h·ss + t] = q[h·qs ..] · k_t over d elements;
	 *   accum:  acc[h·as + e] += Σ_t p[h·ps + t] · v_t[e] over dv elements.
	 * Strides count floats; f32 accumulation in any order. pf[0 .. npf)
	 * are rows of the same length to prefetch (the next chunk's), spread
	 * over the work so the misses overlap it; npf may be 0. */
	struct cpu_attn_kernel attn[GLLMK_DTYPE_LIMIT];

	/* --- row kernels for the memory-bound ops --- */
	cpu_binary_row_fn add_row;
	cpu_binary_row_fn mul_row;
	void (*scale_row)(float *y, const float *x, float s, int64_t n);
	cpu_unary_row_fn silu_row;
	cpu_unary_row_fn gelu_tanh_row;
	cpu_unary_row_fn gelu_erf_row;
	cpu_unary_row_fn relu_row;
	cpu_unary_row_fn tanh_row;
	cpu_unary_row_fn exp_row;
	cpu_binary_row_fn swiglu_row;   /* y = silu(a) · b */
	/* ABI 1.1 activations (SPEC/OPERATORS.md): y = 1/(1 + e^−x);
	 * clamp y = max(min(x, t), s) (NaN gives t); softcap y = s·tanh(x·t);
	 * the glu rows y = act(a) · b with act gelu_tanh, gelu_erf, relu, and
	 * swiglu_oai with s = alpha, t = limit. */
	cpu_unary_row_fn sigmoid_row;
	cpu_scalar2_row_fn clamp_row;
	cpu_scalar2_row_fn softcap_row;
	cpu_binary_row_fn geglu_row;
	cpu_binary_row_fn geglu_erf_row;
	cpu_binary_row_fn reglu_row;
	cpu_binary2_row_fn swiglu_oai_row;
	/* w may be NULL (no weight). */
	void (*rms_norm_row)(float *y, const float *x, const float *w, int64_t n, float eps);
	void (*layer_norm_row)(float *y, const float *x, const float *w, const float *b, int64_t n, float eps);
	float (*dot_f32)(int64_t n, const float *a, const float *b);

	/* softmax of one row of n visible entries, z_j = scale·x_j + mask_j
	 * (mask NULL: + 0). Every kernel forms z the same way (so the largest
	 * z − max is exactly 0); −inf entries give 0; scale is finite; sums may
	 * be accumulated in f32 (tolerance rt(n), SPEC/TOLERANCES.md).
	 * softmax_max_row: max z, NaN entries skipped (the reference's
	 * z > max). softmax_exp_row writes y = e^(z − max), returns the sum.
	 * ops_softmax.c composes max, exp (into a buffer) and scale_row for rows
	 * that stay in the caches, attention does the same over its scores; a
	 * longer row takes two passes over x: softmax_sum_row gives *max = max z
	 * and returns Σ e^(z − *max) in one pass (online; a row of −inf gives
	 * *max = −inf), then softmax_write_row writes y = e^(z − max)·inv_sum. */
	float (*softmax_max_row)(const float *x, const float *mask, float scale, int64_t n);
	double (*softmax_exp_row)(float *y, const float *x, const float *mask, float scale, float max,
				  int64_t n);
	double (*softmax_sum_row)(const float *x, const float *mask, float scale, int64_t n, float *max);
	cpu_softmax_write_row_fn softmax_write_row;
	/* Rotates the first n_rot elements of a row (y may equal x); the skeleton
	 * copies the rest. neox: pair i is (x[i], x[i + n_rot/2]), cs[i] and sn[i]
	 * its cos and sin (n_rot/2 entries each). normal: pair i is (x[2i],
	 * x[2i+1]) and cs, sn have n_rot entries laid out like the row:
	 * cs = (c0, c0, c1, c1, ...), sn = (−s0, s0, −s1, s1, ...), so that
	 * y = x·cs + swap_pairs(x)·sn. */
	void (*rope_row)(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox);
	/* Optional twins of the writers above (each NULL: the framework uses the
	 * ordinary one): the same results, y written with non-temporal stores
	 * (no read for ownership of y, no cache lines evicted for it). The
	 * framework picks them for calls that write more than
	 * CPU_STREAM_MIN_BYTES (cpu_view.h) and fences (cpu_stream_fence) at the
	 * end of each piece of work, so the kernels do not fence. */
	struct cpu_row_writers nt;
};

#endif
