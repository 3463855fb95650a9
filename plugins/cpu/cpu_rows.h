/* Walking a validated view row by row (SPEC/OPERATORS.md, "Rows"). */
#ifndef GLLMK_CPU_ROWS_H
#define GLLMK_CPU_ROWS_H

#include "gllmk_plugin.h"

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

#endif
