/* The f32 GEMM driver (gemm/sgemm.h): BLIS's loop nest, run
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
 * or axpys over B, which is read once). On bf16 pairs (sgemm.h, bf16_pairs)
 * the same nest runs on 32-bit words of two depths with the ISA's bf16
 * microkernel, A rounded to bf16 once per call before it starts.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gemm/sgemm_internal.h"
#include "quant_blocks.h"

#define TILE_MAX 4096           /* mr·nr of the largest register block */
#define HUGE_PAGE (2 << 20)

/* ---------------------------------------------------------- blocking */

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
static struct gemm_blocks gemm_blocking(const struct cpu_cntx *k, const struct cpu_sgemm *g, int threads)
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

/* ------------------------------------------------------------- run */

struct gemm_run {
	const struct cpu_sgemm *g;
	const struct cpu_cntx *k;
	cpu_sgemm_ukernel_fn ukernel;   /* k's sgemm_ukernel, or bf16_ukernel on bf16 pairs */
	int64_t k_elems;                /* bf16 pairs: the weights' K (g->k counts words); else 0 */
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

	r->ukernel(st->kc, ap, bp, tile, nr, 1.0f, 0.0f);
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
				r->ukernel(st->kc, ap, bp, crow + jr, g->ldc, g->alpha, st->beta);
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

				sgemm_pack_a(g, ic, mc, st.pc, st.kc, mr, apack);
				for (st.jc = n0; st.jc < n1; st.jc += r->b.nc) {
					st.nc = min64(n1 - st.jc, r->b.nc);
					if (r->k_elems)
						sgemm_pack_b_pairs(g, r->k_elems, st.pc, st.kc, st.jc, st.nc, nr, bpack);
					else
						sgemm_pack_b(g, st.pc, st.kc, st.jc, st.nc, nr, bpack);
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

/* ------------------------------------------------------ bf16 pairs */

/* A rounded to bf16, row m's K elements as words[m·words ..]: two depths a
 * word, an odd K's last high half 0 (sgemm.h, bf16_pairs). */
struct pairs_a {
	const struct cpu_sgemm *g;
	cpu_quant_row_fn round_row;
	uint32_t *words;
	int64_t row_words;
};

static void round_a_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct pairs_a *pa = arg;
	const struct cpu_sgemm *g = pa->g;

	(void)tid;
	for (int64_t m = begin; m < end; m++) {
		uint16_t *row = (uint16_t *)(pa->words + m * pa->row_words);

		pa->round_row(g->a + m * g->a_rs, row, g->k);
		if (g->k % 2)
			row[g->k] = 0;
	}
}

static gllmk_status gemm_nest(struct cpu_state *s, struct gemm_run *r)
{
	const int threads = cpu_pool_threads(s->pool);
	struct pack_mem pm;
	size_t bytes;

	r->b = gemm_blocking(r->k, r->g, threads);
	r->thread_floats = round_up(r->b.kc * r->b.nc + r->b.mc * r->b.kc, 16);
	bytes = (size_t)(r->thread_floats * threads) * sizeof(float);
	r->buf = pack_mem_alloc(&pm, bytes);
	if (!r->buf)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk: %zu bytes of GEMM packing buffers", bytes);
	cpu_pool_run(s->pool, r->b.tm * r->b.tn, 1, gemm_task, r);
	pack_mem_free(&pm);
	return GLLMK_OK;
}

/* The GEMM on bf16 pairs: A rounded once (threads over its rows), then the
 * loop nest on K/2 words with the bf16 microkernel. */
static gllmk_status gemm_bf16_pairs(struct cpu_state *s, const struct cpu_sgemm *g)
{
	struct cpu_sgemm w = *g;
	struct pairs_a pa = { .g = g, .round_row = s->k->quant_row[GLLMK_BF16], .row_words = (g->k + 1) / 2 };
	struct gemm_run r = { .g = &w, .k = s->k, .ukernel = s->k->bf16_ukernel, .k_elems = g->k };
	struct pack_mem pm;
	const size_t bytes = (size_t)(g->m * pa.row_words) * sizeof(uint32_t);
	gllmk_status st;

	pa.words = (uint32_t *)pack_mem_alloc(&pm, bytes);
	if (!pa.words)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk: %zu bytes of bf16 activations", bytes);
	cpu_pool_run(s->pool, g->m, 1 + (1 << 14) / g->k, round_a_task, &pa);
	w.a = (const float *)pa.words;  /* 32-bit words the packing moves as they are */
	w.a_rs = pa.row_words;
	w.a_cs = 1;
	w.k = pa.row_words;
	st = gemm_nest(s, &r);
	pack_mem_free(&pm);
	return st;
}

gllmk_status cpu_sgemm_run(struct cpu_state *s, const struct cpu_sgemm *g)
{
	struct gemm_run r = { .g = g, .k = s->k, .ukernel = s->k->sgemm_ukernel };

	if (g->alpha == 0.0f) {
		scale_c(g);
		return GLLMK_OK;
	}
	if (g->bf16_pairs)
		return gemm_bf16_pairs(s, g);
	if (sgemm_small_m(s, g))
		return GLLMK_OK;
	return gemm_nest(s, &r);
}
