/* gllmk_matmul_id (expert matmul) and gllmk_matmul_batched, on the matmul
 * machinery of ops_matmul.c: both are sequences of ordinary matmuls on
 * 2-D slices, so every weight dtype and every path of cpu_matmul (integer
 * vec_dots at small M, the f32 or int8 GEMM at large M) serves them as it
 * is.
 *
 * matmul_id groups the work by expert so that each expert's weights stream
 * once per call however many tokens chose it: the slots (t, j) are counted
 * per expert and ordered by expert (a counting sort), then per expert that
 * anyone chose, its rows of x are gathered into one [c, K] matrix, one
 * cpu_matmul runs against the expert's [N, K] slice, and the [c, N] result
 * is scattered into y (or, with slot weights, added in, weighted). A group
 * of one slot (decoding: every expert has one token) reads x in place and,
 * without slot weights, writes y in place: no copy at all.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_plugin.h"
#include "cpu_view.h"

/* The 2-D matrix t[i] of a 3-D tensor t. */
static gllmk_tensor slice3(const gllmk_tensor *t, int64_t i)
{
	gllmk_tensor s = {
		.buf = t->buf,
		.offset = t->offset + (uint64_t)(i * t->stride[0]),
		.dtype = t->dtype,
		.ndim = 2,
		.shape = { t->shape[1], t->shape[2] },
		.stride = { t->stride[1], t->stride[2] },
	};
	return s;
}

/* A 1 × n (or, rows > 1, rows × n contiguous) f32 matrix at host address p
 * inside buf. */
static gllmk_tensor f32_matrix(gllmk_buffer *buf, const void *p, int64_t rows, int64_t n)
{
	gllmk_tensor s = {
		.buf = buf,
		.offset = (uint64_t)((const char *)p - (const char *)buf->impl),
		.dtype = GLLMK_F32,
		.ndim = 2,
		.shape = { rows, n },
		.stride = { n * (int64_t)sizeof(float), sizeof(float) },
	};
	return s;
}

/* ---------------------------------------------------------- matmul_id */

struct expert_groups {
	int64_t T, k, E;
	int32_t *slot;  /* slots t·k + j, ordered by expert */
	int64_t *start; /* expert e's slots are slot[start[e] .. start[e+1]-1] */
	int64_t most;   /* the largest group */
};

static const int32_t *ids_row(const gllmk_tensor *ids, int64_t t)
{
	return cpu_row(ids, t);
}

/* Checks every id, then counting-sorts the slots by expert. */
static gllmk_status group_by_expert(struct cpu_state *s, const gllmk_tensor *ids, struct expert_groups *g)
{
	int64_t *next;

	for (int64_t t = 0; t < g->T; t++)
		for (int64_t j = 0; j < g->k; j++) {
			const int32_t e = ids_row(ids, t)[j];

			if (e < 0 || e >= g->E)
				return s->host->set_error(GLLMK_E_BOUNDS,
							  "gllmk_matmul_id: ids[%lld, %lld] = %d (token %lld, slot %lld), "
							  "w has %lld experts", (long long)t, (long long)j, e,
							  (long long)t, (long long)j, (long long)g->E);
		}
	g->slot = malloc(sizeof(*g->slot) * (size_t)(g->T * g->k));
	g->start = calloc((size_t)(2 * (g->E + 1)), sizeof(*g->start));
	if (!g->slot || !g->start)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul_id: no memory to group %lld slots",
					  (long long)(g->T * g->k));
	next = g->start + g->E + 1;
	for (int64_t t = 0; t < g->T; t++)
		for (int64_t j = 0; j < g->k; j++)
			g->start[ids_row(ids, t)[j] + 1]++;
	g->most = 0;
	for (int64_t e = 0; e < g->E; e++) {
		g->most = g->start[e + 1] > g->most ? g->start[e + 1] : g->most;
		g->start[e + 1] += g->start[e];
		next[e] = g->start[e];
	}
	for (int64_t t = 0; t < g->T; t++)
		for (int64_t j = 0; j < g->k; j++)
			g->slot[next[ids_row(ids, t)[j]]++] = (int32_t)(t * g->k + j);
	return GLLMK_OK;
}

struct matmul_id_call {
	struct cpu_state *s;
	const gllmk_tensor *y, *x, *w, *bias, *sw;
	int64_t k, n, kdim;
	gllmk_buffer scratch; /* xg [most, K] then yg [most, N], f32 */
	float *xg, *yg;
};

/* x's row for slot (t, j): the token's row, or the slot's own. */
static const float *x_row(const struct matmul_id_call *c, int64_t t, int64_t j)
{
	return cpu_row(c->x, c->x->ndim == 2 ? t : t * c->k + j);
}

static float *y_row(const struct matmul_id_call *c, int64_t t, int64_t j)
{
	return cpu_row(c->y, c->sw ? t : t * c->k + j);
}

static float slot_weight(const struct matmul_id_call *c, int64_t t, int64_t j)
{
	return ((const float *)cpu_row(c->sw, t))[j];
}

static gllmk_tensor expert_bias(const struct matmul_id_call *c, int64_t e)
{
	return (gllmk_tensor){ .buf = c->bias->buf,
			       .offset = c->bias->offset + (uint64_t)(e * c->bias->stride[0]),
			       .dtype = GLLMK_F32,
			       .ndim = 1,
			       .shape = { c->n },
			       .stride = { sizeof(float) } };
}

/* Slot weights: y[t] += a·r for each slot's result r (yg, in slot order). */
static void add_weighted(const struct matmul_id_call *c, const int32_t *slots, int64_t cnt)
{
	for (int64_t i = 0; i < cnt; i++) {
		const int64_t t = slots[i] / c->k, j = slots[i] % c->k;
		const float a = slot_weight(c, t, j), *r = c->yg + i * c->n;
		float *out = y_row(c, t, j);

		for (int64_t n = 0; n < c->n; n++)
			out[n] += a * r[n];
	}
}

/* Decoding (no expert chosen twice): every slot's product in one pass of
 * the pool (cpu_matmul_parts), each into y in place or, with slot
 * weights, into yg (then added in): one wake of the threads per call, not
 * one per expert, and the work balanced over all the experts' rows. */
static gllmk_status run_single_slots(struct matmul_id_call *c, const struct expert_groups *g)
{
	const int64_t cnt = g->T * g->k;
	struct cpu_matmul_part *part = malloc(sizeof(*part) * (size_t)cnt);
	gllmk_tensor *bias = malloc(sizeof(*bias) * (size_t)cnt);
	gllmk_status st;

	if (!part || !bias) {
		free(part);
		free(bias);
		return c->s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul_id: no memory for %lld slots",
					     (long long)cnt);
	}
	for (int64_t e = 0, i = 0; e < g->E; e++) {
		if (g->start[e + 1] == g->start[e])
			continue;
		const int64_t t = g->slot[g->start[e]] / c->k, j = g->slot[g->start[e]] % c->k;

		part[i] = (struct cpu_matmul_part){
			.w = slice3(c->w, e),
			.x = f32_matrix(c->x->buf, x_row(c, t, j), 1, c->kdim),
			.y = c->sw ? f32_matrix(&c->scratch, c->yg + i * c->n, 1, c->n)
				   : f32_matrix(c->y->buf, y_row(c, t, j), 1, c->n),
		};
		if (c->bias) {
			bias[i] = expert_bias(c, e);
			part[i].bias = &bias[i];
		}
		i++;
	}
	st = cpu_matmul_parts(c->s, part, cnt);
	if (st == GLLMK_OK && c->sw) {
		int32_t *order = malloc(sizeof(*order) * (size_t)cnt);

		if (!order) {
			st = c->s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul_id: no memory for %lld slots",
						   (long long)cnt);
		} else {
			for (int64_t e = 0, i = 0; e < g->E; e++)
				if (g->start[e + 1] > g->start[e])
					order[i++] = g->slot[g->start[e]];
			add_weighted(c, order, cnt);
			free(order);
		}
	}
	free(part);
	free(bias);
	return st;
}

/* Expert e's matmul over its `cnt` slots. */
static gllmk_status run_expert(struct matmul_id_call *c, int64_t e, const int32_t *slots, int64_t cnt)
{
	const gllmk_tensor w = slice3(c->w, e);
	gllmk_tensor bias, x, y;
	int64_t t0 = slots[0] / c->k, j0 = slots[0] % c->k;
	int y_in_place = cnt == 1 && !c->sw;
	gllmk_status st;

	if (c->bias)
		bias = expert_bias(c, e);
	if (cnt == 1) {
		x = f32_matrix(c->x->buf, x_row(c, t0, j0), 1, c->kdim);
	} else {
		for (int64_t i = 0; i < cnt; i++)
			memcpy(c->xg + i * c->kdim, x_row(c, slots[i] / c->k, slots[i] % c->k),
			       sizeof(float) * (size_t)c->kdim);
		x = f32_matrix(&c->scratch, c->xg, cnt, c->kdim);
	}
	y = y_in_place ? f32_matrix(c->y->buf, y_row(c, t0, j0), 1, c->n) : f32_matrix(&c->scratch, c->yg, cnt, c->n);
	st = cpu_matmul(c->s, &y, &x, &w, c->bias ? &bias : NULL);
	if (st != GLLMK_OK || y_in_place)
		return st;
	if (c->sw) {
		add_weighted(c, slots, cnt);
		return GLLMK_OK;
	}
	for (int64_t i = 0; i < cnt; i++)
		memcpy(y_row(c, slots[i] / c->k, slots[i] % c->k), c->yg + i * c->n, sizeof(float) * (size_t)c->n);
	return GLLMK_OK;
}

gllmk_status cpu_matmul_id(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias, gllmk_t slot_weights)
{
	struct cpu_state *s = st;
	struct expert_groups g = { .T = ids->shape[0], .k = ids->shape[1], .E = w->shape[0] };
	struct matmul_id_call c = {
		.s = s, .y = y, .x = x, .w = w, .bias = bias, .sw = slot_weights,
		.k = g.k, .n = w->shape[1], .kdim = w->shape[2],
	};
	gllmk_status rc = group_by_expert(s, ids, &g);
	size_t bytes;

	if (rc != GLLMK_OK)
		goto out;
	/* one slot an expert: yg holds every slot's result (run_single_slots) */
	bytes = sizeof(float) * (size_t)(g.most * c.kdim + (g.most == 1 ? g.T * g.k : g.most) * c.n);
	c.xg = aligned_alloc(64, (bytes + 63) / 64 * 64);
	if (!c.xg) {
		rc = s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul_id: %zu bytes of gathered rows", bytes);
		goto out;
	}
	c.yg = c.xg + g.most * c.kdim;
	c.scratch = (gllmk_buffer){ .impl = c.xg, .size = bytes };
	if (slot_weights) /* the experts' weighted results are added in */
		for (int64_t t = 0; t < g.T; t++)
			memset(cpu_row(y, t), 0, sizeof(float) * (size_t)c.n);
	if (g.most == 1) {
		rc = run_single_slots(&c, &g);
		goto out;
	}
	for (int64_t e = 0; rc == GLLMK_OK && e < g.E; e++)
		if (g.start[e + 1] > g.start[e])
			rc = run_expert(&c, e, g.slot + g.start[e], g.start[e + 1] - g.start[e]);
out:
	free(c.xg);
	free(g.slot);
	free(g.start);
	return rc;
}

/* ----------------------------------------------------- matmul_batched */

gllmk_status cpu_matmul_batched(void *st, gllmk_t y, gllmk_t x, gllmk_t w)
{
	gllmk_status rc = GLLMK_OK;

	for (int64_t b = 0; rc == GLLMK_OK && b < x->shape[0]; b++) {
		const gllmk_tensor yb = slice3(y, b), xb = slice3(x, b), wb = slice3(w, w->shape[0] == 1 ? 0 : b);

		rc = cpu_matmul(st, &yb, &xb, &wb, NULL);
	}
	return rc;
}
