/* gllmk_matmul: y[M,N] = x[M,K] · w[N,K]ᵀ + bias, for every weight dtype.
 *
 * Three paths, chosen by M and the ISA's context table (cntx_<isa>.c):
 *  - large M (> SMALL_M, or small_m_limit's figure for f32, f16 and bf16
 *    weights with the ISA's float tiles, or for block weights the ISA's
 *    qgemm.small_m where it gives one; rows evenly spaced): the
 *    GEMM framework, w as a
 *    transposed B that its packing decodes (f32 weights are packed as they
 *    are), for every weight dtype. Quantized weights included: decoding a
 *    block of B once per kc×nc step costs less than the microkernel gains
 *    over integer vec_dots (2-3.5× at M = 512 on AVX-512, SPEC/CPU.md,
 *    "Framework tuning"). Block weights whose ISA has the int8 GEMM
 *    (struct cpu_cntx.qgemm, a packing in gemm/qgemm_pack.c) take that
 *    instead: x quantized to int8 once, weights decoded to bytes
 *    (gemm/qgemm.h; 2.1-2.7× the f32 GEMM with AVX512-VNNI). bf16
 *    weights in a context opened with GLLMK_OPEN_BF16_ACTIVATIONS, where
 *    the ISA has the bf16 GEMM microkernel: the same GEMM on bf16 pairs
 *    (x rounded to bf16 once per call, vdpbf16ps; gemm/sgemm.h), above
 *    SMALL_M_BF16_PAIRS (32) rows.
 *  - small M with vec_dot (the ISA gives one for w's dtype, as ggml does):
 *    activation rows are encoded once into the kernel's vec_dtype
 *    (q8_0/q8_K, or used as f32), then each output is one vec_dot; threads
 *    over N (at M = 1 one contiguous range each, cpu_pool_run_streaming),
 *    each group of weight rows dotted with every activation row, so
 *    weights stream once. Where the ISA has vec_dot_rows, a group is
 *    dot_rows consecutive rows in one call (shared activation loads,
 *    independent chains: at M = 1 one row per call is latency-bound); the
 *    rest of a thread's range goes a row at a time.
 *  - prepared weights (gllmk_weights_prepare, prepared.h) up to
 *    cpu_prepared_small_m rows: prepared.c's group kernel; above, the GEMMs,
 *    whose packing decodes the groups back to plain rows.
 *  - small M without vec_dot: threads over N; each weight row is decoded
 *    to f32 a chunk at a time on the stack and dotted (dot_f32) with every
 *    activation row: one pass over the weights, no allocation.
 */
#include <stdlib.h>

#include "cpu_plugin.h"
#include "cpu_view.h"
#include "gemm/sgemm.h"
#include "gemm/qgemm.h"
#include "prepared.h"
#include "quant_blocks.h"

#define SMALL_M 16
/* f32 weights whose ISA has vec_dot_rows take the small-M path further:
 * at M = 32, N = K = 4096 it ran at 143-154 GFLOP/s (4×4 vec_dot_tile
 * blocks, 1.1-1.3× OpenBLAS) against the GEMM's 42-77 (0.63-0.7×), AVX-512
 * on 2 threads: the weights stream once, x stays in L2. */
#define SMALL_M_F32_ROWS 32
/* f16 and bf16 weights with vec_dot_tile go further still, up to this many
 * rows per activation row of the tile (x_rows: 128 on AVX-512, 96 on AVX2,
 * where the 4 × 3 tiles ran 1.07-1.12x the GEMM at M = 48 and 64 and tied
 * at 96 on Zen 3, BENCHMARKS.md "Session 16"):
 * the GEMM must decode each weight into an f32 panel and pack it, which at
 * M = 64 took 55 % of its time (perf, 8192×2048 f16 and bf16 on Zen 4), where
 * the tiles read the 16-bit rows in place. M = 64, 8192×2048, 2 threads:
 * 1.7× the GEMM on AVX-512, 1.25× on AVX2; the two meet near M = 256 on
 * AVX-512 (4×4 tiles) and M = 128 on AVX2 (4×2). */
#define SMALL_M_HALF_ROWS_PER_X_ROW 32
/* bf16 weights in a context that permits bf16 activations, on an ISA with
 * the bf16 GEMM (cpu_cntx.bf16_ukernel): the GEMM on bf16 pairs above this
 * many rows. Its packing moves 16-bit words without decoding them, so it
 * overtakes the exact f32 tiles well below their 128: the 1B model's layer
 * on Zen 4, 2 threads, tiles / pairs GFLOP/s: M = 32 196 / 180, 40 195 /
 * 224, 64 198 / 228, 128 189 / 311 (BENCHMARKS.md, "Session 11"). Below,
 * and at M = 1 where the weights' bandwidth decides, x stays f32. */
#define SMALL_M_BF16_PAIRS 32
#define GROUP_M SMALL_M_F32_ROWS /* activation rows a group of weight rows meets at a time */
#define DOT_CHUNK 4096          /* weight elements decoded at a time; a multiple of QK_K */
#define VEC_TILE_N 8            /* weight rows a thread takes at a time (a multiple of dot_rows) */
#define XQ_STACK_BYTES 16384    /* encoded activations up to this size live on the stack */
#define GROUP_CHUNK_BYTES 16384 /* weight bytes of a group of rows kept in L1 at M > 1 */

struct matmul_job {
	const struct cpu_cntx *k;
	const gllmk_tensor *y, *x, *w;
	const float *bias;
	int64_t m, n, kdim;
	/* vec_dot path: row m of the encoded activations */
	const char *xq;
	int64_t xq_row_bytes;
	int32_t vec_dtype;                /* the activations' encoding */
	cpu_vec_dot_fn *vec_dot;
	cpu_vec_dot_rows_fn *vec_dot_rows; /* NULL: one row at a time */
	int dot_rows;
	int64_t w_stride;                 /* bytes between weight rows */
	int64_t kc;                       /* K elements per vec_dot_rows call */
	cpu_vec_dot_tile_fn *vec_dot_tile; /* NULL: one activation row at a time */
	int x_rows;
};

static float *y_at(const struct matmul_job *j, int64_t m, int64_t n)
{
	return (float *)cpu_row(j->y, m) + n;
}

static float bias_of(const struct matmul_job *j, int64_t n)
{
	return j->bias ? j->bias[n] : 0.0f;
}

/* ------------------------------------------------------ small M, f32 dots */

/* Activation rows m0..m0+rows against weight row n, which is decoded
 * DOT_CHUNK elements at a time (f32 rows are read in place). */
static void dot_row_group(const struct matmul_job *j, int64_t n, int64_t m0, int64_t rows)
{
	const cpu_dequant_row_fn dequant = j->k->dequant_row[j->w->dtype];
	const char *wrow = cpu_row(j->w, n);
	const float *xr[SMALL_M];
	double acc[SMALL_M] = { 0 };
	float buf[DOT_CHUNK];

	for (int64_t i = 0; i < rows; i++)
		xr[i] = cpu_row(j->x, m0 + i);
	for (int64_t k0 = 0; k0 < j->kdim; k0 += DOT_CHUNK) {
		const int64_t len = j->kdim - k0 < DOT_CHUNK ? j->kdim - k0 : DOT_CHUNK;
		const float *wf = buf;

		if (j->w->dtype == GLLMK_F32)
			wf = (const float *)wrow + k0;
		else
			dequant(wrow + cpu_row_bytes(j->w->dtype, k0), buf, len);
		for (int64_t i = 0; i < rows; i++)
			acc[i] += j->k->dot_f32(len, wf, xr[i] + k0);
	}
	for (int64_t i = 0; i < rows; i++)
		*y_at(j, m0 + i, n) = (float)(acc[i] + bias_of(j, n));
}

static void stream_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct matmul_job *j = arg;

	(void)tid;
	for (int64_t n = begin; n < end; n++)
		for (int64_t m0 = 0; m0 < j->m; m0 += SMALL_M)
			dot_row_group(j, n, m0, j->m - m0 < SMALL_M ? j->m - m0 : SMALL_M);
}

/* ------------------------------------------------------------ vec_dot */

static const void *xq_row(const struct matmul_job *j, int64_t m)
{
	return j->xq ? j->xq + m * j->xq_row_bytes : cpu_row(j->x, m);
}

static void encode_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct matmul_job *j = arg;
	(void)tid;
	for (int64_t m = begin; m < end; m++)
		j->k->quant_row[j->vec_dtype](cpu_row(j->x, m), (char *)j->xq + m * j->xq_row_bytes, j->kdim);
}

static void dot_one(const struct matmul_job *j, int64_t m, int64_t n)
{
	*y_at(j, m, n) = j->vec_dot(j->kdim, cpu_row(j->w, n), xq_row(j, m)) + bias_of(j, n);
}

/* Activation rows from x (x_rows of them, xs bytes apart, with
 * vec_dot_tile where `left` allows, else one) against the group's rows
 * over K elements k0..k0+len-1, added into acc[0..]; returns how many
 * activation rows it took. */
static int64_t dot_piece(const struct matmul_job *j, const char *wk, int64_t k0, int64_t len, const char *x,
			 int64_t xs, int64_t left, float (*acc)[CPU_DOT_ROWS_MAX])
{
	const int rows = j->dot_rows;
	float out[CPU_DOT_X_ROWS_MAX * CPU_DOT_ROWS_MAX];
	int64_t took = 1;

	if (j->vec_dot_tile && left >= j->x_rows) {
		j->vec_dot_tile(len, wk, j->w_stride, x, xs, out);
		took = j->x_rows;
	} else {
		j->vec_dot_rows(len, wk, j->w_stride, x, out);
	}
	for (int64_t i = 0; i < took; i++)
		for (int r = 0; r < rows; r++)
			acc[i][r] = k0 ? acc[i][r] + out[i * rows + r] : out[i * rows + r];
	return took;
}

/* dot_rows weight rows from n against activation rows m0..m0+mn-1
 * (mn <= group_rows(j)), kc elements of K at a time: that much of the group
 * stays in L1 while the activations pass (M = 1: one call over all K).
 * x and y are 2-D: their rows are evenly spaced, found once a group (a
 * row's address costs a division). */
static void dot_group(const struct matmul_job *j, int64_t n, int64_t m0, int64_t mn)
{
	const char *w = cpu_row(j->w, n), *x = xq_row(j, m0);
	const int64_t xs = mn > 1 ? (const char *)xq_row(j, m0 + 1) - x : 0;
	float *y = y_at(j, m0, n);
	const int64_t ys = mn > 1 ? y_at(j, m0 + 1, n) - y : 0;
	float acc[GROUP_M + CPU_DOT_X_ROWS_MAX][CPU_DOT_ROWS_MAX];

	for (int64_t k0 = 0; k0 < j->kdim; k0 += j->kc) {
		const int64_t len = j->kdim - k0 < j->kc ? j->kdim - k0 : j->kc;
		const char *wk = w + cpu_row_bytes(j->w->dtype, k0), *xk = x + cpu_row_bytes(j->vec_dtype, k0);

		for (int64_t m = 0; m < mn;)
			m += dot_piece(j, wk, k0, len, xk + m * xs, xs, mn - m, acc + m);
	}
	for (int64_t m = 0; m < mn; m++)
		for (int r = 0; r < j->dot_rows; r++)
			y[m * ys + r] = acc[m][r] + bias_of(j, n + r);
}

/* M = 1 over all K in one call a group (decoding): the dots land in y
 * directly, with no per-group bookkeeping that a short row (K = 768:
 * three q6_K blocks) would pay as much for as for its dots. */
static int64_t decode_groups(const struct matmul_job *j, int64_t n, int64_t end)
{
	const void *x = xq_row(j, 0);
	const char *w = cpu_row(j->w, 0); /* rows w_stride apart (vec_dot_rows) */
	float *y = y_at(j, 0, 0);
	const int64_t first = n;

	if (j->k->decode_one_row && j->vec_dtype != GLLMK_F32)
		for (; n < end; n++)
			y[n] = j->vec_dot(j->kdim, w + n * j->w_stride, x);
	for (; n + j->dot_rows <= end; n += j->dot_rows)
		j->vec_dot_rows(j->kdim, w + n * j->w_stride, j->w_stride, x, y + n);
	if (j->bias)
		for (int64_t i = first; i < n; i++)
			y[i] += j->bias[i];
	return n;
}

/* Activation rows a group meets at a time: GROUP_M rounded up to whole
 * tiles (33 for AVX2's 3-row tiles), so that only M's own remainder goes
 * one activation row at a time. 32 left two rows of every group to
 * vec_dot_rows, which converts the group's f16/bf16 rows for one
 * activation row: f16 at M = 48, 64, 96 ran 2-6 % faster, bf16 at 64 7 %
 * (Zen 3, 2 threads, BENCHMARKS.md "Session 17"). */
static int64_t group_rows(const struct matmul_job *j)
{
	return j->vec_dot_tile ? (GROUP_M + j->x_rows - 1) / j->x_rows * j->x_rows : GROUP_M;
}

static void vec_dot_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct matmul_job *j = arg;
	int64_t n = begin;

	(void)tid;
	if (j->vec_dot_rows && j->m == 1 && j->kc == j->kdim)
		n = decode_groups(j, n, end);
	for (; j->vec_dot_rows && n + j->dot_rows <= end; n += j->dot_rows)
		for (int64_t m0 = 0, gm = group_rows(j); m0 < j->m; m0 += gm)
			dot_group(j, n, m0, j->m - m0 < gm ? j->m - m0 : gm);
	for (; n < end; n++)
		for (int64_t m = 0; m < j->m; m++)
			dot_one(j, m, n);
}

/* The context entry's kernels for w's dtype into j (w is 2-D,
 * SPEC/OPERATORS.md: its rows are evenly spaced unless a view says
 * otherwise). */
static void pick_vec_dot(const struct cpu_matmul_kernel *kern, struct matmul_job *j)
{
	j->vec_dtype = kern->vec_dtype;
	j->vec_dot = kern->vec_dot;
	j->vec_dot_rows = kern->vec_dot_rows;
	j->dot_rows = kern->dot_rows;
	j->vec_dot_tile = kern->vec_dot_tile;
	j->x_rows = kern->x_rows;
	j->w_stride = cpu_uniform_row_stride(j->w, 1);
	if (j->w_stride < 0)
		j->vec_dot_rows = NULL;
	j->kc = j->kdim;
}

/* Activations are encoded once (M rows of K/32·34 or K/256·292 bytes): on
 * the stack when they fit (decoding, M = 1, K up to 14336), else in a
 * per-call allocation; f32 activations are used in place. */
static gllmk_status matmul_vec_dot(struct cpu_state *s, struct matmul_job *j, const struct cpu_matmul_kernel *kern)
{
	const int32_t vdt = kern->vec_dtype;
	_Alignas(64) char on_stack[XQ_STACK_BYTES];
	char *heap = NULL;

	pick_vec_dot(kern, j);
	if (j->vec_dot_rows && j->m > 1) { /* a multiple of QK_K, so of every block */
		const int64_t kc = GROUP_CHUNK_BYTES / j->dot_rows / cpu_row_bytes(j->w->dtype, QK_K) * QK_K;

		j->kc = kc > QK_K ? kc : QK_K;
	}
	if (vdt != GLLMK_F32) {
		const int64_t bytes = j->m * cpu_row_bytes(vdt, j->kdim);

		j->xq_row_bytes = cpu_row_bytes(vdt, j->kdim);
		j->xq = on_stack;
		if (bytes > XQ_STACK_BYTES) {
			heap = aligned_alloc(64, (size_t)((bytes + 63) / 64 * 64));
			if (!heap)
				return s->host->set_error(GLLMK_E_NO_MEMORY,
							  "gllmk_matmul: %lld bytes of encoded activations",
							  (long long)bytes);
			j->xq = heap;
		}
		cpu_pool_run(s->pool, j->m, 1, encode_task, j);
	}
	if (j->m == 1)
		cpu_pool_run_streaming(s->pool, j->n, VEC_TILE_N, vec_dot_task, j);
	else
		cpu_pool_run(s->pool, j->n, VEC_TILE_N, vec_dot_task, j);
	free(heap);
	return GLLMK_OK;
}

/* ------------------------------------- M = 1 products, one pass of the pool */

struct parts_job {
	const struct cpu_matmul_part *part;
	struct matmul_job shared;  /* the kernels and shapes of every part */
	const char *xq;            /* part p's encoded activation: xq + xq_of[p] */
	const int64_t *xq_of;
	int64_t tiles;             /* VEC_TILE_N-row tiles per part */
};

/* Tiles [begin, end) of the parts laid end to end: each part's run of
 * tiles is one vec_dot_task over its rows. */
static void parts_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct parts_job *pj = arg;

	while (begin < end) {
		const int64_t p = begin / pj->tiles, last = (p + 1) * pj->tiles < end ? (p + 1) * pj->tiles : end;
		const struct cpu_matmul_part *part = &pj->part[p];
		struct matmul_job j = pj->shared;
		const int64_t r0 = (begin - p * pj->tiles) * VEC_TILE_N, r1 = (last - p * pj->tiles) * VEC_TILE_N;

		j.y = &part->y;
		j.x = &part->x;
		j.w = &part->w;
		j.bias = part->bias ? gllmk_tensor_host(part->bias) : NULL;
		j.xq = pj->xq ? pj->xq + pj->xq_of[p] : NULL;
		vec_dot_task(&j, r0, r1 < j.n ? r1 : j.n, tid);
		begin = last;
	}
}

int64_t cpu_parts_x_rows(const struct cpu_matmul_part *part, int64_t count, int64_t *row)
{
	int64_t n = 0;

	for (int64_t p = 0; p < count; p++)
		row[p] = p > 0 && gllmk_tensor_host(&part[p].x) == gllmk_tensor_host(&part[p - 1].x) ? row[p - 1] : n++;
	return n;
}

/* Parts' activations encoded once each (cpu_parts_x_rows), one after
 * another on the caller; f32 activations in place. xq_of[p] becomes part
 * p's byte offset. */
static char *encode_parts(struct cpu_state *s, struct parts_job *pj, int64_t count, int64_t *xq_of)
{
	const int32_t vdt = pj->shared.vec_dtype;
	const int64_t row_bytes = cpu_row_bytes(vdt, pj->shared.kdim), rows = cpu_parts_x_rows(pj->part, count, xq_of);
	char *xq = aligned_alloc(64, (size_t)((rows * row_bytes + 63) / 64 * 64));

	if (!xq)
		return NULL;
	for (int64_t p = 0; p < count; p++) {
		if (p == 0 || xq_of[p] != xq_of[p - 1])
			s->k->quant_row[vdt](gllmk_tensor_host(&pj->part[p].x), xq + xq_of[p] * row_bytes, pj->shared.kdim);
	}
	for (int64_t p = 0; p < count; p++)
		xq_of[p] *= row_bytes;
	return xq;
}

/* Whether every part is one activation row against a weight the multi-row
 * dots (or, prepared, the group kernel) can take, all of one dtype, layout
 * and shape. */
static int parts_fit(const struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count)
{
	const struct cpu_matmul_kernel *mk = &s->k->matmul[part[0].w.dtype];

	if (!mk->vec_dot_rows && !part[0].w.buf->layout)
		return 0;
	for (int64_t p = 0; p < count; p++)
		if (cpu_rows(&part[p].x) != 1 || part[p].w.dtype != part[0].w.dtype ||
		    part[p].w.buf->layout != part[0].w.buf->layout ||
		    cpu_rows(&part[p].w) != cpu_rows(&part[0].w) || cpu_row_len(&part[p].x) != cpu_row_len(&part[0].x) ||
		    cpu_uniform_row_stride(&part[p].w, 1) != cpu_uniform_row_stride(&part[0].w, 1))
			return 0;
	return cpu_uniform_row_stride(&part[0].w, 1) > 0;
}

gllmk_status cpu_matmul_parts(struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count)
{
	/* The kernels: the context table's entry for the experts' dtype. */
	const struct cpu_matmul_kernel *kern = &s->k->matmul[part[0].w.dtype];
	struct parts_job pj = { .part = part };
	int64_t *xq_of;
	char *xq = NULL;

	if (count >= 2 && part[0].w.buf->layout && parts_fit(s, part, count))
		return cpu_matmul_parts_prepared(s, part, count);
	if (count < 2 || !parts_fit(s, part, count)) {
		gllmk_status st = GLLMK_OK;

		for (int64_t p = 0; st == GLLMK_OK && p < count; p++)
			st = cpu_matmul(s, &part[p].y, &part[p].x, &part[p].w, part[p].bias);
		return st;
	}
	pj.shared = (struct matmul_job){
		.k = s->k,
		.w = &part[0].w,
		.m = 1,
		.n = cpu_rows(&part[0].w),
		.kdim = cpu_row_len(&part[0].x),
	};
	pick_vec_dot(kern, &pj.shared);
	pj.tiles = (pj.shared.n + VEC_TILE_N - 1) / VEC_TILE_N;
	xq_of = malloc(sizeof(*xq_of) * (size_t)count);
	if (xq_of && kern->vec_dtype != GLLMK_F32)
		xq = encode_parts(s, &pj, count, xq_of);
	if (!xq_of || (!xq && kern->vec_dtype != GLLMK_F32)) {
		free(xq_of);
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul_id: no memory for %lld encoded rows",
					  (long long)count);
	}
	pj.xq = xq;
	pj.xq_of = xq_of;
	cpu_pool_run(s->pool, count * pj.tiles, 1, parts_task, &pj);
	free(xq);
	free(xq_of);
	return GLLMK_OK;
}

/* --------------------------------------------------------- large M: GEMM */

static void bias_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct matmul_job *j = arg;

	(void)tid;
	for (int64_t m = begin; m < end; m++) {
		float *y = cpu_row(j->y, m);

		for (int64_t n = 0; n < j->n; n++)
			y[n] += j->bias[n];
	}
}

static gllmk_status matmul_gemm(struct cpu_state *s, struct matmul_job *j, int64_t ldx, int64_t ldy)
{
	const gllmk_tensor *w = j->w;
	const int64_t w_row_bytes = w->ndim >= 2 ? w->stride[w->ndim - 2] : 0;
	struct cpu_sgemm g = {
		.m = j->m,
		.n = j->n,
		.k = j->kdim,
		.a = gllmk_tensor_host(j->x),
		.a_rs = ldx,
		.a_cs = 1,
		.b = gllmk_tensor_host(w),
		.c = gllmk_tensor_host(j->y),
		.ldc = ldy,
		.alpha = 1.0f,
		.beta = 0.0f,
	};
	gllmk_status st;

	if (w->dtype == GLLMK_F32) {    /* B(p, j) = w[j][p] */
		g.b_rs = 1;
		g.b_cs = w_row_bytes / (int64_t)sizeof(float);
	} else {
		g.b_dequant = s->k->dequant_row[w->dtype];
		g.b_pack = s->k->sgemm_pack_b[w->dtype];
		g.b_dtype = w->dtype;
		g.b_row_bytes = w_row_bytes;
		g.b_layout = w->buf->layout;
	}
	if (w->dtype == GLLMK_BF16 && s->bf16_act) { /* x rounded, bf16 pairs: gemm/sgemm.h */
		g.b_dequant = NULL;
		g.b_pack = NULL;
		g.bf16_pairs = 1;
	}
	st = cpu_sgemm_run(s, &g);
	if (st == GLLMK_OK && j->bias)
		cpu_pool_run(s->pool, j->m, 16, bias_task, j);
	return st;
}

/* Block weights where the ISA has the int8 GEMM (gemm/qgemm.h). */
static gllmk_status matmul_qgemm(struct cpu_state *s, struct matmul_job *j, int64_t ldx, int64_t ldy)
{
	const gllmk_tensor *w = j->w;
	const struct cpu_qgemm g = {
		.m = j->m,
		.n = j->n,
		.k = j->kdim,
		.x = gllmk_tensor_host(j->x),
		.ldx = ldx,
		.w = gllmk_tensor_host(w),
		.w_dtype = w->dtype,
		.w_row_bytes = w->ndim >= 2 ? w->stride[w->ndim - 2] : 0,
		.w_layout = w->buf->layout,
		.y = gllmk_tensor_host(j->y),
		.ldy = ldy,
	};
	gllmk_status st = cpu_qgemm_run(s, &g);

	if (st == GLLMK_OK && j->bias)
		cpu_pool_run(s->pool, j->m, 16, bias_task, j);
	return st;
}

/* The largest M the small-M paths take for weight dtype t (see the top). */
static int64_t small_m_limit(const struct cpu_state *s, int32_t t)
{
	const struct cpu_cntx *k = s->k;
	const struct cpu_matmul_kernel *mk = &k->matmul[t];

	if (t == GLLMK_BF16 && s->bf16_act)
		return SMALL_M_BF16_PAIRS;
	if (t == GLLMK_F32 && mk->vec_dot_rows)
		return SMALL_M_F32_ROWS;
	if ((t == GLLMK_F16 || t == GLLMK_BF16) && mk->vec_dot_tile)
		return SMALL_M_HALF_ROWS_PER_X_ROW * mk->x_rows;
	if (cpu_qgemm_supports(k, t) && mk->vec_dot && k->qgemm.small_m[t])
		return k->qgemm.small_m[t];
	return SMALL_M;
}

gllmk_status cpu_matmul(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	struct cpu_state *s = st;
	/* The kernels for w's dtype: its entry in the ISA's context table
	 * (plugins/cpu-<isa>/cntx_<isa>.c), by name there. */
	const struct cpu_matmul_kernel *kern = &s->k->matmul[w->dtype];
	struct matmul_job j = {
		.k = s->k,
		.y = y,
		.x = x,
		.w = w,
		.bias = bias ? gllmk_tensor_host(bias) : NULL,
		.m = cpu_rows(x),
		.n = cpu_rows(w),
		.kdim = cpu_row_len(x),
	};
	const int64_t ldx = cpu_uniform_row_stride(x, sizeof(float));
	const int64_t ldy = cpu_uniform_row_stride(y, sizeof(float));

	if (j.m > (w->buf->layout ? cpu_prepared_small_m(w->buf->layout) : small_m_limit(s, w->dtype)) && ldx >= 0 &&
	    ldy >= 0)
		return cpu_qgemm_supports(s->k, w->dtype) ? matmul_qgemm(s, &j, ldx, ldy) : matmul_gemm(s, &j, ldx, ldy);
	if (w->buf->layout) /* prepared weights (prepared.h) */
		return cpu_matmul_prepared(s, y, x, w, bias);
	if (kern->vec_dot)
		return matmul_vec_dot(s, &j, kern);
	/* grain: about 64K weight elements per chunk */
	cpu_pool_run(s->pool, j.n, 1 + (1 << 16) / j.kdim, stream_task, &j);
	return GLLMK_OK;
}
