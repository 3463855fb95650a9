/* The named benchmarks of issue 3: compute-bound ones in GFLOP/s against the
 * FMA peak and OpenBLAS, memory-bound ones in GB/s against DRAM bandwidth.
 * Sizes shrink in --smoke mode; names are printed from the sizes used.
 *
 * Data that must come from DRAM on every call (M = 1 weights, the KV cache)
 * rotates over at least 8 copies filling at least 256 MiB and twice the
 * last-level cache.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define GEMM_N 4096
#define SMOKE_GEMM_N 128
#define QUANT_N 4096         /* w is [N, K] = 4096 × 14336 (an FFN down projection) */
#define QUANT_K 14336
#define QUANT_M_BIG 512
#define SMOKE_QUANT_N 64
#define SMOKE_QUANT_K 512
#define SMOKE_QUANT_M_BIG 8
#define MIN_ROTATION 8
#define MIN_ROTATION_BYTES (256ull << 20)
#define MAX_ROTATION_BYTES (4ull << 30)
#define MEM_BYTES (256ull << 20)
#define SMOKE_MEM_BYTES (1ull << 20)
#define MEM_ROW 4096         /* elements per row for norm, softmax, silu */
#define ROPE_HEADS 32
#define ROPE_DIM 128
#define ATT_HQ 32
#define ATT_HKV 8
#define ATT_D 128
#define ATT_T 4096
#define SMOKE_ATT_T 64

/* An operator call on prepared tensors; t[] in the operator's argument order.
 * With n_rot > 1, input rot_arg moves by rot_stride bytes per repetition. */
enum call_op { CALL_GEMM, CALL_MATMUL, CALL_RMS_NORM, CALL_SOFTMAX, CALL_ROPE, CALL_SILU, CALL_ATTENTION };

struct call {
	gllmk_context *ctx;
	enum call_op op;
	gllmk_tensor t[5];
	int rot_arg[2];      /* tensors that rotate (-1: none) */
	int n_rot;
	uint64_t rot_stride[2];
	uint64_t rot_base[2];
};

static gllmk_status call_run(void *arg, int rep)
{
	static const gllmk_gemm_params gemm = { .alpha = 1.0f };
	static const gllmk_softmax_params softmax = { .scale = 1.0f };
	static const gllmk_rope_params rope = { .mode = GLLMK_ROPE_NORMAL, .theta_base = 10000.0f, .freq_scale = 1.0f };
	static const gllmk_attention_params att = { 0 };
	struct call *c = arg;
	const gllmk_tensor *t = c->t;

	for (int i = 0; i < 2 && c->n_rot > 1; i++)
		if (c->rot_arg[i] >= 0)
			c->t[c->rot_arg[i]].offset = c->rot_base[i] + (uint64_t)(rep % c->n_rot) * c->rot_stride[i];
	switch (c->op) {
	case CALL_GEMM:
		return gllmk_gemm(c->ctx, &t[0], &t[1], &t[2], &gemm);
	case CALL_MATMUL:
		return gllmk_matmul(c->ctx, &t[0], &t[1], &t[2], NULL);
	case CALL_RMS_NORM:
		return gllmk_rms_norm(c->ctx, &t[0], &t[1], &t[2], 1e-6f);
	case CALL_SOFTMAX:
		return gllmk_softmax(c->ctx, &t[0], &t[1], NULL, &softmax);
	case CALL_ROPE:
		return gllmk_rope(c->ctx, &t[0], &t[1], &t[2], &rope);
	case CALL_SILU:
		return gllmk_silu(c->ctx, &t[0], &t[1]);
	case CALL_ATTENTION:
		return gllmk_attention(c->ctx, &t[0], &t[1], &t[2], &t[3], NULL, NULL, &att);
	}
	return GLLMK_E_INVALID;
}

static gllmk_tensor tensor2(gllmk_buffer *buf, gllmk_dtype t, int64_t rows, int64_t cols)
{
	const int64_t shape[2] = { rows, cols };

	return gllmk_tensor_make(buf, 0, t, 2, shape);
}

static gllmk_tensor tensor3(gllmk_buffer *buf, gllmk_dtype t, int64_t a, int64_t b, int64_t c)
{
	const int64_t shape[3] = { a, b, c };

	return gllmk_tensor_make(buf, 0, t, 3, shape);
}

/* Copies of a matrix needed so a rotation over them streams from DRAM. */
static int rotation_count(const struct bench *b, uint64_t bytes)
{
	uint64_t want = 2 * b->lim.llc_bytes > MIN_ROTATION_BYTES ? 2 * b->lim.llc_bytes : MIN_ROTATION_BYTES;
	int n = MIN_ROTATION;

	if (b->opt->smoke)
		return 2;
	if (bytes * (uint64_t)n < want)
		n = (int)((want + bytes - 1) / bytes);
	if (bytes * (uint64_t)n > MAX_ROTATION_BYTES && bytes * MIN_ROTATION <= MAX_ROTATION_BYTES)
		n = (int)(MAX_ROTATION_BYTES / bytes);
	return n;
}

/* ------------------------------------------------------------ OpenBLAS */

struct blas_call {
	const struct bench_blas *bl;
	int m, n, k;
	const float *a, *b;
	float *c;
	bool b_trans;
};

static gllmk_status blas_run(void *arg, int rep)
{
	const struct blas_call *c = arg;

	(void)rep;
	if (c->m == 1 && c->b_trans)
		bench_blas_sgemv(c->bl, c->n, c->k, c->b, c->a, c->c);
	else
		bench_blas_sgemm(c->bl, c->m, c->n, c->k, c->a, c->b, c->b_trans, c->c);
	return GLLMK_OK;
}

/* The peer's GFLOP/s on the same problem, into r. */
static void blas_peer(struct bench *b, struct bench_result *r, struct blas_call *bc, double gflop)
{
	struct bench_stats st;

	if (!b->blas)
		return;
	bc->bl = b->blas;
	if (bench_time(b, blas_run, bc, &st) == GLLMK_OK) {
		r->peer = gflop / st.median;
		r->ratio = r->median / r->peer;
	}
}

/* ------------------------------------------------------------ f32 GEMM */

/* One f32 case: gllmk c[M,N] = a[M,K]·b (b [K,N] for gemm, [N,K] for matmul)
 * and the same through OpenBLAS on host copies of the data. */
static void f32_case(struct bench *b, const char *name, enum call_op op, int m, int n, int k)
{
	size_t na = (size_t)m * k, nb = (size_t)n * k, nc = (size_t)m * n;
	float *ha = malloc(na * 4), *hb = malloc(nb * 4), *hc = malloc(nc * 4);
	gllmk_buffer *ba = NULL, *bb = NULL, *bc = NULL;
	gllmk_status st = GLLMK_E_NO_MEMORY;
	double gflop = 2.0 * m * n * k / 1e9;
	struct bench_stats stats;
	struct call c = { .ctx = b->ctx, .op = op, .rot_arg = { -1, -1 } };
	struct blas_call blas = { .m = m, .n = n, .k = k, .a = ha, .b = hb, .c = hc, .b_trans = op == CALL_MATMUL };
	struct bench_result *r;

	if (ha && hb && hc) {
		bench_fill_f32(ha, na, 1);
		bench_fill_f32(hb, nb, 2);
		ba = bench_upload(b, ha, na * 4, &st);
		bb = ba ? bench_upload(b, hb, nb * 4, &st) : NULL;
		if (bb)
			st = gllmk_buffer_alloc(b->ctx, nc * 4, &bc);
	}
	if (st == GLLMK_OK) {
		c.t[0] = tensor2(bc, GLLMK_F32, m, n);
		c.t[1] = tensor2(ba, GLLMK_F32, m, k);
		c.t[2] = op == CALL_GEMM ? tensor2(bb, GLLMK_F32, k, n) : tensor2(bb, GLLMK_F32, n, k);
		st = bench_time(b, call_run, &c, &stats);
	}
	if (st != GLLMK_OK) {
		bench_fail(b, name, st);
	} else if ((r = bench_add(b, "GFLOP/s", BENCH_LIMIT_PEAK, "%s", name))) {
		bench_rate(r, &stats, gflop);
		if (op == CALL_GEMM)
			b->sgemm = r->median;
		if (op == CALL_MATMUL)
			snprintf(r->note, sizeof(r->note), "%.1f GB/s of weights",
				 (double)nb * 4 / 1e9 / stats.median);
		blas_peer(b, r, &blas, gflop);
		bench_finish_result(b, r);
	}
	gllmk_buffer_free(ba);
	gllmk_buffer_free(bb);
	gllmk_buffer_free(bc);
	free(ha);
	free(hb);
	free(hc);
}

void bench_cases_gemm(struct bench *b)
{
	static const int ms[] = { 1, 8, 32 };
	int n = b->opt->smoke ? SMOKE_GEMM_N : GEMM_N;
	char name[96];

	snprintf(name, sizeof(name), "sgemm %dx%dx%d", n, n, n);
	if (bench_selected(b, name))
		f32_case(b, name, CALL_GEMM, n, n, n);
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		snprintf(name, sizeof(name), "matmul f32 M=%d N=%d K=%d", ms[i], n, n);
		if (bench_selected(b, name))
			f32_case(b, name, CALL_MATMUL, ms[i], n, n);
	}
}

double bench_sgemm_gflops(struct bench *b)
{
	int n = b->opt->smoke ? SMOKE_GEMM_N : GEMM_N;
	char name[96];

	if (b->sgemm <= 0) {
		snprintf(name, sizeof(name), "sgemm %dx%dx%d", n, n, n);
		f32_case(b, name, CALL_GEMM, n, n, n);
	}
	return b->sgemm;
}

/* ------------------------------------------------------------ quantized matmul */

/* Both M of one weight dtype over one rotation of weight matrices. */
static void quant_dtype(struct bench *b, gllmk_dtype t, int n, int k, int m_big)
{
	const int ms[2] = { 1, m_big };
	char names[2][96];
	uint64_t wbytes = bench_matrix_bytes(t, n, k);
	int n_rot = rotation_count(b, wbytes);
	gllmk_buffer *bw = NULL, *bx = NULL, *by = NULL;
	gllmk_status st;
	bool any = false;

	for (int i = 0; i < 2; i++) {
		snprintf(names[i], sizeof(names[i]), "matmul %s M=%d N=%d K=%d", gllmk_dtype_name(t), ms[i], n, k);
		any |= bench_selected(b, names[i]);
	}
	if (!any)
		return;
	bw = bench_random_buffer(b, t, wbytes * (uint64_t)n_rot, 10 + (uint64_t)t, &st);
	bx = bw ? bench_random_buffer(b, GLLMK_F32, (uint64_t)m_big * k * 4, 3, &st) : NULL;
	if (bx)
		st = gllmk_buffer_alloc(b->ctx, (uint64_t)m_big * n * 4, &by);
	for (int i = 0; i < 2; i++) {
		struct call c = {
			.ctx = b->ctx,
			.op = CALL_MATMUL,
			.rot_arg = { 2, -1 },
			.n_rot = n_rot,
			.rot_stride = { wbytes },
		};
		struct bench_stats stats;
		struct bench_result *r;
		double gflop = 2.0 * ms[i] * n * k / 1e9;

		if (!bench_selected(b, names[i]))
			continue;
		if (st == GLLMK_OK) {
			c.t[0] = tensor2(by, GLLMK_F32, ms[i], n);
			c.t[1] = tensor2(bx, GLLMK_F32, ms[i], k);
			c.t[2] = tensor2(bw, t, n, k);
			st = bench_time(b, call_run, &c, &stats);
		}
		if (st != GLLMK_OK) {
			bench_fail(b, names[i], st);
			continue;
		}
		if (ms[i] == 1 && (r = bench_add(b, "GB/s", BENCH_LIMIT_DRAM, "%s", names[i]))) {
			bench_rate(r, &stats, (double)wbytes / 1e9);
			snprintf(r->note, sizeof(r->note), "weight bytes; %.1f GFLOP/s; %d matrices of %.1f MiB",
				 gflop / stats.median, n_rot, (double)wbytes / BENCH_MiB);
			bench_finish_result(b, r);
		} else if (ms[i] > 1 && (r = bench_add(b, "GFLOP/s", BENCH_LIMIT_PEAK, "%s", names[i]))) {
			bench_rate(r, &stats, gflop);
			bench_finish_result(b, r);
		}
	}
	gllmk_buffer_free(bw);
	gllmk_buffer_free(bx);
	gllmk_buffer_free(by);
}

void bench_cases_matmul_quant(struct bench *b)
{
	static const gllmk_dtype types[] = { GLLMK_Q4_0, GLLMK_Q8_0, GLLMK_Q4_K, GLLMK_Q6_K, GLLMK_F16 };
	bool smoke = b->opt->smoke;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		quant_dtype(b, types[i], smoke ? SMOKE_QUANT_N : QUANT_N, smoke ? SMOKE_QUANT_K : QUANT_K,
			    smoke ? SMOKE_QUANT_M_BIG : QUANT_M_BIG);
}

/* ------------------------------------------------------------ memory-bound */

/* One op over bytes of f32 input into a separate output; GB/s counts both. */
static void memory_case(struct bench *b, const char *op_name, enum call_op op, uint64_t bytes)
{
	int64_t elems = (int64_t)(bytes / 4), rows = elems / MEM_ROW;
	char name[96];
	gllmk_buffer *bx = NULL, *by = NULL, *baux = NULL;
	gllmk_status st;
	struct call c = { .ctx = b->ctx, .op = op, .rot_arg = { -1, -1 } };
	struct bench_stats stats;
	struct bench_result *r;

	snprintf(name, sizeof(name), "%s %.0f MiB", op_name, (double)bytes / BENCH_MiB);
	if (!bench_selected(b, name))
		return;
	bx = bench_random_buffer(b, GLLMK_F32, bytes, 4, &st);
	if (bx)
		st = gllmk_buffer_alloc(b->ctx, bytes, &by);
	if (st == GLLMK_OK && op == CALL_ROPE) {
		int64_t tokens = elems / (ROPE_HEADS * ROPE_DIM);
		int32_t *pos = malloc((size_t)tokens * 4);

		for (int64_t i = 0; pos && i < tokens; i++)
			pos[i] = (int32_t)i;
		baux = pos ? bench_upload(b, pos, (uint64_t)tokens * 4, &st) : NULL;
		st = pos ? st : GLLMK_E_NO_MEMORY;
		free(pos);
		c.t[0] = tensor3(by, GLLMK_F32, tokens, ROPE_HEADS, ROPE_DIM);
		c.t[1] = tensor3(bx, GLLMK_F32, tokens, ROPE_HEADS, ROPE_DIM);
		c.t[2] = gllmk_tensor_make(baux, 0, GLLMK_I32, 1, &tokens);
	} else if (st == GLLMK_OK) {
		const int64_t row = MEM_ROW;

		if (op == CALL_RMS_NORM)
			baux = bench_random_buffer(b, GLLMK_F32, MEM_ROW * 4, 5, &st);
		c.t[0] = tensor2(by, GLLMK_F32, rows, MEM_ROW);
		c.t[1] = tensor2(bx, GLLMK_F32, rows, MEM_ROW);
		c.t[2] = gllmk_tensor_make(baux, 0, GLLMK_F32, 1, &row);
	}
	if (st == GLLMK_OK)
		st = bench_time(b, call_run, &c, &stats);
	if (st != GLLMK_OK) {
		bench_fail(b, name, st);
	} else if ((r = bench_add(b, "GB/s", BENCH_LIMIT_DRAM, "%s", name))) {
		bench_rate(r, &stats, 2.0 * (double)bytes / 1e9);
		snprintf(r->note, sizeof(r->note), "bytes read + written");
		bench_finish_result(b, r);
	}
	gllmk_buffer_free(bx);
	gllmk_buffer_free(by);
	gllmk_buffer_free(baux);
}

void bench_cases_memory(struct bench *b)
{
	uint64_t bytes = b->opt->smoke ? SMOKE_MEM_BYTES : MEM_BYTES;

	memory_case(b, "rms_norm", CALL_RMS_NORM, bytes);
	memory_case(b, "softmax", CALL_SOFTMAX, bytes);
	memory_case(b, "rope", CALL_ROPE, bytes);
	memory_case(b, "silu", CALL_SILU, bytes);
}

/* ------------------------------------------------------------ attention */

/* One decode step (one query token) over an f16 KV cache; the caches of
 * several layers rotate so each call reads its K and V from DRAM. */
void bench_cases_attention(struct bench *b)
{
	int tokens = b->opt->smoke ? SMOKE_ATT_T : ATT_T;
	uint64_t kv_bytes = (uint64_t)tokens * ATT_HKV * ATT_D * 2; /* K or V of one layer */
	int layers = rotation_count(b, 2 * kv_bytes);
	char name[96];
	gllmk_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
	gllmk_status st;
	struct call c = {
		.ctx = b->ctx,
		.op = CALL_ATTENTION,
		.rot_arg = { 2, 3 },
		.n_rot = layers,
		.rot_stride = { kv_bytes, kv_bytes },
	};
	struct bench_stats stats;
	struct bench_result *r;

	snprintf(name, sizeof(name), "attention decode Hq=%d Hkv=%d D=%d T=%d f16 KV", ATT_HQ, ATT_HKV, ATT_D, tokens);
	if (!bench_selected(b, name))
		return;
	bq = bench_random_buffer(b, GLLMK_F32, ATT_HQ * ATT_D * 4, 6, &st);
	bk = bq ? bench_random_buffer(b, GLLMK_F16, kv_bytes * (uint64_t)layers, 7, &st) : NULL;
	bv = bk ? bench_random_buffer(b, GLLMK_F16, kv_bytes * (uint64_t)layers, 8, &st) : NULL;
	if (bv)
		st = gllmk_buffer_alloc(b->ctx, ATT_HQ * ATT_D * 4, &bo);
	if (st == GLLMK_OK) {
		c.t[0] = tensor3(bo, GLLMK_F32, 1, ATT_HQ, ATT_D);
		c.t[1] = tensor3(bq, GLLMK_F32, 1, ATT_HQ, ATT_D);
		c.t[2] = tensor3(bk, GLLMK_F16, tokens, ATT_HKV, ATT_D);
		c.t[3] = tensor3(bv, GLLMK_F16, tokens, ATT_HKV, ATT_D);
		st = bench_time(b, call_run, &c, &stats);
	}
	if (st != GLLMK_OK) {
		bench_fail(b, name, st);
	} else if ((r = bench_add(b, "GB/s", BENCH_LIMIT_DRAM, "%s", name))) {
		bench_rate(r, &stats, 2.0 * (double)kv_bytes / 1e9);
		snprintf(r->note, sizeof(r->note), "KV bytes read; %.1f us/step; %d layers of %.0f MiB KV",
			 stats.median * 1e6, layers, 2.0 * (double)kv_bytes / BENCH_MiB);
		bench_finish_result(b, r);
	}
	gllmk_buffer_free(bq);
	gllmk_buffer_free(bk);
	gllmk_buffer_free(bv);
	gllmk_buffer_free(bo);
}
