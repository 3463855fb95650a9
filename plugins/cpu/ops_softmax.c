/* softmax over the innermost dim: y = softmax(scale·x + mask), stable.
 *
 * With causal, row i of each [R, N] matrix sees the prefix of columns
 * j <= i + (N - R); the rest are -inf, so they come out as exact zeros and
 * are never computed. A row with nothing visible (all -inf) is all zeros.
 *
 * A row of up to ROW_BUFFER entries takes three passes of the ISA's
 * kernels: softmax_max_row; softmax_exp_row writing e^(z − max) to a
 * per-thread buffer and summing it; scale_row from the buffer into y.
 * e^z is computed once and only y's final write goes to memory, with
 * streaming stores when the output is big (cpu_view.h). The passes of
 * three consecutive rows are interleaved chunk by chunk (see
 * softmax_rows_pipelined). A longer row takes two passes over x, since it
 * does not stay in the caches: softmax_sum_row finds the max and the sum
 * of e^(z − max) together (online), softmax_write_row writes
 * e^(z − max)/sum. With fewer rows than the pool has threads (one row of
 * 64M entries), rows are split into pieces: every piece's max and sum in
 * parallel, combined per row, then every piece written in parallel.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_plugin.h"
#include "cpu_view.h"

#define ROW_BUFFER 16384 /* entries: 64 KiB, two per thread (L2-sized) */
#define CHUNK 256       /* entries per step of the pipeline (1 KiB) */

struct softmax_job {
	const struct cpu_cntx *k;
	cpu_softmax_write_row_fn write;
	cpu_scale_row_fn scale_row;
	const gllmk_tensor *y, *x, *mask;
	int64_t rows, n, r_dim; /* rows; row length; R, rows per [R, N] matrix */
	float scale;
	int causal;
	int stream;             /* write is the nt twin: fence each piece */
	int64_t piece, pieces;  /* split rows: entries per piece, pieces per row */
	float *buf;             /* rows that fit: two ROW_BUFFERs per thread */
	float *max;             /* split rows: each piece's max, then each row's */
	double *sum;            /* split rows: each piece's sum, then 1/sum per row */
};

/* Row r's pointers and its count of visible entries. */
static int64_t row_view(const struct softmax_job *j, int64_t r, float **y, const float **x, const float **m)
{
	int64_t i = r % j->r_dim, seen = j->n;

	*y = cpu_row(j->y, r);
	*x = cpu_row(j->x, r);
	*m = NULL;
	if (j->mask)
		*m = (const float *)((const char *)gllmk_tensor_host(j->mask) +
				     (j->mask->ndim > 1 ? i * j->mask->stride[0] : 0));
	if (j->causal) {
		seen = i + (j->n - j->r_dim) + 1;
		seen = seen < 0 ? 0 : seen > j->n ? j->n : seen;
	}
	return seen;
}

static void zero(float *y, int64_t n)
{
	if (n > 0)
		memset(y, 0, (size_t)n * sizeof(*y));
}

/* Row r's max and Σ e^(z − max) over its seen entries, and e^(z − max)
 * itself in e[] when the row fits it (then *in_e is set). */
/* A row in flight through the pipeline of softmax_rows. */
struct sm_row {
	float *y, *e;           /* e: its e^(z − max), n entries */
	const float *x, *m;
	int64_t seen;
	float max;
	double sum;
};

static void row_begin(const struct softmax_job *j, int64_t r, float *e, struct sm_row *row)
{
	row->seen = row_view(j, r, &row->y, &row->x, &row->m);
	row->e = e;
	row->max = -INFINITY;
	row->sum = 0.0;
}

/* Entries of the row's chunk k (0 past its visible end). */
static int64_t chunk_len(const struct sm_row *row, int64_t k)
{
	int64_t left = row->seen - k * CHUNK;

	return left <= 0 ? 0 : left < CHUNK ? left : CHUNK;
}

/* Rows that fit the buffer, software-pipelined over three rows so that
 * every step mixes reading, arithmetic and writing: for each chunk of
 * CHUNK entries, the next row's max (reading x from memory), this row's
 * e^(z − max) into its buffer and its sum (arithmetic in L1), and the
 * previous row's y = e/sum from its buffer (streaming out). Doing the
 * three passes one after the other instead leaves DRAM idle while the
 * exponentials run and makes the writes a burst the stores stall on. */
static void softmax_rows_pipelined(const struct softmax_job *j, int64_t begin, int64_t end, float *e0)
{
	float *e[2] = { e0, e0 + j->n };
	struct sm_row prev = { .seen = 0 }, cur, next = { .seen = 0 };

	row_begin(j, begin, e[0], &cur);
	if (cur.seen)
		cur.max = j->k->softmax_max_row(cur.x, cur.m, j->scale, cur.seen);
	for (int64_t r = begin; r < end; r++) {
		int64_t chunks = (j->n + CHUNK - 1) / CHUNK;
		float inv = (float)(1.0 / prev.sum); /* used only if prev.max is finite: sum >= 1 */

		if (r + 1 < end)
			row_begin(j, r + 1, e[(r + 1 - begin) & 1], &next);
		for (int64_t k = 0; k < chunks; k++) {
			int64_t at = k * CHUNK, len;

			if ((len = chunk_len(&next, k))) {
				float mx = j->k->softmax_max_row(next.x + at, next.m ? next.m + at : NULL, j->scale,
								 len);

				next.max = mx > next.max ? mx : next.max;
			}
			if ((len = chunk_len(&cur, k)) && cur.max != -INFINITY)
				cur.sum += j->k->softmax_exp_row(cur.e + at, cur.x + at, cur.m ? cur.m + at : NULL,
								 j->scale, cur.max, len);
			if ((len = chunk_len(&prev, k)) && prev.max != -INFINITY)
				j->scale_row(prev.y + at, prev.e + at, inv, len);
		}
		/* cur's invisible entries, or all of it when nothing is visible */
		int64_t live = cur.max == -INFINITY ? 0 : cur.seen;

		zero(cur.y + live, j->n - live);
		prev = cur;
		cur = next;
		next.seen = 0;
	}
	if (prev.max != -INFINITY && prev.seen)
		j->scale_row(prev.y, prev.e, (float)(1.0 / prev.sum), prev.seen);
}

/* Longer rows: two passes over x, which does not stay in the caches. */
static void softmax_rows_online(const struct softmax_job *j, int64_t begin, int64_t end)
{
	for (int64_t r = begin; r < end; r++) {
		float *y, max = -INFINITY;
		const float *x, *m;
		int64_t seen = row_view(j, r, &y, &x, &m);
		double sum = seen ? j->k->softmax_sum_row(x, m, j->scale, seen, &max) : 0.0;

		if (max == -INFINITY) {
			zero(y, j->n);  /* nothing visible: all zeros */
			continue;
		}
		j->write(y, x, m, j->scale, max, (float)(1.0 / sum), seen);
		zero(y + seen, j->n - seen);
	}
}

static void softmax_rows(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct softmax_job *j = arg;

	if (j->buf)
		softmax_rows_pipelined(j, begin, end, j->buf + 2 * j->n * tid);
	else
		softmax_rows_online(j, begin, end);
	cpu_stream_fence(j->stream);
}

/* Piece `it` of the split rows: its row's pointers, the piece's row, first
 * entry and length, and the count of its visible entries (0 up to len). */
struct piece {
	float *y;
	const float *x, *m;
	int64_t row, off, len, vis;
};

static struct piece piece_view(const struct softmax_job *j, int64_t it)
{
	struct piece p = { .row = it / j->pieces, .off = it % j->pieces * j->piece };
	int64_t seen = row_view(j, p.row, &p.y, &p.x, &p.m);

	p.len = j->n - p.off < j->piece ? j->n - p.off : j->piece;
	p.vis = seen - p.off < 0 ? 0 : seen - p.off < p.len ? seen - p.off : p.len;
	p.y += p.off;
	p.x += p.off;
	p.m = p.m ? p.m + p.off : NULL;
	return p;
}

static void piece_sums(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct softmax_job *j = arg;

	(void)tid;
	for (int64_t it = begin; it < end; it++) {
		struct piece p = piece_view(j, it);

		j->max[it] = -INFINITY;
		j->sum[it] = p.vis ? j->k->softmax_sum_row(p.x, p.m, j->scale, p.vis, &j->max[it]) : 0.0;
	}
}

/* Each row's max over its pieces, and 1/Σ sum·e^(piece max − max) in
 * its first piece's slots. */
static void combine_pieces(void *arg)
{
	const struct softmax_job *j = arg;

	for (int64_t r = 0; r < j->rows; r++) {
		float *pmax = j->max + r * j->pieces, max = -INFINITY;
		double *psum = j->sum + r * j->pieces, sum = 0.0;

		for (int64_t p = 0; p < j->pieces; p++)
			max = pmax[p] > max ? pmax[p] : max;
		for (int64_t p = 0; p < j->pieces && max != -INFINITY; p++)
			sum += pmax[p] == -INFINITY ? 0.0 : psum[p] * exp((double)pmax[p] - (double)max);
		pmax[0] = max;
		psum[0] = max == -INFINITY ? 0.0 : 1.0 / sum;
	}
}

static void piece_write(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct softmax_job *j = arg;

	(void)tid;
	for (int64_t it = begin; it < end; it++) {
		struct piece p = piece_view(j, it);
		float max = j->max[p.row * j->pieces];

		if (max == -INFINITY)
			p.vis = 0;
		if (p.vis)
			j->write(p.y, p.x, p.m, j->scale, max, (float)j->sum[p.row * j->pieces], p.vis);
		zero(p.y + p.vis, p.len - p.vis);
	}
	cpu_stream_fence(j->stream);
}

static gllmk_status softmax_split(const struct cpu_state *s, struct softmax_job *j)
{
	int64_t items = j->rows * j->pieces;

	if (cpu_run_split(s->pool, items, piece_sums, combine_pieces, piece_write, j, &j->max, &j->sum))
		return s->host->set_error(GLLMK_E_NO_MEMORY, "%s softmax: no memory for %lld pieces", s->k->isa,
					  (long long)items);
	return GLLMK_OK;
}

gllmk_status cpu_softmax(void *st, gllmk_t y, gllmk_t x, gllmk_t mask, const gllmk_softmax_params *p)
{
	const struct cpu_state *s = st;
	struct softmax_job j = {
		.k = s->k,
		.y = y,
		.x = x,
		.mask = mask,
		.n = cpu_row_len(x),
		.r_dim = x->ndim > 1 ? x->shape[x->ndim - 2] : 1,
		.scale = p ? p->scale : 1.0f,
		.causal = p ? p->causal : 0,
	};
	j.rows = cpu_rows(x);
	j.stream = cpu_stream_output(y);
	j.write = CPU_WRITER(s->k, j.stream, softmax_write_row);
	j.scale_row = CPU_WRITER(s->k, j.stream, scale_row);

	int64_t grain = cpu_plan_pieces(j.rows, j.n, s->n_threads, &j.piece, &j.pieces);

	if (j.pieces > 1)
		return softmax_split(s, &j);
	if (j.n <= ROW_BUFFER) {
		j.buf = malloc((size_t)s->n_threads * 2 * (size_t)j.n * sizeof(float));
		if (!j.buf)
			return s->host->set_error(GLLMK_E_NO_MEMORY, "%s softmax: no memory for rows of %lld",
						  s->k->isa, (long long)j.n);
	}
	cpu_pool_run(s->pool, j.rows, grain, softmax_rows, &j);
	free(j.buf);
	return GLLMK_OK;
}
