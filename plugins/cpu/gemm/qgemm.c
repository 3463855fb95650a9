/* The int8 GEMM (gemm/qgemm.h): matmul with block weights at large M.
 *
 *   quantize x once (q8_0's encoder, q8_K's in the xs256 mode), packed
 *   into mr-row panels over all K
 *   every thread, over its columns of y (N split first: 3/4 of its share
 *   as one run, then chunks of the rest as it frees up), or over its cell
 *   of a tm × tn grid when N is too narrow to split alone:
 *     for jc in the thread's columns by nc:
 *       for pc in K by kc:         kc a multiple of 256 (K-quant blocks whole)
 *         decode + pack w[jc.., pc..] into 16-row panels   (L2, this thread's)
 *         for ir in the cell's M by mr:      A micro-panel mr×kc in L1
 *           for jr in nc by 16:
 *             microkernel: y[mr×16] (+)= A·B
 *
 * Every weight element is decoded once per call (the thread's B block is
 * reused by all M rows); the activations are quantized once per call.
 * Edge tiles go through a tile on the stack.
 */
#include <stdlib.h>
#include <string.h>

#include "gemm/qgemm.h"
#include "gemm/sgemm.h"
#include "fp16.h"
#include "prepared.h"
#include "quant_blocks.h"

#define KC_MAX CPU_QGEMM_KC_MAX
/* Every depth block but the last is KC_MAX long and K is whole blocks of
 * the weights: a 256-element block never straddles two (the xs256 mode
 * multiplies by xs per 256 within one microkernel call). */
_Static_assert(KC_MAX % QK_K == 0, "kc splits K-quant blocks");
#define NC_MAX 4096
#define QUANT_CHUNK 1024        /* activation elements encoded at a time */
#define QGEMM_MR_MAX 16
#define PANELS_GRAIN 2          /* the streaming cut in pairs of 16-column panels */

typedef int32_t i32_alias __attribute__((may_alias));
typedef float f32_alias __attribute__((may_alias));

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t ceil_div(int64_t x, int64_t m)
{
	return (x + m - 1) / m;
}

struct qgemm_run {
	const struct cpu_qgemm *g;
	const struct cpu_cntx *k;
	const struct cpu_qgemm_format *f;
	cpu_qgemm_ukernel_fn ukernel;
	int64_t mr, sb;
	int w_bias;                     /* subtracted from u when packing: c (signed packing) or 0 */
	int xs256;                      /* x as q8_K, one xs per 256 (ukernel_xs256, gemm/qgemm.h) */
	int isc;                        /* the isc mode (ukernel_isc, gemm/qgemm.h): x as q8_K too */
	int64_t a_sb_bytes, a_panel_bytes; /* packed A: per sub-block, per mr-row panel (all K) */
	int64_t b_sb_bytes;             /* packed B: per sub-block of a 16-row panel */
	int64_t b_256_bytes;            /*           and per 256 after its sub-blocks (isc) */
	int64_t kc, nc, tm, tn;
	uint8_t *apack;
	uint8_t *bbuf;                  /* per thread: a kc×nc B block */
	int64_t thread_bytes;
};

int cpu_qgemm_supports(const struct cpu_cntx *k, int32_t t)
{
	return k->qgemm.mr > 0 && cpu_qgemm_format(t) != NULL;
}

/* ----------------------------------------------------------- A: x */

static int32_t sub_sum(const int8_t *v, int64_t n)
{
	int32_t sum = 0;

	for (int64_t j = 0; j < n; j++)
		sum += v[j];
	return sum;
}

/* One sub-block (number s of the row) of row ii at d (gemm/qgemm.h, A):
 * its sb bytes v, its scale xs and its xo. */
static void pack_a_sub(const struct qgemm_run *r, uint8_t *d, int64_t s, int64_t ii, const int8_t *v, float xs)
{
	const int64_t mr = r->mr, sb = r->sb;
	uint8_t *xo = d + sb * mr + 4 * mr + 4 * ii;
	int32_t sum;

	for (int64_t j = 0; j < sb / 4; j++)
		memcpy(d + (j * mr + ii) * 4, v + 4 * j, 4);
	((f32_alias *)(d + sb * mr))[ii] = xs;
	if (r->isc) { /* even s: (Σ of s, Σ of s + 1) as i16, odd s: 0 */
		*(i32_alias *)xo = s % 2 ? 0 : (int32_t)((uint32_t)(uint16_t)sub_sum(v, sb) |
							 (uint32_t)(uint16_t)sub_sum(v + sb, sb) << 16);
		return;
	}
	sum = sub_sum(v, sb);
	if (r->f->has_min) /* xs256: the microkernel multiplies by xs per 256 */
		*(f32_alias *)xo = r->xs256 ? (float)sum : xs * (float)sum;
	else
		*(i32_alias *)xo = -(r->f->c - r->w_bias) * sum;
}

/* Row m of x into row ii of its panel: QUANT_CHUNK elements at a time
 * through the ISA's q8_0 encoder (q8_K in the xs256 mode), then each
 * sub-block with the scale of the q8 block it lies in. */
static void pack_a_row(const struct qgemm_run *r, int64_t m, uint8_t *panel, int64_t ii)
{
	const struct cpu_qgemm *g = r->g;
	const int64_t sb = r->sb;
	const float *x = g->x + m * g->ldx;
	union {
		struct block_q8_0 q8_0[QUANT_CHUNK / QK8_0];
		struct block_q8_K q8_K[QUANT_CHUNK / QK_K];
	} q;

	for (int64_t k0 = 0; k0 < g->k; k0 += QUANT_CHUNK) {
		const int64_t len = min64(g->k - k0, QUANT_CHUNK);
		uint8_t *d = panel + k0 / sb * r->a_sb_bytes;

		if (r->xs256 || r->isc) {
			r->k->quant_row[GLLMK_Q8_K](x + k0, q.q8_K, len);
			for (int64_t e = 0; e < len; e += sb, d += r->a_sb_bytes)
				pack_a_sub(r, d, (k0 + e) / sb, ii, q.q8_K[e / QK_K].qs + e % QK_K, q.q8_K[e / QK_K].d);
		} else {
			r->k->quant_row[GLLMK_Q8_0](x + k0, q.q8_0, len);
			for (int64_t e = 0; e < len; e += sb, d += r->a_sb_bytes)
				pack_a_sub(r, d, (k0 + e) / sb, ii, q.q8_0[e / QK8_0].qs + e % QK8_0,
					   f16_to_f32(q.q8_0[e / QK8_0].d));
		}
	}
}

static void pack_a_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct qgemm_run *r = arg;

	(void)tid;
	for (int64_t p = begin; p < end; p++) {
		uint8_t *panel = r->apack + p * r->a_panel_bytes;
		const int64_t rows = min64(r->g->m - p * r->mr, r->mr);

		if (rows < r->mr)
			memset(panel, 0, (size_t)r->a_panel_bytes);
		for (int64_t ii = 0; ii < rows; ii++)
			pack_a_row(r, p * r->mr + ii, panel, ii);
	}
}

/* ----------------------------------------------------------- B: w */

/* Weight rows [n0, n0 + 16) (those below N), depths [p0, p0 + kc), into
 * one 16-row panel: the ISA's packer for this dtype (in the isc mode its
 * isc packer) where it has one and kc is whole 64s of K, else the
 * framework's (and in the isc mode the framework's isc pass). */
static void pack_b_panel(const struct qgemm_run *r, int64_t p0, int64_t kc, int64_t n0, uint8_t *dst)
{
	const struct cpu_qgemm *g = r->g;
	const char *src = (const char *)g->w + n0 * g->w_row_bytes + cpu_row_bytes(g->w_dtype, p0);
	const cpu_qgemm_pack_fn isa_pack = r->k->qgemm.pack_b[g->w_dtype], isc_pack = r->k->qgemm.pack_b_isc[g->w_dtype];
	const int64_t rows = min64(g->n - n0, CPU_QGEMM_NR);
	int64_t row_bytes = g->w_row_bytes;
	_Alignas(64) char plain[CPU_QGEMM_NR * CPU_PREPARED_PLAIN_BYTES(CPU_QGEMM_KC_MAX)];

	if (g->w_layout) { /* the panel's part of its groups, back to plain rows */
		cpu_prepared_unpack(g->w_layout, g->w, g->w_row_bytes, n0, rows, p0, kc, plain);
		src = plain;
		row_bytes = cpu_row_bytes(g->w_dtype, kc);
	}
	if (r->isc && isc_pack && kc % 64 == 0) {
		isc_pack(src, row_bytes, rows, kc, r->w_bias, dst);
		return;
	}
	if (isa_pack && kc % 64 == 0)
		isa_pack(src, row_bytes, rows, kc, r->w_bias, dst);
	else
		cpu_qgemm_pack_b(g->w_dtype, r->w_bias, src, row_bytes, rows, kc, dst);
	if (r->isc)
		cpu_qgemm_isc_scales(g->w_dtype, src, row_bytes, rows, kc, dst);
}

/* Bytes of a packed 16-row panel kc deep. */
static int64_t b_panel_bytes(const struct qgemm_run *r, int64_t kc)
{
	return kc / r->sb * r->b_sb_bytes + kc / QK_K * r->b_256_bytes;
}

/* ------------------------------------------------------------- run */

/* An edge block: the whole mr×16 through a tile, then the valid part. */
static void edge_tile(const struct qgemm_run *r, int64_t nsb, const uint8_t *ap, const uint8_t *bp, float *c,
		      int64_t rows, int64_t cols, int accumulate)
{
	const int64_t ldc = r->g->ldy;
	float tile[QGEMM_MR_MAX * CPU_QGEMM_NR];

	r->ukernel(nsb, ap, bp, tile, CPU_QGEMM_NR, 0);
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < cols; j++)
			c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * CPU_QGEMM_NR + j] :
					 tile[i * CPU_QGEMM_NR + j];
}

/* y's rows [b0·mr, b1·mr) by its columns [n0, n1): per nc block of
 * columns, each depth block of the weights decoded into this thread's B
 * block once and run against every row panel of the packed A. */
static void qgemm_cell(const struct qgemm_run *r, int64_t b0, int64_t b1, int64_t n0, int64_t n1, uint8_t *bpack)
{
	const struct cpu_qgemm *g = r->g;
	const int64_t mr = r->mr, nr = CPU_QGEMM_NR;

	for (int64_t jc = n0; jc < n1; jc += r->nc) {
		const int64_t nc = min64(n1 - jc, r->nc);

		for (int64_t pc = 0; pc < g->k; pc += r->kc) {
			const int64_t kc = min64(g->k - pc, r->kc), nsb = kc / r->sb;
			const int64_t bpanel = b_panel_bytes(r, kc);

			for (int64_t jr = 0; jr < nc; jr += nr)
				pack_b_panel(r, pc, kc, jc + jr, bpack + jr / nr * bpanel);
			for (int64_t ib = b0; ib < b1; ib++) {
				const uint8_t *ap = r->apack + ib * r->a_panel_bytes + pc / r->sb * r->a_sb_bytes;
				const int64_t rows = min64(g->m - ib * mr, mr);
				float *crow = g->y + ib * mr * g->ldy + jc;

				for (int64_t jr = 0; jr < nc; jr += nr) {
					const uint8_t *bp = bpack + jr / nr * bpanel;
					const int64_t cols = min64(nc - jr, nr);

					if (rows == mr && cols == nr)
						r->ukernel(nsb, ap, bp, crow + jr, g->ldy, pc > 0);
					else
						edge_tile(r, nsb, ap, bp, crow + jr, rows, cols, pc > 0);
				}
			}
		}
	}
}

/* Task t: the thread-grid cell (t / tn, t % tn). */
static void qgemm_grid_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct qgemm_run *r = arg;
	const int64_t row_blocks = ceil_div(r->g->m, r->mr), panels = ceil_div(r->g->n, CPU_QGEMM_NR);

	for (int64_t t = begin; t < end; t++) {
		const int64_t ti = t / r->tn, tj = t % r->tn;

		qgemm_cell(r, row_blocks * ti / r->tm, row_blocks * (ti + 1) / r->tm,
			   panels * tj / r->tn * CPU_QGEMM_NR, min64(panels * (tj + 1) / r->tn * CPU_QGEMM_NR, r->g->n),
			   r->bbuf + tid * r->thread_bytes);
	}
}

/* Items [begin, end) of y's 16-column panels, every row: when N alone
 * is split (tm 1), the pool's streaming cut (threadpool.h) gives each
 * thread 3/4 of its share as one run and deals the last quarter out in
 * chunks to whichever thread is free. The two vCPUs of a VM finish an even
 * split 5-14 % of a call apart, either one last (BENCHMARKS.md, "Session
 * 27"); a chunk of the tail re-reads the packed A for fewer columns, the
 * cost that made an all-fine split slower (session 26). */
static void qgemm_panels_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct qgemm_run *r = arg;

	qgemm_cell(r, 0, ceil_div(r->g->m, r->mr), begin * CPU_QGEMM_NR, min64(end * CPU_QGEMM_NR, r->g->n),
		   r->bbuf + tid * r->thread_bytes);
}

/* A narrow microkernel where the table has one for the format's bytes
 * (cpu_qgemm_kernels.ukernel_narrow): it takes the unsigned packing. */
static void select_narrow(struct qgemm_run *r)
{
	int j = 0;

	while (j < 4 && r->f->umax > (16 << j) - 1)
		j++;
	if (j == 4 || r->xs256 || r->isc || !r->k->qgemm.ukernel_narrow[j][r->sb == 16][r->f->has_min])
		return;
	r->ukernel = r->k->qgemm.ukernel_narrow[j][r->sb == 16][r->f->has_min];
	r->w_bias = 0;
}

/* Rows of x a pass packs at a time: bounds the packed activations
 * (1.25 bytes an element) for long prompts; each pass decodes the weights
 * again, amortised over this many rows. */
#define M_PASS 2048

gllmk_status cpu_qgemm_run(struct cpu_state *s, const struct cpu_qgemm *g)
{
	const int threads = cpu_pool_threads(s->pool);
	struct qgemm_run r = { .k = s->k, .f = cpu_qgemm_format(g->w_dtype), .mr = s->k->qgemm.mr };
	const int64_t panels = ceil_div(g->n, CPU_QGEMM_NR);
	size_t a_bytes, b_bytes;

	r.sb = r.f->sb;
	r.w_bias = s->k->qgemm.signed_w ? r.f->c : 0;
	r.xs256 = cpu_block_elems(g->w_dtype) == QK_K && s->k->qgemm.ukernel_xs256[r.sb == 16][r.f->has_min];
	r.ukernel = r.xs256 ? s->k->qgemm.ukernel_xs256[r.sb == 16][r.f->has_min] :
			      s->k->qgemm.ukernel[r.sb == 16][r.f->has_min];
	r.isc = r.f->isc && s->k->qgemm.ukernel_isc[g->w_dtype];
	if (r.isc) {
		r.xs256 = 0;
		r.ukernel = s->k->qgemm.ukernel_isc[g->w_dtype];
		r.w_bias = r.f->umax > 127 ? r.f->c : 0; /* CPU_QGEMM_ISC_SIGNED_FORMATS */
		r.b_256_bytes = CPU_QGEMM_ISC_TRAILER(r.sb);
	}
	select_narrow(&r);
	r.a_sb_bytes = CPU_QGEMM_A_SB_BYTES(r.sb, r.mr);
	r.a_panel_bytes = g->k / r.sb * r.a_sb_bytes;
	r.b_sb_bytes = CPU_QGEMM_B_SB_BYTES(r.sb, r.f->has_min);
	/* the B block (kc×nc bytes and its scales) in half of L2 */
	r.kc = min64(g->k, KC_MAX);
	r.nc = cpu_l2_bytes() / 2 / b_panel_bytes(&r, r.kc) * CPU_QGEMM_NR;
	r.nc = r.nc < CPU_QGEMM_NR ? CPU_QGEMM_NR : min64(r.nc, NC_MAX);
	/* the grid's tn depends on N alone: every pass has this split of N */
	cpu_gemm_grid(ceil_div(min64(g->m, M_PASS), r.mr), panels, threads, &r.tm, &r.tn);
	r.nc = min64(r.nc, ceil_div(panels, r.tn) * CPU_QGEMM_NR);
	r.thread_bytes = (r.nc / CPU_QGEMM_NR * b_panel_bytes(&r, r.kc) + 63) / 64 * 64;

	a_bytes = (size_t)(ceil_div(min64(g->m, M_PASS), r.mr) * r.a_panel_bytes);
	b_bytes = (size_t)(r.thread_bytes * threads);
	r.apack = aligned_alloc(64, (a_bytes + 63) / 64 * 64);
	r.bbuf = aligned_alloc(64, b_bytes);
	if (!r.apack || !r.bbuf) {
		free(r.apack);
		free(r.bbuf);
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul: %zu bytes of int8 GEMM buffers",
					  a_bytes + b_bytes);
	}
	for (int64_t m0 = 0; m0 < g->m; m0 += M_PASS) {
		struct cpu_qgemm pass = *g;
		int64_t row_blocks;

		pass.m = min64(g->m - m0, M_PASS);
		pass.x = g->x + m0 * g->ldx;
		pass.y = g->y + m0 * g->ldy;
		r.g = &pass;
		row_blocks = ceil_div(pass.m, r.mr);
		cpu_gemm_grid(row_blocks, panels, threads, &r.tm, &r.tn);
		cpu_pool_run(s->pool, row_blocks, 1, pack_a_task, &r);
		if (r.tm == 1)
			cpu_pool_run_streaming(s->pool, panels, PANELS_GRAIN, qgemm_panels_task, &r);
		else
			cpu_pool_run(s->pool, r.tm * r.tn, 1, qgemm_grid_task, &r);
	}
	free(r.apack);
	free(r.bbuf);
	return GLLMK_OK;
}
