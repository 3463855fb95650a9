/* Elementwise ops: add, mul, scale, the activations, swiglu and glu,
 * clamp and softcap.
 *
 * One skeleton walks the rows (or, when every operand is contiguous, the
 * whole tensor as one row) and calls the ISA's row kernel on each piece.
 * Big work is cut into pieces of whole rows, or of parts of rows when there
 * are few long rows, and spread over the pool. A call with a big output
 * takes the streaming twins of the row kernels (cpu_view.h). The ops
 * themselves are generated below from that skeleton, one line each.
 */
#include "cpu_plugin.h"
#include "cpu_view.h"
#include "../glu_views.h"

typedef void (*scalar_row_fn)(float *y, const float *x, float s, int64_t n);

enum ew_kind {
	EW_UNARY,   /* y = f(a) */
	EW_BINARY,  /* y = f(a, b), b broadcast to a's shape */
	EW_SCALAR,  /* y = f(a, s) */
	EW_SCALAR2, /* y = f(a, s, t) */
	EW_BINARY2, /* y = f(a, b, s, t), b of a's shape */
};

struct ew_job {
	enum ew_kind kind;
	cpu_unary_row_fn unary;
	cpu_binary_row_fn binary;
	scalar_row_fn scalar;           /* EW_SCALAR, and EW_BINARY when b is one value per row */
	cpu_scalar2_row_fn scalar2;
	cpu_binary2_row_fn binary2;
	float s, t;
	const gllmk_tensor *y, *a, *b;

	int stream;                     /* the kernels are the nt twins: fence each piece */
	int flat;                       /* every operand contiguous: one row of every element */
	int64_t rows, n;                /* as iterated */
	int64_t piece, pieces;          /* elements per work item, items per row */
	int b_scalar;                   /* b's innermost dim is 1 while a's is not */
	int64_t b_step[GLLMK_MAX_DIMS]; /* b's byte step per coordinate of a's outer dims */
};

static void add_scalar_row(float *y, const float *x, float s, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] + s;
}

static int64_t elements(const gllmk_tensor *t)
{
	return cpu_rows(t) * cpu_row_len(t);
}

/* Rows laid end to end (dims of size 1 may have any stride). */
static int is_contiguous(const gllmk_tensor *t)
{
	int64_t step = cpu_row_len(t) * (int64_t)sizeof(float);

	for (int d = t->ndim - 2; d >= 0; d--) {
		if (t->shape[d] > 1 && t->stride[d] != step)
			return 0;
		step *= t->shape[d];
	}
	return 1;
}

/* Numpy broadcasting, aligned at the innermost dim: b's dim of size 1 (or
 * missing) repeats, so its step along that dim of a is 0. */
static void plan_broadcast(struct ew_job *j)
{
	const gllmk_tensor *a = j->a, *b = j->b;
	int shift = a->ndim - b->ndim;

	for (int d = 0; d < a->ndim - 1; d++) {
		int db = d - shift;

		j->b_step[d] = db >= 0 && b->shape[db] == a->shape[d] && a->shape[d] > 1 ? b->stride[db] : 0;
	}
	j->b_scalar = cpu_row_len(b) == 1 && cpu_row_len(a) > 1;
}

static const float *b_row(const struct ew_job *j, int64_t r)
{
	const char *p = gllmk_tensor_host(j->b);

	if (j->flat)
		return (const float *)p;

	for (int d = j->a->ndim - 2; d >= 0; d--) {
		p += (r % j->a->shape[d]) * j->b_step[d];
		r /= j->a->shape[d];
	}
	return (const float *)p;
}

static float *row_of(const struct ew_job *j, const gllmk_tensor *t, int64_t r)
{
	return j->flat ? gllmk_tensor_host(t) : cpu_row(t, r);
}

static void ew_items(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct ew_job *j = arg;

	(void)tid;
	for (int64_t it = begin; it < end; it++) {
		int64_t r = it / j->pieces, off = it % j->pieces * j->piece;
		int64_t len = j->n - off < j->piece ? j->n - off : j->piece;
		float *y = row_of(j, j->y, r) + off;
		const float *a = row_of(j, j->a, r) + off;

		switch (j->kind) {
		case EW_UNARY:
			j->unary(y, a, len);
			break;
		case EW_SCALAR:
			j->scalar(y, a, j->s, len);
			break;
		case EW_SCALAR2:
			j->scalar2(y, a, j->s, j->t, len);
			break;
		case EW_BINARY2:
			j->binary2(y, a, b_row(j, r) + off, j->s, j->t, len);
			break;
		case EW_BINARY:
			if (j->b_scalar)
				j->scalar(y, a, *b_row(j, r), len);
			else
				j->binary(y, a, b_row(j, r) + off, len);
			break;
		}
	}
	cpu_stream_fence(j->stream);
}

static gllmk_status ew_run(const struct cpu_state *s, struct ew_job *j)
{
	int flat = is_contiguous(j->y) && is_contiguous(j->a);

	if (j->b) {
		plan_broadcast(j);
		flat = flat && is_contiguous(j->b) && elements(j->b) == elements(j->a);
	}
	j->flat = flat;
	j->stream = cpu_stream_output(j->y);
	j->rows = flat ? 1 : cpu_rows(j->a);
	j->n = flat ? elements(j->a) : cpu_row_len(j->a);

	int64_t grain = cpu_plan_pieces(j->rows, j->n, s->n_threads, &j->piece, &j->pieces);

	cpu_pool_run(s->pool, j->rows * j->pieces, grain, ew_items, j);
	return GLLMK_OK;
}

/* ------------------------------------------------------------ the ops */

/* The row kernel of `slot` for this call: streaming when y is big. */
#define EW_KERNEL(s, y, slot) CPU_WRITER((s)->k, cpu_stream_output(y), slot)

#define CPU_UNARY_OP(op)                                                        \
	gllmk_status cpu_##op(void *st, gllmk_t y, gllmk_t x)                   \
	{                                                                       \
		const struct cpu_state *s = st;                                 \
		struct ew_job j = { .kind = EW_UNARY, .y = y, .a = x,           \
				    .unary = EW_KERNEL(s, y, op##_row) };       \
		return ew_run(s, &j);                                           \
	}

/* scalar_fn: the row kernel used when b holds one value per row (it may
 * name s, the state, and y). */
#define CPU_BINARY_OP(op, scalar_fn)                                            \
	gllmk_status cpu_##op(void *st, gllmk_t y, gllmk_t a, gllmk_t b)        \
	{                                                                       \
		const struct cpu_state *s = st;                                 \
		struct ew_job j = { .kind = EW_BINARY, .y = y, .a = a, .b = b,  \
				    .binary = EW_KERNEL(s, y, op##_row),        \
				    .scalar = (scalar_fn) };                    \
		return ew_run(s, &j);                                           \
	}

CPU_UNARY_OP(silu)
CPU_UNARY_OP(gelu_tanh)
CPU_UNARY_OP(gelu_erf)
CPU_UNARY_OP(relu)
CPU_UNARY_OP(tanh)
CPU_UNARY_OP(exp)
CPU_UNARY_OP(sigmoid)
CPU_BINARY_OP(add, add_scalar_row)
CPU_BINARY_OP(mul, EW_KERNEL(s, y, scale_row))
CPU_BINARY_OP(swiglu, NULL) /* gate and up have y's shape: never one value per row */

gllmk_status cpu_scale(void *st, gllmk_t y, gllmk_t x, float f)
{
	const struct cpu_state *s = st;
	struct ew_job j = { .kind = EW_SCALAR, .y = y, .a = x, .scalar = EW_KERNEL(s, y, scale_row), .s = f };

	return ew_run(s, &j);
}

gllmk_status cpu_clamp(void *st, gllmk_t y, gllmk_t x, float lo, float hi)
{
	const struct cpu_state *s = st;
	struct ew_job j = { .kind = EW_SCALAR2, .y = y, .a = x, .scalar2 = EW_KERNEL(s, y, clamp_row), .s = lo,
			    .t = hi };

	return ew_run(s, &j);
}

gllmk_status cpu_softcap(void *st, gllmk_t y, gllmk_t x, float c)
{
	const struct cpu_state *s = st;
	struct ew_job j = { .kind = EW_SCALAR2, .y = y, .a = x, .scalar2 = EW_KERNEL(s, y, softcap_row), .s = c,
			    .t = 1.0f / c };

	return ew_run(s, &j);
}

/* glu: the fused form (up NULL) as two views of gate's rows
 * (glu_views.h); then act(gate) · up is a binary op like swiglu, which is
 * glu's SILU. */
gllmk_status cpu_glu(void *st, gllmk_t y, gllmk_t gate, gllmk_t up, const gllmk_glu_params *p)
{
	const struct cpu_state *s = st;
	const int stream = cpu_stream_output(y);
	gllmk_tensor g, u;
	struct ew_job j = { .kind = EW_BINARY, .y = y, .a = gate, .b = up };

	if (!up) {
		glu_fused_views(y, gate, p->swapped, &g, &u);
		j.a = &g;
		j.b = &u;
	}
	switch (p->op) {
	case GLLMK_GLU_SILU:
		j.binary = CPU_WRITER(s->k, stream, swiglu_row);
		break;
	case GLLMK_GLU_GELU_TANH:
		j.binary = CPU_WRITER(s->k, stream, geglu_row);
		break;
	case GLLMK_GLU_GELU_ERF:
		j.binary = CPU_WRITER(s->k, stream, geglu_erf_row);
		break;
	case GLLMK_GLU_RELU:
		j.binary = CPU_WRITER(s->k, stream, reglu_row);
		break;
	default: /* GLLMK_GLU_SWIGLU_OAI; the core checked the op */
		j.kind = EW_BINARY2;
		j.binary2 = CPU_WRITER(s->k, stream, swiglu_oai_row);
		j.s = p->alpha;
		j.t = p->limit;
		break;
	}
	return ew_run(s, &j);
}
