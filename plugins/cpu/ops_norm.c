/* rms_norm and layer_norm: the ISA's row kernel on every row, rows spread
 * over the pool when the tensor is big enough to pay for it, streaming
 * stores when the output is big (cpu_view.h).
 *
 * rms_norm with fewer rows than the pool has threads (one row of 64M
 * elements) splits each row into pieces: the pieces' Σx² (dot_f32) in
 * parallel, then each piece scaled by its row's 1/rms (through mul_row for
 * the weight, a cache-sized block at a time, then scale_row). layer_norm
 * keeps one thread per row.
 */
#include <math.h>

#include "cpu_plugin.h"
#include "cpu_view.h"

#define WEIGHT_BLOCK 4096 /* elements of x·w held in L1 before scaling */

struct norm_job {
	const struct cpu_cntx *k;
	const gllmk_tensor *y, *x;
	const float *w, *b;     /* NULL: none */
	int64_t rows, n;
	float eps;
	int layer;              /* layer_norm rather than rms_norm */
	int stream;             /* nt kernels: fence each piece */
	int64_t piece, pieces;  /* split rows: elements per piece, pieces per row */
	double *sum_sq;         /* split rows: Σx² of each piece */
	float *rms_inv;         /* split rows: 1/rms of each row (rows <= pieces) */
};

static void norm_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct norm_job *j = arg;
	cpu_rms_norm_row_fn rms = CPU_WRITER(j->k, j->stream, rms_norm_row);
	cpu_layer_norm_row_fn layer = CPU_WRITER(j->k, j->stream, layer_norm_row);

	(void)tid;
	for (int64_t r = begin; r < end; r++) {
		float *y = cpu_row(j->y, r);
		const float *x = cpu_row(j->x, r);

		if (j->layer)
			layer(y, x, j->w, j->b, j->n, j->eps);
		else
			rms(y, x, j->w, j->n, j->eps);
	}
	cpu_stream_fence(j->stream);
}

/* Piece `it` of the split rows: its row, first element and length. */
static int64_t piece_of(const struct norm_job *j, int64_t it, int64_t *row, int64_t *off)
{
	*row = it / j->pieces;
	*off = it % j->pieces * j->piece;
	return j->n - *off < j->piece ? j->n - *off : j->piece;
}

static void piece_sums(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct norm_job *j = arg;

	(void)tid;
	for (int64_t it = begin; it < end; it++) {
		int64_t r, off, len = piece_of(j, it, &r, &off);
		const float *x = (const float *)cpu_row(j->x, r) + off;

		j->sum_sq[it] = j->k->dot_f32(len, x, x);
	}
}

static void piece_scale(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct norm_job *j = arg;
	cpu_scale_row_fn scale = CPU_WRITER(j->k, j->stream, scale_row);
	float xw[WEIGHT_BLOCK];

	(void)tid;
	for (int64_t it = begin; it < end; it++) {
		int64_t r, off, len = piece_of(j, it, &r, &off);
		float *y = (float *)cpu_row(j->y, r) + off;
		const float *x = (const float *)cpu_row(j->x, r) + off;

		if (!j->w) {
			scale(y, x, j->rms_inv[r], len);
			continue;
		}
		for (int64_t i = 0; i < len; i += WEIGHT_BLOCK) {
			int64_t m = len - i < WEIGHT_BLOCK ? len - i : WEIGHT_BLOCK;

			j->k->mul_row(xw, x + i, j->w + off + i, m);
			scale(y + i, xw, j->rms_inv[r], m);
		}
	}
	cpu_stream_fence(j->stream);
}

/* Each row's 1/rms from its pieces' Σx². */
static void combine_rows(void *arg)
{
	struct norm_job *j = arg;

	for (int64_t r = 0; r < j->rows; r++) {
		double sum = 0.0;

		for (int64_t p = 0; p < j->pieces; p++)
			sum += j->sum_sq[r * j->pieces + p];
		j->rms_inv[r] = (float)(1.0 / sqrt(sum / (double)j->n + j->eps));
	}
}

static gllmk_status rms_norm_split(const struct cpu_state *s, struct norm_job *j)
{
	int64_t items = j->rows * j->pieces;

	if (cpu_run_split(s->pool, items, piece_sums, combine_rows, piece_scale, j, &j->rms_inv, &j->sum_sq))
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s rms_norm: no memory for %lld pieces", s->k->isa,
					  (long long)items);
	return GLLMK_OK;
}

static gllmk_status norm_run(const struct cpu_state *s, struct norm_job *j)
{
	j->rows = cpu_rows(j->x);
	j->k = s->k;
	j->n = cpu_row_len(j->x);
	j->stream = cpu_stream_output(j->y);

	int64_t grain = cpu_plan_pieces(j->rows, j->n, s->n_threads, &j->piece, &j->pieces);

	if (j->pieces > 1 && !j->layer)
		return rms_norm_split(s, j);
	cpu_pool_run(s->pool, j->rows, j->pieces > 1 ? 1 : grain, norm_rows, j);
	return GLLMK_OK;
}

static const float *host_or_null(gllmk_t t)
{
	return t ? gllmk_tensor_host(t) : NULL;
}

gllmk_status cpu_rms_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, float eps)
{
	struct norm_job j = { .y = y, .x = x, .w = host_or_null(w), .eps = eps };

	return norm_run(st, &j);
}

gllmk_status cpu_layer_norm(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t b, float eps)
{
	struct norm_job j = { .y = y, .x = x, .w = host_or_null(w), .b = host_or_null(b), .eps = eps,
			      .layer = 1 };

	return norm_run(st, &j);
}
