/* gllmk_gemm and the GEMM framework (ops_gemm.h): BLIS's loop nest, run
 * by every thread over its own cell of a tm × tn grid over C
 *
 *   for jc in the cell's N by nc:      B block kc×nc lives in L3
 *     for pc in K by kc:
 *       pack B[pc.., jc..] into nr-panels          (this thread's buffer)
 *       for ic in the cell's M by mc:  A block mc×kc lives in L2
 *         pack A[ic.., pc..] into mr-panels        (this thread's buffer)
 *         for jr in nc by nr:          B micro-panel kc×nr
 *           for ir in mc by mr:
 *             microkernel: C[mr×nr] = alpha·A·B + beta·C
 *
 * One parallel region per call and no barrier inside it: the grid splits N
 * first, so each thread packs (and, for matmul, decodes) only its own
 * columns of B; when N is too narrow, M is split and each thread packs the
 * B it needs. The block sizes come from the cache sizes the CPU reports
 * (read once) and the ISA's register block. Packing pads the last panels
 * with zeros, so the microkernel always sees whole blocks; edge tiles go
 * through a small C tile on the stack. B may be a quantized weight matrix
 * decoded while it is packed (matmul with large M): that is the only place
 * weights are decoded. M below the register block skips all of this (dots
 * or axpys over B, which is read once).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops_gemm.h"
#include "cpu_rows.h"
#include "quant_blocks.h"

#define KC_MIN 128
#define KC_MAX 1024
#define MC_MAX 4096
#define NC_MAX 4096
#define TILE_MAX 4096           /* mr·nr of the largest register block */

/* ------------------------------------------------------------ caches */

struct cpu_caches {
	int64_t l1d, l2, l3;
};

static pthread_once_t caches_once = PTHREAD_ONCE_INIT;
static struct cpu_caches caches;

/* Size of the data/unified cache of a level from sysfs ("48K"), 0 if none. */
static int64_t sysfs_cache_size(int level)
{
	for (int idx = 0; idx < 8; idx++) {
		char path[96], type[32] = "", size[32] = "";
		int lvl = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%d", &lvl) != 1)
			lvl = 0;
		fclose(f);
		if (lvl != level)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%31s", type) != 1)
				type[0] = 0;
			fclose(f);
		}
		if (strcmp(type, "Instruction") == 0)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%31s", size) != 1)
			size[0] = 0;
		fclose(f);

		char *end;
		int64_t v = strtoll(size, &end, 10);

		if (*end == 'K')
			v <<= 10;
		else if (*end == 'M')
			v <<= 20;
		return v > 0 ? v : 0;
	}
	return 0;
}

static int64_t cache_size(int sc_name, int level, int64_t fallback)
{
	long v = sysconf(sc_name);

	if (v > 0)
		return v;
	v = (long)sysfs_cache_size(level);
	return v > 0 ? v : fallback;
}

static void caches_init(void)
{
	caches.l1d = cache_size(_SC_LEVEL1_DCACHE_SIZE, 1, 32 << 10);
	caches.l2 = cache_size(_SC_LEVEL2_CACHE_SIZE, 2, 1 << 20);
	caches.l3 = cache_size(_SC_LEVEL3_CACHE_SIZE, 3, 8 << 20);
}

/* ---------------------------------------------------------- blocking */

static int64_t round_up(int64_t x, int64_t m)
{
	return (x + m - 1) / m * m;
}

static int64_t ceil_div(int64_t x, int64_t m)
{
	return (x + m - 1) / m;
}

static int64_t clamp(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t isqrt(int64_t x)
{
	int64_t r = 0;

	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

/* One thread's rectangle of C: rows [m0, m1), columns [n0, n1). */
struct gemm_blocks {
	int64_t kc, mc, nc;     /* block sizes (mc, nc multiples of mr, nr) */
	int64_t tm, tn;         /* the threads as a tm × tn grid over C */
};

/* The thread grid: split N first (each thread then packs, and decodes,
 * only its own columns of B), into the largest divisor of the thread
 * count that still leaves every thread two nr-panels; the rest of the
 * threads split M. Every thread packs its own A and B blocks, so a GEMM
 * is one parallel region with no barrier inside. */
static void thread_grid(struct gemm_blocks *b, const struct cpu_kernels *k, const struct cpu_sgemm *g, int threads)
{
	const int64_t panels = ceil_div(g->n, k->nr), row_blocks = ceil_div(g->m, k->mr);

	b->tn = 1;
	for (int64_t d = threads; d > 1; d--) {
		if (threads % d == 0 && panels >= 2 * d) {
			b->tn = d;
			break;
		}
	}
	b->tm = min64(threads / b->tn, row_blocks);
}

/* kc: the depth of a block. The A block (mc×kc) lives in L2 and is
 * reused against every nr-panel of B, the C tile is loaded and stored
 * once per kc; the larger kc, the less that costs. kc comes from L2 (a
 * square kc×kc A block fills half of it: 512 on a 2 MiB L2, 352 on 1 MiB),
 * not from L1: a wide register block (nr = 32) would get kc = 192 from
 * half of a 48 KiB L1, and its C updates then cost ~10 %. A decoded B
 * starts on a block boundary of its dtype. mc: the A block half of L2;
 * nc: the thread's kc×nc B block in its share of half of L3. */
static struct gemm_blocks gemm_blocking(const struct cpu_kernels *k, const struct cpu_sgemm *g, int threads)
{
	struct gemm_blocks b;
	const int64_t mr = k->mr, nr = k->nr, fsz = sizeof(float);
	int64_t mc_max, rows, n_ic;

	pthread_once(&caches_once, caches_init);
	thread_grid(&b, k, g, threads);
	b.kc = clamp(isqrt(caches.l2 / 2 / fsz) / 32 * 32, KC_MIN, KC_MAX);
	if (g->b_dequant) {
		const int64_t blk = cpu_block_elems(g->b_dtype);

		b.kc = b.kc < blk ? blk : b.kc / blk * blk;
	}
	if (b.kc > g->k)
		b.kc = g->k;
	mc_max = clamp(caches.l2 / 2 / (b.kc * fsz), mr, MC_MAX) / mr * mr;
	rows = ceil_div(g->m, b.tm);
	n_ic = ceil_div(rows, mc_max);
	b.mc = round_up(ceil_div(rows, n_ic), mr);
	b.nc = clamp(caches.l3 / 2 / threads / (b.kc * fsz), nr, NC_MAX) / nr * nr;
	b.nc = min64(b.nc, round_up(ceil_div(g->n, b.tn), nr));
	return b;
}

/* ----------------------------------------------------------- packing */

/* A[i0.., p0..] (mc×kc) into mr-row panels: panel r holds A(i0 + r·mr + ii, p0 + p)
 * at [p·mr + ii], rows past mc zero. The inner loop writes contiguously
 * (and reads contiguously when A is column-major), so gcc vectorises it. */
static void pack_a(const struct cpu_sgemm *g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t mr,
		   float *dst)
{
	const int64_t rs = g->a_rs, cs = g->a_cs;

	for (int64_t ir = 0; ir < mc; ir += mr, dst += mr * kc) {
		const int64_t rows = min64(mc - ir, mr);
		const float *src = g->a + (i0 + ir) * rs + p0 * cs;

		for (int64_t p = 0; p < kc; p++) {
			float *d = dst + p * mr;
			const float *s = src + p * cs;

			if (rs == 1) {
				memcpy(d, s, (size_t)rows * sizeof(float));
			} else {
				for (int64_t ii = 0; ii < rows; ii++)
					d[ii] = s[ii * rs];
			}
			for (int64_t ii = rows; ii < mr; ii++)
				d[ii] = 0.0f;
		}
	}
}

/* One nr-panel of B: B(p0 + p, j0 + jj) at [p·nr + jj], columns past cols zero. */
static void pack_b_panel(const struct cpu_sgemm *g, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
			 float *dst)
{
	if (g->b_dequant) {
		float row[KC_MAX];

		for (int64_t jj = 0; jj < cols; jj++) {
			const char *src = (const char *)g->b + (j0 + jj) * g->b_row_bytes +
					  cpu_row_bytes(g->b_dtype, p0);

			g->b_dequant(src, row, kc);
			for (int64_t p = 0; p < kc; p++)
				dst[p * nr + jj] = row[p];
		}
	} else if (g->b_cs == 1) {
		const float *b = g->b;

		for (int64_t p = 0; p < kc; p++)
			memcpy(dst + p * nr, b + (p0 + p) * g->b_rs + j0, (size_t)cols * sizeof(float));
	} else {
		/* a transpose (matmul's f32 weights): p outer, so every store
		 * is contiguous and the cols source rows are read as streams */
		const float *b = (const float *)g->b + j0 * g->b_cs + p0 * g->b_rs;

		for (int64_t p = 0; p < kc; p++) {
			float *d = dst + p * nr;
			const float *src = b + p * g->b_rs;

			for (int64_t jj = 0; jj < cols; jj++)
				d[jj] = src[jj * g->b_cs];
		}
	}
	for (int64_t jj = cols; jj < nr; jj++)
		for (int64_t p = 0; p < kc; p++)
			dst[p * nr + jj] = 0.0f;
}

/* ------------------------------------------------------------- run */

struct gemm_run {
	const struct cpu_sgemm *g;
	const struct cpu_kernels *k;
	struct gemm_blocks b;
	float *buf;             /* per thread: a kc×nc B block, then an mc×kc A block */
	int64_t thread_floats;
};

/* The state of one thread's walk over its rectangle. */
struct gemm_step {
	int64_t jc, nc;         /* the current B block: columns [jc, jc + nc) */
	int64_t pc, kc;         /*                      depth   [pc, pc + kc) */
	float beta;             /* g->beta on the first depth block, then 1 */
	const float *bpack, *apack;
};

/* An edge block: the whole mr×nr through a tile, then the valid part. */
static void edge_tile(const struct gemm_run *r, const struct gemm_step *st, const float *ap, const float *bp,
		      float *c, int64_t rows, int64_t cols)
{
	const struct cpu_sgemm *g = r->g;
	const int64_t nr = r->k->nr;
	float tile[TILE_MAX];

	r->k->sgemm_ukernel(st->kc, ap, bp, tile, nr, 1.0f, 0.0f);
	for (int64_t i = 0; i < rows; i++) {
		float *ci = c + i * g->ldc;

		if (st->beta == 0.0f) {
			for (int64_t j = 0; j < cols; j++)
				ci[j] = g->alpha * tile[i * nr + j];
		} else {
			for (int64_t j = 0; j < cols; j++)
				ci[j] = g->alpha * tile[i * nr + j] + st->beta * ci[j];
		}
	}
}

/* The packed A block (rows [ic, ic + mc)) against the packed B block. */
static void macro_kernel(const struct gemm_run *r, const struct gemm_step *st, int64_t ic, int64_t mc)
{
	const struct cpu_sgemm *g = r->g;
	const int64_t mr = r->k->mr, nr = r->k->nr;

	for (int64_t jr = 0; jr < st->nc; jr += nr) {
		const float *bp = st->bpack + jr * st->kc;
		const int64_t j = st->jc + jr;
		const int64_t cols = min64(st->nc - jr, nr);

		for (int64_t ir = 0; ir < mc; ir += mr) {
			const float *ap = st->apack + ir * st->kc;
			float *c = g->c + (ic + ir) * g->ldc + j;
			const int64_t rows = min64(mc - ir, mr);

			if (rows == mr && cols == nr)
				r->k->sgemm_ukernel(st->kc, ap, bp, c, g->ldc, g->alpha, st->beta);
			else
				edge_tile(r, st, ap, bp, c, rows, cols);
		}
	}
}

/* Task t: the thread-grid cell (t / tn, t % tn), the whole BLIS loop nest
 * over it with this thread's packing buffers. */
static void gemm_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct gemm_run *r = arg;
	const struct cpu_sgemm *g = r->g;
	const int64_t mr = r->k->mr, nr = r->k->nr;
	float *bpack = r->buf + tid * r->thread_floats;
	float *apack = bpack + r->b.kc * r->b.nc;
	struct gemm_step st = { .bpack = bpack, .apack = apack };

	for (int64_t t = begin; t < end; t++) {
		const int64_t row_blocks = ceil_div(g->m, mr), panels = ceil_div(g->n, nr);
		const int64_t ti = t / r->b.tn, tj = t % r->b.tn;
		const int64_t m0 = row_blocks * ti / r->b.tm * mr, m1 = min64(row_blocks * (ti + 1) / r->b.tm * mr, g->m);
		const int64_t n0 = panels * tj / r->b.tn * nr, n1 = min64(panels * (tj + 1) / r->b.tn * nr, g->n);

		for (st.jc = n0; st.jc < n1; st.jc += r->b.nc) {
			st.nc = min64(n1 - st.jc, r->b.nc);
			for (st.pc = 0; st.pc < g->k; st.pc += r->b.kc) {
				st.kc = min64(g->k - st.pc, r->b.kc);
				st.beta = st.pc == 0 ? g->beta : 1.0f;
				for (int64_t jr = 0; jr < st.nc; jr += nr)
					pack_b_panel(g, st.pc, st.kc, st.jc + jr, min64(st.nc - jr, nr), nr,
						     bpack + jr * st.kc);
				for (int64_t ic = m0; ic < m1; ic += r->b.mc) {
					const int64_t mc = min64(m1 - ic, r->b.mc);

					pack_a(g, ic, mc, st.pc, st.kc, mr, apack);
					macro_kernel(r, &st, ic, mc);
				}
			}
		}
	}
}

/* alpha == 0: C = beta·C, A and B not read (as BLAS). */
static void scale_c(const struct cpu_sgemm *g)
{
	for (int64_t i = 0; i < g->m; i++) {
		float *c = g->c + i * g->ldc;

		for (int64_t j = 0; j < g->n; j++)
			c[j] = g->beta == 0.0f ? 0.0f : g->beta * c[j];
	}
}

/* ---------------------------------------------------- small M: M < mr */

#define AXPY_COLS 512           /* columns of C a task accumulates at a time */
/* Up to this M the dots/axpys beat a padded register block: each axpy
 * loads and stores its accumulators, so at M = 8 the microkernel, even
 * 8/14 full, was faster (gllmk-bench, M = 1..8, N = K = 4096). */
#define SMALL_M_MAX 4

static void axpy_f32(const struct cpu_kernels *k, float *y, float a, const float *x, int64_t n)
{
	if (k->axpy_f32) {
		k->axpy_f32(y, a, x, n);
		return;
	}
	for (int64_t i = 0; i < n; i++)
		y[i] += a * x[i];
}

struct small_m_job {
	const struct cpu_sgemm *g;
	const struct cpu_kernels *k;
};

static void store_c(const struct cpu_sgemm *g, float *c, float v)
{
	*c = g->beta == 0.0f ? g->alpha * v : g->alpha * v + g->beta * *c;
}

/* B's columns are contiguous (trans_b): one dot per element of C, B read once. */
static void dot_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct small_m_job *s = arg;
	const struct cpu_sgemm *g = s->g;

	(void)tid;
	for (int64_t j = begin; j < end; j++)
		for (int64_t i = 0; i < g->m; i++)
			store_c(g, g->c + i * g->ldc + j,
				s->k->dot_f32(g->k, g->a + i * g->a_rs, (const float *)g->b + j * g->b_cs));
}

/* B's rows are contiguous: C's row i is Σ_p A(i, p)·B(p, :), AXPY_COLS
 * columns at a time so the M accumulators and the B row piece stay in L1. */
static void axpy_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct small_m_job *s = arg;
	const struct cpu_sgemm *g = s->g;
	float acc[SMALL_M_MAX * AXPY_COLS];

	(void)tid;
	for (int64_t c0 = begin; c0 < end; c0++) {
		const int64_t j0 = c0 * AXPY_COLS, cols = min64(g->n - j0, AXPY_COLS);

		memset(acc, 0, (size_t)(g->m * AXPY_COLS) * sizeof(float));
		for (int64_t p = 0; p < g->k; p++) {
			const float *brow = (const float *)g->b + p * g->b_rs + j0;

			for (int64_t i = 0; i < g->m; i++)
				axpy_f32(s->k, acc + i * AXPY_COLS, g->a[i * g->a_rs + p * g->a_cs], brow, cols);
		}
		for (int64_t i = 0; i < g->m; i++)
			for (int64_t j = 0; j < cols; j++)
				store_c(g, g->c + i * g->ldc + j0 + j, acc[i * AXPY_COLS + j]);
	}
}

/* M <= SMALL_M_MAX (and < mr): a register block would be mostly padding,
 * and B is read once anyway; dots or axpys stream it at memory speed.
 * Returns 0 when the layout has no such path (then the GEMM runs). */
static int sgemm_small_m(struct cpu_state *s, const struct cpu_sgemm *g)
{
	struct small_m_job job = { .g = g, .k = s->k };

	if (g->m > SMALL_M_MAX || g->m >= s->k->mr || g->b_dequant)
		return 0;
	if (g->b_rs == 1 && g->a_cs == 1) {
		cpu_pool_run(s->pool, g->n, 1 + (1 << 16) / (g->k * g->m), dot_task, &job);
		return 1;
	}
	if (g->b_cs == 1) {
		cpu_pool_run(s->pool, ceil_div(g->n, AXPY_COLS), 1 + (1 << 16) / (g->k * AXPY_COLS), axpy_task, &job);
		return 1;
	}
	return 0;
}

gllmk_status cpu_sgemm_run(struct cpu_state *s, const struct cpu_sgemm *g)
{
	const struct cpu_kernels *k = s->k;
	const int threads = cpu_pool_threads(s->pool);
	struct gemm_run r = { .g = g, .k = k };
	size_t bytes;

	if (g->alpha == 0.0f) {
		scale_c(g);
		return GLLMK_OK;
	}
	if (sgemm_small_m(s, g))
		return GLLMK_OK;
	r.b = gemm_blocking(k, g, threads);
	r.thread_floats = round_up(r.b.kc * r.b.nc + r.b.mc * r.b.kc, 16);
	bytes = (size_t)(r.thread_floats * threads) * sizeof(float);
	r.buf = aligned_alloc(64, (size_t)round_up((int64_t)bytes, 64));
	if (!r.buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk: %zu bytes of GEMM packing buffers", bytes);
	cpu_pool_run(s->pool, r.b.tm * r.b.tn, 1, gemm_task, &r);
	free(r.buf);
	return GLLMK_OK;
}

int64_t cpu_uniform_row_stride(const gllmk_tensor *t, int64_t elem_bytes)
{
	int64_t stride = -1, span = 0;

	for (int d = t->ndim - 2; d >= 0; d--) {
		if (t->shape[d] == 1)
			continue;
		if (stride < 0)
			stride = t->stride[d];
		else if (t->stride[d] != span)
			return -1;
		span = t->stride[d] * t->shape[d];
	}
	if (stride < 0)
		return 0;
	return stride % elem_bytes ? -1 : stride / elem_bytes;
}

/* ------------------------------------------------------------ the op */

/* Elements between rows of a 2-D f32 operand. */
static int64_t ld_of(const gllmk_tensor *t)
{
	return t->ndim >= 2 ? t->stride[t->ndim - 2] / (int64_t)sizeof(float) : 0;
}

gllmk_status cpu_gemm(void *st, gllmk_t c, gllmk_t a, gllmk_t b, const gllmk_gemm_params *p)
{
	const int64_t lda = ld_of(a), ldb = ld_of(b);
	struct cpu_sgemm g = {
		.m = c->shape[0],
		.n = c->shape[1],
		.k = p->trans_a ? a->shape[0] : a->shape[1],
		.a = gllmk_tensor_host(a),
		.a_rs = p->trans_a ? 1 : lda,
		.a_cs = p->trans_a ? lda : 1,
		.b = gllmk_tensor_host(b),
		.b_rs = p->trans_b ? 1 : ldb,
		.b_cs = p->trans_b ? ldb : 1,
		.c = gllmk_tensor_host(c),
		.ldc = ld_of(c),
		.alpha = p->alpha,
		.beta = p->beta,
	};

	return cpu_sgemm_run(st, &g);
}
