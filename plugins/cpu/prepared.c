/* gllmk_weights_prepare on the CPU plugins, and what reads the prepared
 * layout (prepared.h): the q4_0x8 copy, its decoding back to plain q4_0
 * rows (get_rows, dequantize and the GEMMs' packing call it), the portable
 * group kernel, and matmul at small M on the ISA's group kernel.
 *
 * Why a layout of its own: at M = 1 the plain q4_0 dot spends ~9 vector
 * uops a block on one row (the activation's − 8·Σ x, the nibbles, a
 * horizontal sum per row), and on Zen 3 that, not DRAM, bounded a Q4_0
 * decode (0.87x llama.cpp, which repacks Q4_0 at load). A group kernel
 * shares each activation load, scale conversion and the Σ x term among 8
 * rows, and its sums land one row per lane with no horizontal sum:
 * ~4 uops a row-block (SPEC/CPU.md, "Prepared weights").
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_view.h"
#include "fp16.h"
#include "prepared.h"
#include "quant_blocks.h"

static const char *const dtype_names[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, ...) [id] = #name,
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

/* ------------------------------------------------------------ the layout */

static const struct cpu_q4_0x8 *group_unit(const void *w, int64_t row_bytes, int64_t r, int64_t b)
{
	return (const struct cpu_q4_0x8 *)((const char *)w + r / CPU_Q4_0X8_ROWS * CPU_Q4_0X8_ROWS * row_bytes) + b;
}

void cpu_q4_0x8_unpack(const void *w, int64_t row_bytes, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
		       void *dst)
{
	const int64_t b0 = k0 / QK4_0, nb = kc / QK4_0;
	struct block_q4_0 *out = dst;

	for (int64_t i = 0; i < rows; i++) {
		const int64_t r = r0 + i, lane = r % CPU_Q4_0X8_ROWS;
		const struct cpu_q4_0x8 *u = group_unit(w, row_bytes, r, b0);

		for (int64_t b = 0; b < nb; b++, out++) {
			out->d = u[b].d[lane];
			for (int c = 0; c < 4; c++)
				memcpy(out->qs + 4 * c, u[b].qs[c][lane], 4);
		}
	}
}

/* Rows [8g, 8g + 8) of the plain q4_0 tensor at src into group g of dst. */
static void pack_group(const struct block_q4_0 *src, int64_t nb, struct cpu_q4_0x8 *dst)
{
	for (int64_t b = 0; b < nb; b++)
		for (int r = 0; r < CPU_Q4_0X8_ROWS; r++) {
			const struct block_q4_0 *blk = &src[r * nb + b];

			dst[b].d[r] = blk->d;
			for (int c = 0; c < 4; c++)
				memcpy(dst[b].qs[c][r], blk->qs + 4 * c, 4);
		}
}

struct prepare_job {
	const struct block_q4_0 *src;
	struct cpu_q4_0x8 *dst;
	int64_t nb; /* blocks per row */
};

static void prepare_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct prepare_job *j = arg;

	(void)tid;
	for (int64_t g = begin; g < end; g++)
		pack_group(j->src + g * CPU_Q4_0X8_ROWS * j->nb, j->nb, j->dst + g * j->nb);
}

/* Groups a thread copies at a time: ~2.4 MB of a 1B model's matrices, so
 * that each thread's first writes fault in whole huge pages of its own. An
 * 8B Q4_0 model's 225 matrices: 0.63-0.65 s on 2 threads, 1.0 s on one,
 * the upload of the same bytes 0.7-1.7 s (Zen 3 VM, memory already
 * touched once; the first run of a process that needs fresh memory pays
 * the hypervisor's page faults: 4-21 s, upload or copy alike). */
#define PREPARE_GRAIN 256

gllmk_status cpu_weights_prepare(void *st, gllmk_t w, void **impl, uint64_t *size, uint32_t *layout)
{
	struct cpu_state *s = st;
	const int64_t n = w->shape[w->ndim - 2], rows = cpu_rows(w);
	const uint64_t bytes = (uint64_t)(rows * cpu_row_bytes(w->dtype, cpu_row_len(w)));
	struct prepare_job j = { .src = gllmk_tensor_host(w), .nb = cpu_row_len(w) / QK4_0 };
	gllmk_status st_alloc;

	if (!s->k->dot_q4_0x8)
		return s->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_weights_prepare: cpu-%s has no prepared layout "
					  "(its dots read every dtype in the file's layout): keep w", s->k->isa);
	if (w->dtype != GLLMK_Q4_0)
		return s->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_weights_prepare: cpu-%s prepares q4_0 weights "
					  "only (w is %s): keep w", s->k->isa, dtype_names[w->dtype]);
	if (n % CPU_Q4_0X8_ROWS)
		return s->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_weights_prepare: cpu-%s prepares q4_0 matrices "
					  "of rows in groups of %d (w.shape[%d] = %lld): keep w", s->k->isa,
					  CPU_Q4_0X8_ROWS, w->ndim - 2, (long long)n);
	st_alloc = cpu_buffer_alloc(st, bytes, impl);
	if (st_alloc)
		return st_alloc;
	j.dst = *impl;
	cpu_pool_run(s->pool, rows / CPU_Q4_0X8_ROWS, PREPARE_GRAIN, prepare_task, &j);
	*size = bytes;
	*layout = CPU_LAYOUT_Q4_0X8;
	return GLLMK_OK;
}

/* ------------------------------------------------------- the group kernel */

void cpu_ref_dot_q4_0x8(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out)
{
	const struct cpu_q4_0x8 *u = w;
	const int64_t nb = n / QK4_0;

	for (int t = 0; t < xrows; t++) {
		const struct block_q8_0 *x = (const struct block_q8_0 *)xq + t * nb;
		float acc[CPU_Q4_0X8_ROWS] = { 0 };

		for (int64_t b = 0; b < nb; b++) {
			const float dx = f16_to_f32(x[b].d);

			for (int r = 0; r < CPU_Q4_0X8_ROWS; r++) {
				int32_t sum = -8 * xsum[t * nb + b];

				for (int c = 0; c < 4; c++)
					for (int e = 0; e < 4; e++) {
						const uint8_t q = u[b].qs[c][r][e];

						sum += (q & 0x0f) * x[b].qs[4 * c + e] + (q >> 4) * x[b].qs[16 + 4 * c + e];
					}
				acc[r] += f16_to_f32(u[b].d[r]) * dx * (float)sum;
			}
		}
		memcpy(out + t * CPU_Q4_0X8_ROWS, acc, sizeof(acc));
	}
}

/* ------------------------------------------------------ matmul, small M */

struct prepared_job {
	const struct cpu_cntx *k;
	const gllmk_tensor *y;
	const char *w;
	int64_t row_bytes, kdim, m;
	const float *bias;
	const char *xq;         /* m rows of kdim/32 q8_0 blocks */
	const int32_t *xsum;    /* m rows of kdim/32 block sums */
};

/* Each group of 8 weight rows against the activation rows, up to
 * CPU_Q4_0X8_X_ROWS a kernel call (the group's nibbles decoded once for
 * them), while the group stays in L1. */
static void prepared_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct prepared_job *j = arg;
	const int64_t nb = j->kdim / QK8_0;
	float out[CPU_Q4_0X8_X_ROWS * CPU_Q4_0X8_ROWS];

	(void)tid;
	for (int64_t g = begin; g < end; g++) {
		const char *wg = j->w + g * CPU_Q4_0X8_ROWS * j->row_bytes;

		for (int64_t m = 0; m < j->m; m += CPU_Q4_0X8_X_ROWS) {
			const int xrows = (int)(j->m - m < CPU_Q4_0X8_X_ROWS ? j->m - m : CPU_Q4_0X8_X_ROWS);

			j->k->dot_q4_0x8(j->kdim, wg, j->xq + m * nb * (int64_t)sizeof(struct block_q8_0),
					 j->xsum + m * nb, xrows, out);
			for (int t = 0; t < xrows; t++) {
				float *y = (float *)cpu_row(j->y, m + t) + g * CPU_Q4_0X8_ROWS;

				for (int r = 0; r < CPU_Q4_0X8_ROWS; r++)
					y[r] = out[t * CPU_Q4_0X8_ROWS + r] +
					       (j->bias ? j->bias[g * CPU_Q4_0X8_ROWS + r] : 0.0f);
			}
		}
	}
}

/* Row m of x as q8_0, and the Σ of each block's quants. */
static void encode_row(const struct cpu_cntx *k, const float *x, int64_t kdim, struct block_q8_0 *xq, int32_t *xsum)
{
	k->quant_row[GLLMK_Q8_0](x, xq, kdim);
	for (int64_t b = 0; b < kdim / QK8_0; b++) {
		int32_t sum = 0;

		for (int e = 0; e < QK8_0; e++)
			sum += xq[b].qs[e];
		xsum[b] = sum;
	}
}

gllmk_status cpu_matmul_prepared(struct cpu_state *s, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	struct prepared_job j = {
		.k = s->k,
		.y = y,
		.w = gllmk_tensor_host(w),
		.row_bytes = w->stride[0],
		.kdim = cpu_row_len(x),
		.m = cpu_rows(x),
		.bias = bias ? gllmk_tensor_host(bias) : NULL,
	};
	const int64_t nb = j.kdim / QK8_0, groups = cpu_rows(w) / CPU_Q4_0X8_ROWS;
	struct block_q8_0 *xq = malloc(sizeof(*xq) * (size_t)(j.m * nb));
	int32_t *xsum = malloc(sizeof(*xsum) * (size_t)(j.m * nb));

	if (!xq || !xsum) {
		free(xq);
		free(xsum);
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul: %lld encoded activation rows",
					  (long long)j.m);
	}
	for (int64_t m = 0; m < j.m; m++)
		encode_row(s->k, cpu_row(x, m), j.kdim, xq + m * nb, xsum + m * nb);
	j.xq = (const char *)xq;
	j.xsum = xsum;
	if (j.m == 1)
		cpu_pool_run_streaming(s->pool, groups, 1, prepared_task, &j);
	else
		cpu_pool_run(s->pool, groups, 1, prepared_task, &j);
	free(xq);
	free(xsum);
	return GLLMK_OK;
}

/* ---------------------------------------------- M = 1 products, one pass */

struct parts_job {
	const struct cpu_cntx *k;
	const struct cpu_matmul_part *part;
	int64_t kdim, groups;
	const struct block_q8_0 *xq; /* part p's activation: xq + of[p]·nb */
	const int32_t *xsum;         /* and its sums: xsum + of[p]·nb */
	const int64_t *of;
};

/* Items [begin, end) of the parts' groups laid end to end. */
static void parts_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct parts_job *j = arg;
	const int64_t nb = j->kdim / QK8_0;

	(void)tid;
	for (int64_t i = begin; i < end; i++) {
		const struct cpu_matmul_part *p = &j->part[i / j->groups];
		const int64_t g = i % j->groups, x = j->of[i / j->groups];
		const char *w = (const char *)gllmk_tensor_host(&p->w) + g * CPU_Q4_0X8_ROWS * p->w.stride[0];
		const float *bias = p->bias ? (const float *)gllmk_tensor_host(p->bias) : NULL;
		float *y = (float *)gllmk_tensor_host(&p->y) + g * CPU_Q4_0X8_ROWS;

		j->k->dot_q4_0x8(j->kdim, w, j->xq + x * nb, j->xsum + x * nb, 1, y);
		for (int r = 0; bias && r < CPU_Q4_0X8_ROWS; r++)
			y[r] += bias[g * CPU_Q4_0X8_ROWS + r];
	}
}

gllmk_status cpu_matmul_parts_prepared(struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count)
{
	const int64_t kdim = cpu_row_len(&part[0].x), nb = kdim / QK8_0;
	struct parts_job j = { .k = s->k, .part = part, .kdim = kdim, .groups = cpu_rows(&part[0].w) / CPU_Q4_0X8_ROWS };
	struct block_q8_0 *xq = malloc(sizeof(*xq) * (size_t)(count * nb));
	int32_t *xsum = malloc(sizeof(*xsum) * (size_t)(count * nb));
	int64_t *of = malloc(sizeof(*of) * (size_t)count);

	if (!xq || !xsum || !of) {
		free(xq);
		free(xsum);
		free(of);
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul_id: no memory for %lld encoded rows",
					  (long long)count);
	}
	cpu_parts_x_rows(part, count, of);
	for (int64_t p = 0; p < count; p++)
		if (p == 0 || of[p] != of[p - 1]) /* each distinct row once */
			encode_row(s->k, gllmk_tensor_host(&part[p].x), kdim, xq + of[p] * nb, xsum + of[p] * nb);
	j.xq = xq;
	j.xsum = xsum;
	j.of = of;
	cpu_pool_run(s->pool, count * j.groups, 1, parts_task, &j);
	free(xq);
	free(xsum);
	free(of);
	return GLLMK_OK;
}

