/* gllmk_gemm and the GEMM framework (ops_gemm.h): BLIS's loop nest, run
 * by every thread over its own cell of a tm × tn grid over C
 *
 *   for pc in K by kc:
 *     for ic in the cell's M by mc:    A block mc×kc: far caches or DRAM
 *       pack A[ic.., pc..] into mr-panels          (this thread's buffer)
 *       for jc in the cell's N by nc:  B block kc×nc lives in L2
 *         pack B[pc.., jc..] into nr-panels        (this thread's buffer)
 *         for ir in mc by mr:          A micro-panel mr×kc lives in L1
 *           for jr in nc by nr:
 *             microkernel: C[mr×nr] = alpha·A·B + beta·C
 *
 * The innermost loop walks along C's rows, so consecutive microkernels
 * touch the next 128 bytes of the same mr rows (the same pages, a stream
 * the prefetchers follow), where walking down C touched mr new rows and
 * pages per tile. The A block is as tall as the thread's rows allow: each
 * of its micro-panels is read once per B block and then reused from L1 by
 * nc/nr microkernels, so it may stream from DRAM, and B is packed (for
 * matmul: decoded) once per kc step when mc covers the thread's rows.
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
#include <sys/mman.h>
#include <unistd.h>

#include "ops_gemm.h"
#include "cpu_rows.h"
#include "quant_blocks.h"

#define KC_MIN 128
#define KC_MAX 1024
#define MC_MAX 4096
#define A_BLOCKS_BYTES (64 << 20)
#define NC_MAX 4096
#define TILE_MAX 4096           /* mr·nr of the largest register block */
#define HUGE_PAGE (2 << 20)

/* ------------------------------------------------------------ caches */

struct cpu_caches {
	int64_t l2;
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
	caches.l2 = cache_size(_SC_LEVEL2_CACHE_SIZE, 2, 1 << 20);
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
void cpu_gemm_grid(int64_t row_blocks, int64_t panels, int threads, int64_t *tm, int64_t *tn)
{
	*tn = 1;
	for (int64_t d = threads; d > 1; d--) {
		if (threads % d == 0 && panels >= 2 * d) {
			*tn = d;
			break;
		}
	}
	*tm = min64(threads / *tn, row_blocks);
}

int64_t cpu_l2_bytes(void)
{
	pthread_once(&caches_once, caches_init);
	return caches.l2;
}

/* kc: the depth of a block. The C tile is loaded and stored once per kc,
 * so the larger kc the less that costs, but the A micro-panel (mr×kc)
 * must stay in L1 and the B block (kc×nc) in L2: kc comes from L2 (a
 * square kc×kc block in half of it: 512 on a 2 MiB L2, 352 on 1 MiB). A
 * decoded B starts on a block boundary of its dtype. nc: the B block in
 * half of L2. mc: the thread's rows, in as few equal mr-multiples as will
 * do, each at most MC_MAX and all threads' A blocks within A_BLOCKS_BYTES
 * (the A block needs no cache: see the top; the limit only bounds the
 * memory when many threads each pack all of A). L3 is not used: a VM may
 * report the host's (480 MiB here), and no block depends on it now. */
static struct gemm_blocks gemm_blocking(const struct cpu_kernels *k, const struct cpu_sgemm *g, int threads)
{
	struct gemm_blocks b;
	const int64_t mr = k->mr, nr = k->nr, fsz = sizeof(float);
	int64_t mc_max, rows, n_ic;

	cpu_gemm_grid(ceil_div(g->m, mr), ceil_div(g->n, nr), threads, &b.tm, &b.tn);
	b.kc = clamp(isqrt(cpu_l2_bytes() / 2 / fsz) / 32 * 32, KC_MIN, KC_MAX);
	if (g->b_dequant) {
		const int64_t blk = cpu_block_elems(g->b_dtype);

		b.kc = b.kc < blk ? blk : b.kc / blk * blk;
	}
	if (b.kc > g->k)
		b.kc = g->k;
	mc_max = clamp(A_BLOCKS_BYTES / threads / (b.kc * fsz), mr, MC_MAX) / mr * mr;
	rows = ceil_div(g->m, b.tm);
	n_ic = ceil_div(rows, mc_max);
	b.mc = round_up(ceil_div(rows, n_ic), mr);
	b.nc = clamp(cpu_l2_bytes() / 2 / (b.kc * fsz), nr, NC_MAX) / nr * nr;
	b.nc = min64(b.nc, round_up(ceil_div(g->n, b.tn), nr));
	return b;
}

/* ----------------------------------------------------------- packing */

typedef float v4f __attribute__((vector_size(16)));

static v4f load4(const float *p)
{
	v4f v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void store4(float *p, v4f v)
{
	memcpy(p, &v, sizeof(v));
}

/* Rows [0, 4) × depths [0, 4) of a row-major A (row stride rs) into a
 * panel (depth stride mr): a 4×4 transpose in registers, written with
 * gcc's generic vectors so SSE2 and NEON both get shuffles. Element by
 * element, packing a row-major A was 3-4 % of a 4096³ GEMM. */
static void transpose4(float *d, int64_t mr, const float *s, int64_t rs)
{
	const v4f r0 = load4(s), r1 = load4(s + rs), r2 = load4(s + 2 * rs), r3 = load4(s + 3 * rs);
	const v4f t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5), t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
	const v4f t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5), t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);

	store4(d, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
	store4(d + mr, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
	store4(d + 2 * mr, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
	store4(d + 3 * mr, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
}

/* rows × kc of a matrix X (X(ii, p) at src[ii·rs + p·cs]) into one panel
 * ([p·mr + ii], mr: the panel's width): an A panel, or a B panel of
 * transposed B (ii then runs over B's columns). The caller zeroes the
 * rows past rows. */
static void pack_panel(const float *src, int64_t rs, int64_t cs, int64_t rows, int64_t kc, int64_t mr, float *dst)
{
	int64_t p = 0;

	if (cs == 1) {          /* X's rows contiguous: transpose 4×4 tiles */
		for (; p + 4 <= kc; p += 4) {
			int64_t ii = 0;

			for (; ii + 4 <= rows; ii += 4)
				transpose4(dst + p * mr + ii, mr, src + ii * rs + p, rs);
			for (; ii < rows; ii++)
				for (int64_t q = 0; q < 4; q++)
					dst[(p + q) * mr + ii] = src[ii * rs + p + q];
		}
	}
	for (; p < kc; p++) {   /* X's columns contiguous (copies), the rest */
		float *d = dst + p * mr;
		const float *s = src + p * cs;

		for (int64_t ii = 0; ii < rows; ii++)
			d[ii] = s[ii * rs];
	}
}

/* A[i0.., p0..] (mc×kc) into mr-row panels: panel r holds A(i0 + r·mr + ii, p0 + p)
 * at [p·mr + ii], rows past mc zero. */
static void pack_a(const struct cpu_sgemm *g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t mr,
		   float *dst)
{
	for (int64_t ir = 0; ir < mc; ir += mr, dst += mr * kc) {
		const int64_t rows = min64(mc - ir, mr);

		pack_panel(g->a + (i0 + ir) * g->a_rs + p0 * g->a_cs, g->a_rs, g->a_cs, rows, kc, mr, dst);
		for (int64_t p = 0; rows < mr && p < kc; p++)
			for (int64_t ii = rows; ii < mr; ii++)
				dst[p * mr + ii] = 0.0f;
	}
}

/* One nr-panel of B when B is decoded or transposed: B(p0 + p, j0 + jj)
 * at [p·nr + jj], columns past cols zero. */
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
	} else {
		pack_panel((const float *)g->b + j0 * g->b_cs + p0 * g->b_rs, g->b_cs, g->b_rs, cols, kc, nr, dst);
	}
	for (int64_t p = 0; cols < nr && p < kc; p++)
		for (int64_t jj = cols; jj < nr; jj++)
			dst[p * nr + jj] = 0.0f;
}

/* The B block [p0, p0 + kc) × [j0, j0 + nc) into nr-panels (panel jr/nr
 * at dst + jr·kc). A row-major B is read row by row, each row of the
 * block once and contiguously, and scattered over the panels: panel by
 * panel, every 128-byte piece was a separate DRAM latency (rows ldb
 * apart), about 2 % of a 4096³ GEMM. */
static void pack_b(const struct cpu_sgemm *g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr, float *dst)
{
	if (g->b_dequant || g->b_cs != 1) {
		for (int64_t jr = 0; jr < nc; jr += nr)
			pack_b_panel(g, p0, kc, j0 + jr, min64(nc - jr, nr), nr, dst + jr * kc);
		return;
	}
	for (int64_t p = 0; p < kc; p++) {
		const float *src = (const float *)g->b + (p0 + p) * g->b_rs + j0;

		for (int64_t jr = 0; jr < nc; jr += nr) {
			const int64_t cols = min64(nc - jr, nr);
			float *d = dst + jr * kc + p * nr;

			for (int64_t jj = 0; jj < cols; jj++)
				d[jj] = src[jr + jj];
			for (int64_t jj = cols; jj < nr; jj++)
				d[jj] = 0.0f;
		}
	}
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

/* The packed A block (rows [ic, ic + mc)) against the packed B block,
 * along C's rows: the A micro-panel stays in L1 while the B panels stream
 * from L2. */
static void macro_kernel(const struct gemm_run *r, const struct gemm_step *st, int64_t ic, int64_t mc)
{
	const struct cpu_sgemm *g = r->g;
	const int64_t mr = r->k->mr, nr = r->k->nr;

	for (int64_t ir = 0; ir < mc; ir += mr) {
		const float *ap = st->apack + ir * st->kc;
		const int64_t rows = min64(mc - ir, mr);
		float *crow = g->c + (ic + ir) * g->ldc + st->jc;

		for (int64_t jr = 0; jr < st->nc; jr += nr) {
			const float *bp = st->bpack + jr * st->kc;
			const int64_t cols = min64(st->nc - jr, nr);

			if (rows == mr && cols == nr)
				r->k->sgemm_ukernel(st->kc, ap, bp, crow + jr, g->ldc, g->alpha, st->beta);
			else
				edge_tile(r, st, ap, bp, crow + jr, rows, cols);
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
	const int64_t row_blocks = ceil_div(g->m, mr), panels = ceil_div(g->n, nr);
	float *bpack = r->buf + tid * r->thread_floats;
	float *apack = bpack + r->b.kc * r->b.nc;
	struct gemm_step st = { .bpack = bpack, .apack = apack };

	for (int64_t t = begin; t < end; t++) {
		const int64_t ti = t / r->b.tn, tj = t % r->b.tn;
		const int64_t m0 = row_blocks * ti / r->b.tm * mr, m1 = min64(row_blocks * (ti + 1) / r->b.tm * mr, g->m);
		const int64_t n0 = panels * tj / r->b.tn * nr, n1 = min64(panels * (tj + 1) / r->b.tn * nr, g->n);

		for (st.pc = 0; st.pc < g->k; st.pc += r->b.kc) {
			st.kc = min64(g->k - st.pc, r->b.kc);
			st.beta = st.pc == 0 ? g->beta : 1.0f;
			for (int64_t ic = m0; ic < m1; ic += r->b.mc) {
				const int64_t mc = min64(m1 - ic, r->b.mc);

				pack_a(g, ic, mc, st.pc, st.kc, mr, apack);
				for (st.jc = n0; st.jc < n1; st.jc += r->b.nc) {
					st.nc = min64(n1 - st.jc, r->b.nc);
					pack_b(g, st.pc, st.kc, st.jc, st.nc, nr, bpack);
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

/* ----------------------------------------------------- packing memory */

/* The packing buffers of one call. Large ones are mapped on huge-page
 * boundaries with transparent huge pages asked for: fresh 4 KiB pages
 * cost a fault each on first touch (2-3 % of a 4096³ GEMM here, where
 * THP is "madvise"), and the packed blocks then need few TLB entries. */
struct pack_mem {
	void *map;              /* NULL: buf came from aligned_alloc */
	size_t map_bytes;
	float *buf;
};

static float *pack_mem_alloc(struct pack_mem *pm, size_t bytes)
{
	pm->map = NULL;
	if (bytes < HUGE_PAGE) {
		pm->buf = aligned_alloc(64, (size_t)round_up((int64_t)bytes, 64));
		return pm->buf;
	}
	pm->map_bytes = (size_t)round_up((int64_t)bytes, HUGE_PAGE) + HUGE_PAGE;
	pm->map = mmap(NULL, pm->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pm->map == MAP_FAILED) {
		pm->map = NULL;
		pm->buf = NULL;
		return NULL;
	}
	pm->buf = (float *)round_up((int64_t)(uintptr_t)pm->map, HUGE_PAGE);
#ifdef MADV_HUGEPAGE
	madvise(pm->buf, pm->map_bytes - HUGE_PAGE, MADV_HUGEPAGE);     /* a hint: failure is fine */
#endif
	return pm->buf;
}

static void pack_mem_free(struct pack_mem *pm)
{
	if (pm->map)
		munmap(pm->map, pm->map_bytes);
	else
		free(pm->buf);
}

gllmk_status cpu_sgemm_run(struct cpu_state *s, const struct cpu_sgemm *g)
{
	const struct cpu_kernels *k = s->k;
	const int threads = cpu_pool_threads(s->pool);
	struct gemm_run r = { .g = g, .k = k };
	struct pack_mem pm;
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
	r.buf = pack_mem_alloc(&pm, bytes);
	if (!r.buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk: %zu bytes of GEMM packing buffers", bytes);
	cpu_pool_run(s->pool, r.b.tm * r.b.tn, 1, gemm_task, &r);
	pack_mem_free(&pm);
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
