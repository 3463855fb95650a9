/* Walking a validated view row by row (SPEC/OPERATORS.md, "Rows"). */
#ifndef GLLMK_CPU_VIEW_H
#define GLLMK_CPU_VIEW_H

#include <stdlib.h>

#include "gllmk_plugin.h"
#include "threadpool.h"

/* Rows of t: the product of every dim but the innermost. */
static inline int64_t cpu_rows(const gllmk_tensor *t)
{
	int64_t n = 1;

	for (int d = 0; d < t->ndim - 1; d++)
		n *= t->shape[d];
	return n;
}

/* Elements in a row (the innermost dim). */
static inline int64_t cpu_row_len(const gllmk_tensor *t)
{
	return t->shape[t->ndim - 1];
}

/* Host address of row r of t. */
static inline void *cpu_row(const gllmk_tensor *t, int64_t r)
{
	char *p = gllmk_tensor_host(t);

	for (int d = t->ndim - 2; d >= 0; d--) {
		p += (r % t->shape[d]) * t->stride[d];
		r /= t->shape[d];
	}
	return p;
}

/* Threading of the row ops: below CPU_PAR_MIN_ELEMS elements in all, a
 * call runs inline (waking the pool costs more than it gains); above, a
 * thread's piece of work is at least CPU_PIECE_MIN_ELEMS elements. */
#define CPU_PAR_MIN_ELEMS (64 * 1024)
#define CPU_PIECE_MIN_ELEMS (16 * 1024)

/* The cpu_pool_run grain for `items` work items of `per_item` elements. */
static inline int64_t cpu_row_grain(int64_t items, int64_t per_item)
{
	if (items * per_item <= CPU_PAR_MIN_ELEMS)
		return items > 1 ? items : 1;
	return CPU_PIECE_MIN_ELEMS / per_item > 1 ? CPU_PIECE_MIN_ELEMS / per_item : 1;
}

/* Splitting rows: items of `piece` elements, `pieces` of them per row, so
 * that each of n_threads threads gets a few items even when there are few
 * long rows (one row of 64M elements included). Pieces start on a cache
 * line (16 elements) and are at least CPU_PIECE_MIN_ELEMS long; with
 * enough rows, a row is one piece. Returns the cpu_pool_run grain. */
#define CPU_PIECES_PER_THREAD 4
#define CPU_PIECE_ALIGN 16

static inline int64_t cpu_plan_pieces(int64_t rows, int64_t n, int n_threads, int64_t *piece, int64_t *pieces)
{
	int64_t want = (int64_t)n_threads * CPU_PIECES_PER_THREAD;

	*piece = n;
	*pieces = 1;
	if (n_threads < 2 || rows * n <= CPU_PAR_MIN_ELEMS)
		return rows > 1 ? rows : 1; /* one chunk: runs inline */
	if (rows >= want)
		return cpu_row_grain(rows, n);

	int64_t per_row = (want + rows - 1) / rows;
	int64_t len = (n + per_row - 1) / per_row;

	len = (len + CPU_PIECE_ALIGN - 1) / CPU_PIECE_ALIGN * CPU_PIECE_ALIGN;
	if (len < CPU_PIECE_MIN_ELEMS)
		len = CPU_PIECE_MIN_ELEMS;
	if (len < n) {
		*piece = len;
		*pieces = (n + len - 1) / len;
	}
	return 1;
}

/* Split rows reduced and then written (one row of 64M elements): first()
 * on every piece, combine(arg) on one thread, then second() on every piece.
 * Each piece has a float and a double slot (*f, *d) to pass its result on.
 * Returns 0, or -1 without running anything when they cannot be allocated. */
static inline int cpu_run_split(struct cpu_pool *pool, int64_t items, cpu_task_fn first, void (*combine)(void *),
				cpu_task_fn second, void *arg, float **f, double **d)
{
	int ok;

	*f = malloc((size_t)items * sizeof(**f));
	*d = malloc((size_t)items * sizeof(**d));
	ok = *f && *d;
	if (ok) {
		cpu_pool_run(pool, items, 1, first, arg);
		combine(arg);
		cpu_pool_run(pool, items, 1, second, arg);
	}
	free(*f);
	free(*d);
	*f = NULL;
	*d = NULL;
	return ok ? 0 : -1;
}

/* Streaming stores. A call that writes at least CPU_STREAM_MIN_BYTES uses
 * the kernels' nt twins (cpu_cntx.h): its output cannot stay in the
 * caches for the next op anyway (8 MiB is twice the 2 × 2 MiB of L2 of two
 * cores, and more than two cores' share of a server LLC; the LLC the OS
 * reports is no guide in a VM), so writing it around the caches saves the
 * read for ownership of every line (a third of the traffic of a unary op)
 * and keeps the inputs cached. Smaller outputs keep ordinary stores: the
 * next op finds them in L2. */
#define CPU_STREAM_MIN_BYTES (8 << 20)

static inline int cpu_stream_output(const gllmk_tensor *y)
{
	return cpu_rows(y) * cpu_row_len(y) * 4 >= CPU_STREAM_MIN_BYTES;
}

/* The kernel of `slot` for a call that streams or not. */
#define CPU_WRITER(k, stream, slot) ((stream) && (k)->nt.slot ? (k)->nt.slot : (k)->slot)

/* Makes the piece's streaming stores globally visible before the pool
 * hears that the piece is done (x86 non-temporal stores are weakly ordered;
 * the pool's atomic add would also drain them, being a locked instruction,
 * but the fence says so). AArch64's nt kernels store normally. */
static inline void cpu_stream_fence(int stream)
{
#if defined(__x86_64__) || defined(__i386__)
	if (stream)
		__builtin_ia32_sfence();
#else
	(void)stream;
#endif
}

/* Elements between rows of t when its rows are evenly spaced (every outer
 * dim collapses into one), else -1. A 1-row tensor gives 0. */
static inline int64_t cpu_uniform_row_stride(const gllmk_tensor *t, int64_t elem_bytes)
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

#endif
