/* gllmk_gemm and the GEMM framework (ops_gemm.h): BLIS's loop nest
 *
 *   for jc in N by nc:                 B block kc×nc lives in L3
 *     for pc in K by kc:
 *       pack B[pc.., jc..] into nr-panels          (threads over panels)
 *       for ic in M by mc:             A block mc×kc lives in L2   (threads)
 *         pack A[ic.., pc..] into mr-panels        (per thread)
 *         for jr in nc by nr:          B micro-panel kc×nr in L1  (threads)
 *           for ir in mc by mr:
 *             microkernel: C[mr×nr] = alpha·A·B + beta·C
 *
 * The block sizes come from the cache sizes the CPU reports (read once) and
 * the ISA's register block. Packing pads the last panels with zeros, so the
 * microkernel always sees whole blocks; edge tiles go through a small C
 * tile on the stack. B may be a quantized weight matrix decoded while it is
 * packed (matmul with large M): that is the only place weights are decoded.
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

struct gemm_blocks {
	int64_t kc, mc, nc;     /* block sizes (mc, nc multiples of mr, nr) */
	int64_t n_ic, n_split;  /* tasks of one (jc, pc) step: ic blocks × nr-panel ranges */
};

/* kc: a kc×nr B micro-panel fills half of L1; mc: an mc×kc A block half of
 * L2; nc: a kc×nc B block half of L3 (capped). Then the M loop is cut into
 * a multiple of the thread count, or, when M is too short for that, the
 * nr-panels are shared out instead. */
static struct gemm_blocks gemm_blocking(const struct cpu_kernels *k, const struct cpu_sgemm *g, int threads)
{
	struct gemm_blocks b;
	const int64_t mr = k->mr, nr = k->nr;
	int64_t mc_max;

	pthread_once(&caches_once, caches_init);
	b.kc = clamp(caches.l1d / 2 / (nr * (int64_t)sizeof(float)), KC_MIN, KC_MAX) / 16 * 16;
	if (g->b_dequant)       /* decoded B starts on a block boundary */
		b.kc = b.kc < QK_K ? QK_K : b.kc / QK_K * QK_K;
	if (b.kc > g->k)
		b.kc = g->k;
	mc_max = clamp(caches.l2 / 2 / (b.kc * (int64_t)sizeof(float)), mr, MC_MAX) / mr * mr;
	b.nc = clamp(caches.l3 / 2 / (b.kc * (int64_t)sizeof(float)), nr, NC_MAX) / nr * nr;
	if (b.nc > round_up(g->n, nr))
		b.nc = round_up(g->n, nr);

	if (ceil_div(g->m, mr) >= threads) {
		b.n_ic = round_up(ceil_div(g->m, mc_max), threads);
		b.mc = round_up(ceil_div(g->m, b.n_ic), mr);
		b.n_ic = ceil_div(g->m, b.mc);
		b.n_split = 1;
	} else {
		b.mc = round_up(g->m, mr);
		b.n_ic = 1;
		b.n_split = threads;
	}
	return b;
}

/* ----------------------------------------------------------- packing */

/* A[i0.., p0..] (mc×kc) into mr-row panels: panel r holds A(i0 + r·mr + ii, p0 + p)
 * at [p·mr + ii], rows past mc zero. */
static void pack_a(const struct cpu_sgemm *g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t mr,
		   float *dst)
{
	for (int64_t ir = 0; ir < mc; ir += mr, dst += mr * kc) {
		const int64_t rows = mc - ir < mr ? mc - ir : mr;

		for (int64_t ii = 0; ii < rows; ii++) {
			const float *src = g->a + (i0 + ir + ii) * g->a_rs + p0 * g->a_cs;

			if (g->a_cs == 1) {
				for (int64_t p = 0; p < kc; p++)
					dst[p * mr + ii] = src[p];
			} else {
				for (int64_t p = 0; p < kc; p++)
					dst[p * mr + ii] = src[p * g->a_cs];
			}
		}
		for (int64_t ii = rows; ii < mr; ii++)
			for (int64_t p = 0; p < kc; p++)
				dst[p * mr + ii] = 0.0f;
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
		const float *b = g->b;

		for (int64_t jj = 0; jj < cols; jj++) {
			const float *src = b + (j0 + jj) * g->b_cs + p0 * g->b_rs;

			for (int64_t p = 0; p < kc; p++)
				dst[p * nr + jj] = src[p * g->b_rs];
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
	int64_t jc, nc;         /* the current B block: columns [jc, jc + nc) */
	int64_t pc, kc;         /*                      depth   [pc, pc + kc) */
	float beta;             /* g->beta on the first depth block, then 1 */
	float *bpack;
	float *apack;           /* one mc×kc block per thread */
};

static void pack_b_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct gemm_run *r = arg;
	const int64_t nr = r->k->nr;

	(void)tid;
	for (int64_t jp = begin; jp < end; jp++) {
		const int64_t cols = r->nc - jp * nr < nr ? r->nc - jp * nr : nr;

		pack_b_panel(r->g, r->pc, r->kc, r->jc + jp * nr, cols, nr, r->bpack + jp * nr * r->kc);
	}
}

/* An edge block: the whole mr×nr through a tile, then the valid part. */
static void edge_tile(const struct gemm_run *r, const float *ap, const float *bp, float *c, int64_t rows,
		      int64_t cols)
{
	const struct cpu_sgemm *g = r->g;
	const int64_t nr = r->k->nr;
	float tile[TILE_MAX];

	r->k->sgemm_ukernel(r->kc, ap, bp, tile, nr, 1.0f, 0.0f);
	for (int64_t i = 0; i < rows; i++) {
		float *ci = c + i * g->ldc;

		if (r->beta == 0.0f) {
			for (int64_t j = 0; j < cols; j++)
				ci[j] = g->alpha * tile[i * nr + j];
		} else {
			for (int64_t j = 0; j < cols; j++)
				ci[j] = g->alpha * tile[i * nr + j] + r->beta * ci[j];
		}
	}
}

/* Task t: A block ic = t / n_split against its share of the nr-panels. */
static void macro_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct gemm_run *r = arg;
	const struct cpu_sgemm *g = r->g;
	const int64_t mr = r->k->mr, nr = r->k->nr;
	const int64_t panels = ceil_div(r->nc, nr);
	float *apack = r->apack + (int64_t)tid * r->b.mc * r->kc;

	for (int64_t t = begin; t < end; t++) {
		const int64_t ic = t / r->b.n_split * r->b.mc, split = t % r->b.n_split;
		const int64_t mc = g->m - ic < r->b.mc ? g->m - ic : r->b.mc;
		const int64_t jp0 = panels * split / r->b.n_split;
		const int64_t jp1 = panels * (split + 1) / r->b.n_split;

		if (jp0 == jp1)
			continue;
		pack_a(g, ic, mc, r->pc, r->kc, mr, apack);
		for (int64_t jp = jp0; jp < jp1; jp++) {
			const float *bp = r->bpack + jp * nr * r->kc;
			const int64_t j = r->jc + jp * nr;
			const int64_t cols = g->n - j < nr ? g->n - j : nr;

			for (int64_t ir = 0; ir < mc; ir += mr) {
				const float *ap = apack + ir * r->kc;
				float *c = g->c + (ic + ir) * g->ldc + j;
				const int64_t rows = mc - ir < mr ? mc - ir : mr;

				if (rows == mr && cols == nr)
					r->k->sgemm_ukernel(r->kc, ap, bp, c, g->ldc, g->alpha, r->beta);
				else
					edge_tile(r, ap, bp, c, rows, cols);
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

gllmk_status cpu_sgemm_run(struct cpu_state *s, const struct cpu_sgemm *g)
{
	const struct cpu_kernels *k = s->k;
	const int threads = cpu_pool_threads(s->pool);
	struct gemm_run r = { .g = g, .k = k, .b = gemm_blocking(k, g, threads) };
	const size_t bpack_elems = (size_t)(r.b.nc * r.b.kc);
	const size_t apack_elems = (size_t)(r.b.mc * r.b.kc);
	size_t bytes = (bpack_elems + apack_elems * (size_t)threads) * sizeof(float);
	float *buf;

	if (g->alpha == 0.0f) {
		scale_c(g);
		return GLLMK_OK;
	}
	buf = aligned_alloc(64, round_up((int64_t)bytes, 64));
	if (!buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk: %zu bytes of GEMM packing buffers", bytes);
	r.bpack = buf;
	r.apack = buf + bpack_elems;

	for (r.jc = 0; r.jc < g->n; r.jc += r.b.nc) {
		r.nc = g->n - r.jc < r.b.nc ? g->n - r.jc : r.b.nc;
		for (r.pc = 0; r.pc < g->k; r.pc += r.b.kc) {
			r.kc = g->k - r.pc < r.b.kc ? g->k - r.pc : r.b.kc;
			r.beta = r.pc == 0 ? g->beta : 1.0f;
			cpu_pool_run(s->pool, ceil_div(r.nc, k->nr), 4, pack_b_task, &r);
			cpu_pool_run(s->pool, r.b.n_ic * r.b.n_split, 1, macro_task, &r);
		}
	}
	free(buf);
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
