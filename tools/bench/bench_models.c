/* The matmul shapes of real models (issues 12 and 13), in every weight dtype:
 * the weight matrices of one decode step of Llama-3.2-1B and Llama-3-8B,
 * each at M = 1 (GB/s of weight bytes against the DRAM read limit) and,
 * for the matrices of a layer, at M = 512 (GFLOP/s against the FMA peak and
 * against the plugin's own f32 sgemm in the same run). Per model and dtype
 * two sums follow:
 *
 *   decode step M=1      the bytes of every matrix of a decode step (each
 *                        shape as often as it appears per layer × layers,
 *                        plus the output matrix) over the summed medians:
 *                        the effective GB/s of a step, the tokens/s its
 *                        matmuls allow, and the tokens/s at the DRAM limit;
 *   prefill layer M=512  the flops of one layer's matrices over their
 *                        summed medians.
 *
 * At M = 1 the weights stream from DRAM: every call reads the slice of one
 * random buffer (at least 256 MiB and 8 × the last-level cache, or the
 * largest matrix) that follows the previous call's, wrapping at its end. The output matrix runs
 * at M = 1 only: a prefill computes logits for its last token alone.
 *
 * Where the plugin prepares a dtype (gllmk_weights_prepare), each M = 1
 * row has a twin on prepared copies of the same slices ("... prepared"),
 * and a third sum, "decode step M=1 prepared", takes each matrix prepared
 * where it could be and in the file's layout where not: the step as
 * gllmk-run runs it.
 *
 * --models picks the models run at M = 1 (default both), --prefill those
 * also run at M = 512 (default 1b: the 8B layer costs 4× the 1B one, too
 * slow on cpu-generic for a default run). --smoke shrinks every dimension.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"

#define MODEL_M_BIG 512
#define SMOKE_MODEL_M_BIG 8
#define ROTATION_MIN_BYTES (256ull << 20)
#define ROTATION_LLC_TIMES 8
#define ROTATION_MAX_BYTES (4ull << 30)

struct model {
	unsigned id;          /* BENCH_MODEL_ bit */
	const char *tag;      /* "1b": in names and in --models */
	const char *name;
	int layers;
	int64_t hidden, kv, ffn, vocab; /* kv: n_kv_heads × head_dim */
};

/* Llama-3.2-1B: 16 layers, 32 query and 8 KV heads of 64; Llama-3-8B: 32
 * layers, 32 and 8 heads of 128. Both have the 128256-token vocabulary. */
static const struct model models[] = {
	{ BENCH_MODEL_1B, "1b", "Llama-3.2-1B", 16, 2048, 512, 8192, 128256 },
	{ BENCH_MODEL_8B, "8b", "Llama-3-8B", 32, 4096, 1024, 14336, 128256 },
};

/* Same layer counts, tiny dimensions (K still a multiple of 256). */
static const struct model smoke_models[] = {
	{ BENCH_MODEL_1B, "1b", "Llama-3.2-1B (smoke)", 16, 256, 64, 512, 1000 },
	{ BENCH_MODEL_8B, "8b", "Llama-3-8B (smoke)", 32, 512, 128, 1024, 1000 },
};

#define N_MODELS (sizeof(models) / sizeof(models[0]))

/* The matrices of a step by shape: q and o share one, k and v another,
 * gate and up a third. per_layer 0: once per step (the output). */
enum { MAT_QO, MAT_KV, MAT_GATE_UP, MAT_DOWN, MAT_OUTPUT, N_MATS };

struct matrix {
	const char *role;
	int per_layer;
	int64_t n, k;
};

static void model_matrices(const struct model *m, struct matrix mat[N_MATS])
{
	mat[MAT_QO] = (struct matrix){ "attn_q/o", 2, m->hidden, m->hidden };
	mat[MAT_KV] = (struct matrix){ "attn_k/v", 2, m->kv, m->hidden };
	mat[MAT_GATE_UP] = (struct matrix){ "ffn_gate/up", 2, m->ffn, m->hidden };
	mat[MAT_DOWN] = (struct matrix){ "ffn_down", 1, m->hidden, m->ffn };
	mat[MAT_OUTPUT] = (struct matrix){ "output", 0, m->vocab, m->hidden };
}

int bench_parse_models(const char *s, unsigned *out)
{
	unsigned bits = 0;

	if (!strcmp(s, "none")) {
		*out = 0;
		return 0;
	}
	if (!strcmp(s, "all")) {
		*out = BENCH_MODEL_1B | BENCH_MODEL_8B;
		return 0;
	}
	while (*s) {
		size_t len = strcspn(s, ",");
		unsigned hit = 0;

		for (size_t i = 0; i < N_MODELS; i++)
			if (len == strlen(models[i].tag) && !strncasecmp(s, models[i].tag, len))
				hit = models[i].id;
		if (!hit)
			return -1;
		bits |= hit;
		s += len + (s[len] == ',');
	}
	*out = bits;
	return 0;
}

/* y[M,N] = x[M,K] · w[N,K]ᵀ, w the next slice of the weight buffer after
 * the one the previous call read (whatever its matrix), wrapping at the end:
 * no call reads bytes read since the last wrap, so none is served from the
 * cache. Every slice's size is a multiple of the dtype's block, so is every
 * offset. */
struct mm_call {
	gllmk_context *ctx;
	gllmk_tensor y, x, w;
	uint64_t bytes, buf_bytes;
	uint64_t *cursor;
};

static gllmk_status mm_run(void *arg, int rep)
{
	struct mm_call *c = arg;

	(void)rep;
	if (*c->cursor + c->bytes > c->buf_bytes)
		*c->cursor = 0;
	c->w.offset = *c->cursor;
	*c->cursor += c->bytes;
	return gllmk_matmul(c->ctx, &c->y, &c->x, &c->w, NULL);
}

static gllmk_tensor tensor2(gllmk_buffer *buf, gllmk_dtype t, int64_t rows, int64_t cols)
{
	const int64_t shape[2] = { rows, cols };

	return gllmk_tensor_make(buf, 0, t, 2, shape);
}

/* Bytes of the weight buffer a model's matrices rotate over. */
static uint64_t rotation_bytes(const struct bench *b, uint64_t largest)
{
	uint64_t want = ROTATION_LLC_TIMES * b->lim.llc.total;

	if (b->opt->smoke)
		return 2 * largest;
	want = want > ROTATION_MIN_BYTES ? want : ROTATION_MIN_BYTES;
	want = want < ROTATION_MAX_BYTES ? want : ROTATION_MAX_BYTES;
	return want > largest ? want : largest;
}

/* What one matrix measured: seconds per call at M = 1 (the file's layout
 * and, where the plugin prepares the dtype, prepared) and at M = big. */
struct measured {
	bool m1, m1p, big;
	struct bench_stats s1, s1p, sbig;
};

/* The prepared copies (gllmk_weights_prepare, as gllmk-run makes them at
 * load) of every slice of one matrix in the rotation buffer; a call reads
 * the copy after the previous call's, so the copies stream from DRAM too. */
struct prep_call {
	gllmk_context *ctx;
	gllmk_tensor y, x;
	gllmk_dtype t;
	int64_t shape[2];
	gllmk_buffer **copy;
	int64_t n;
};

static gllmk_status prep_run(void *arg, int rep)
{
	struct prep_call *c = arg;
	const gllmk_tensor w = gllmk_tensor_make(c->copy[rep % c->n], 0, c->t, 2, c->shape);

	return gllmk_matmul(c->ctx, &c->y, &c->x, &w, NULL);
}

static void free_copies(struct prep_call *c)
{
	for (int64_t i = 0; i < c->n; i++)
		gllmk_buffer_free(c->copy[i]);
	free(c->copy);
}

/* Times matrix mat of bw prepared at M = 1: GLLMK_E_UNSUPPORTED (no row)
 * when the plugin keeps the dtype in the file's layout. */
static gllmk_status time_prepared(struct bench *b, gllmk_buffer *bw, uint64_t wbytes, uint64_t buf_bytes,
				  gllmk_buffer *bx, gllmk_buffer *by, gllmk_dtype t, const struct matrix *mat,
				  struct bench_stats *st)
{
	struct prep_call c = {
		.ctx = b->ctx,
		.y = tensor2(by, GLLMK_F32, 1, mat->n),
		.x = tensor2(bx, GLLMK_F32, 1, mat->k),
		.t = t,
		.shape = { mat->n, mat->k },
		.copy = calloc((size_t)(buf_bytes / wbytes), sizeof(gllmk_buffer *)),
	};
	gllmk_status s = c.copy ? GLLMK_OK : GLLMK_E_NO_MEMORY;

	for (int64_t i = 0; s == GLLMK_OK && i < (int64_t)(buf_bytes / wbytes); i++) {
		gllmk_tensor w = tensor2(bw, t, mat->n, mat->k);

		w.offset = (uint64_t)i * wbytes;
		s = gllmk_weights_prepare(b->ctx, &w, &c.copy[i]);
		c.n += s == GLLMK_OK;
	}
	if (s == GLLMK_OK)
		s = bench_time(b, prep_run, &c, st);
	free_copies(&c);
	return s;
}

static gllmk_status time_matmul(struct bench *b, gllmk_buffer *bw, uint64_t wbytes, uint64_t buf_bytes,
				uint64_t *cursor, gllmk_buffer *bx, gllmk_buffer *by, gllmk_dtype t, int m,
				const struct matrix *mat, struct bench_stats *st)
{
	struct mm_call c = {
		.ctx = b->ctx,
		.y = tensor2(by, GLLMK_F32, m, mat->n),
		.x = tensor2(bx, GLLMK_F32, m, mat->k),
		.w = tensor2(bw, t, mat->n, mat->k),
		.bytes = wbytes,
		.buf_bytes = buf_bytes,
		.cursor = cursor,
	};

	return bench_time(b, mm_run, &c, st);
}

static void matrix_name(char *out, size_t len, const struct model *md, gllmk_dtype t, const struct matrix *mat, int m,
			const char *suffix)
{
	snprintf(out, len, "model %s %s %s M=%d N=%lld K=%lld%s", md->tag, gllmk_dtype_name(t), mat->role, m,
		 (long long)mat->n, (long long)mat->k, suffix);
}

/* One model's run: its activations and outputs (allocated when a first case
 * of the model is selected) and the sgemm reference (measured once). */
struct model_run {
	const struct model *md;
	bool m1, prefill;  /* the model runs at M = 1, at M = big */
	int big;
	gllmk_buffer *bx, *by;
	double *sgemm;     /* shared by the models; < 0 tried and failed */
};

static gllmk_status model_buffers(struct bench *b, struct model_run *mr)
{
	struct matrix mat[N_MATS];
	int64_t max_k = 0, max_y = 0;
	gllmk_status st = GLLMK_OK;

	if (mr->bx)
		return GLLMK_OK;
	model_matrices(mr->md, mat);
	for (int i = 0; i < N_MATS; i++) {
		int64_t rows = mr->prefill && mat[i].per_layer ? mr->big : 1;

		max_k = mat[i].k > max_k ? mat[i].k : max_k;
		max_y = rows * mat[i].n > max_y ? rows * mat[i].n : max_y;
	}
	if (mr->prefill && *mr->sgemm == 0) {
		*mr->sgemm = bench_sgemm_gflops(b);
		*mr->sgemm = *mr->sgemm > 0 ? *mr->sgemm : -1;
	}
	mr->bx = bench_random_buffer(b, GLLMK_F32, (uint64_t)(mr->prefill ? mr->big : 1) * (uint64_t)max_k * 4, 3, &st);
	if (mr->bx)
		st = gllmk_buffer_alloc(b->ctx, (uint64_t)max_y * 4, &mr->by);
	if (st != GLLMK_OK) {
		gllmk_buffer_free(mr->bx);
		mr->bx = NULL;
	}
	return st;
}

/* Matrix i's M = 1 row: in the file's layout (prepared false) or
 * prepared, where the plugin prepares the dtype (else no row). */
static void row_m1(struct bench *b, const struct model *md, gllmk_dtype t, const struct matrix *mat,
		   uint64_t wbytes, uint64_t buf_bytes, uint64_t *cursor, gllmk_buffer *bw, gllmk_buffer *bx,
		   gllmk_buffer *by, bool prepared, struct measured *got)
{
	struct bench_stats *s = prepared ? &got->s1p : &got->s1;
	char name[96];
	gllmk_status st;
	struct bench_result *r;

	matrix_name(name, sizeof(name), md, t, mat, 1, prepared ? " prepared" : "");
	st = prepared ? time_prepared(b, bw, wbytes, buf_bytes, bx, by, t, mat, s) :
			time_matmul(b, bw, wbytes, buf_bytes, cursor, bx, by, t, 1, mat, s);
	if (prepared && st == GLLMK_E_UNSUPPORTED)
		return;
	if (st != GLLMK_OK) {
		bench_fail(b, name, st);
	} else if ((r = bench_add(b, "GB/s", BENCH_LIMIT_DRAM, "%s", name))) {
		*(prepared ? &got->m1p : &got->m1) = true;
		bench_rate(r, s, (double)wbytes / 1e9);
		snprintf(r->note, sizeof(r->note), "weight bytes; %.1f us/call, %.2f GFLOP/s; %.1f MiB slices of a %.1f MiB buffer",
			 s->median * 1e6, 2.0 * mat->n * mat->k / 1e9 / s->median, (double)wbytes / BENCH_MiB,
			 (double)buf_bytes / BENCH_MiB);
		bench_finish_result(b, r);
	}
}

/* Matrix i's M = big row, against the plugin's f32 sgemm. */
static void row_big(struct bench *b, const struct model *md, gllmk_dtype t, const struct matrix *mat, int big,
		    uint64_t wbytes, uint64_t buf_bytes, uint64_t *cursor, gllmk_buffer *bw, gllmk_buffer *bx,
		    gllmk_buffer *by, double sgemm, struct measured *got)
{
	char name[96];
	gllmk_status st;
	struct bench_result *r;

	matrix_name(name, sizeof(name), md, t, mat, big, "");
	st = time_matmul(b, bw, wbytes, buf_bytes, cursor, bx, by, t, big, mat, &got->sbig);
	if (st != GLLMK_OK) {
		bench_fail(b, name, st);
	} else if ((r = bench_add(b, "GFLOP/s", BENCH_LIMIT_PEAK, "%s", name))) {
		got->big = true;
		bench_rate(r, &got->sbig, 2.0 * mat->n * mat->k / 1e9 * big);
		if (sgemm > 0) {
			r->ratio_sgemm = r->median / sgemm;
			snprintf(r->note, sizeof(r->note), "%.2fx the f32 sgemm (%.1f GFLOP/s)", r->ratio_sgemm, sgemm);
		}
		bench_finish_result(b, r);
	}
}

/* The decode step: every matrix as often as a step runs it, in the file's
 * layout, or (prepared) prepared where the plugin prepares it and in the
 * file's layout where not, as gllmk-run runs a step; the prepared sum only
 * when some matrix was. */
static void step_sum(struct bench *b, const struct model *md, const struct matrix mat[N_MATS],
		     const uint64_t wbytes[N_MATS], const struct measured got[N_MATS], bool prepared, const char *step)
{
	double bytes = 0, t_med = 0, t_min = 0, t_max = 0;
	int reps = 1 << 30;
	bool all = true, some = !prepared;
	struct bench_result *r;

	for (int i = 0; i < N_MATS; i++) {
		const double times = mat[i].per_layer ? (double)mat[i].per_layer * md->layers : 1.0;
		const bool p = prepared && got[i].m1p;
		const struct bench_stats *s = p ? &got[i].s1p : &got[i].s1;

		all &= got[i].m1;
		some |= p;
		if (!got[i].m1)
			continue;
		bytes += times * (double)wbytes[i];
		t_med += times * s->median;
		t_min += times * s->min;
		t_max += times * s->max;
		reps = s->reps < reps ? s->reps : reps;
	}
	if (all && some && (r = bench_add(b, "GB/s", BENCH_LIMIT_DRAM, "%s", step))) {
		const struct bench_stats sum = { .median = t_med, .min = t_min, .max = t_max, .reps = reps };

		bench_rate(r, &sum, bytes / 1e9);
		r->tokens_per_s = 1.0 / t_med;
		snprintf(r->note, sizeof(r->note), "%d layers + output: %.0f MiB in %.2f ms = %.1f tok/s; %.1f tok/s at the memory limit",
			 md->layers, bytes / BENCH_MiB, t_med * 1e3, r->tokens_per_s,
			 bench_memory_limit(&b->lim) > 0 ? bench_memory_limit(&b->lim) * 1e9 / bytes : NAN);
		bench_finish_result(b, r);
	}
}

/* One layer of a prefill: the layer's matrices at M = big. */
static void layer_sum(struct bench *b, const struct matrix mat[N_MATS], const struct measured got[N_MATS], int big,
		      double sgemm, const char *layer)
{
	double gflop = 0, t_med = 0, t_min = 0, t_max = 0;
	int reps = 1 << 30;
	bool all = true;
	struct bench_result *r;

	for (int i = 0; i < N_MATS; i++) {
		if (!mat[i].per_layer)
			continue;
		all &= got[i].big;
		if (!got[i].big)
			continue;
		gflop += mat[i].per_layer * 2.0 * big * mat[i].n * mat[i].k / 1e9;
		t_med += mat[i].per_layer * got[i].sbig.median;
		t_min += mat[i].per_layer * got[i].sbig.min;
		t_max += mat[i].per_layer * got[i].sbig.max;
		reps = got[i].sbig.reps < reps ? got[i].sbig.reps : reps;
	}
	if (all && (r = bench_add(b, "GFLOP/s", BENCH_LIMIT_PEAK, "%s", layer))) {
		const struct bench_stats sum = { .median = t_med, .min = t_min, .max = t_max, .reps = reps };

		bench_rate(r, &sum, gflop);
		snprintf(r->note, sizeof(r->note), "7 matrices: %.1f GFLOP in %.1f ms", gflop, t_med * 1e3);
		if (sgemm > 0) {
			size_t len = strlen(r->note);

			r->ratio_sgemm = r->median / sgemm;
			snprintf(r->note + len, sizeof(r->note) - len, "; %.2fx the f32 sgemm", r->ratio_sgemm);
		}
		bench_finish_result(b, r);
	}
}

/* Every matrix of one model in one dtype, then the sums. */
static void model_dtype(struct bench *b, struct model_run *mr, gllmk_dtype t)
{
	const struct model *md = mr->md;
	const int big = mr->big;
	struct matrix mat[N_MATS];
	struct measured got[N_MATS] = { 0 };
	bool want1[N_MATS], want_big[N_MATS], any = false, step_sel, layer_sel;
	char name[96], step[96], step_p[96], layer[96];
	uint64_t wbytes[N_MATS], largest = 0, buf_bytes, cursor = 0;
	gllmk_buffer *bw;
	gllmk_status st;

	model_matrices(md, mat);
	snprintf(step, sizeof(step), "model %s %s decode step M=1", md->tag, gllmk_dtype_name(t));
	snprintf(step_p, sizeof(step_p), "model %s %s decode step M=1 prepared", md->tag, gllmk_dtype_name(t));
	snprintf(layer, sizeof(layer), "model %s %s prefill layer M=%d", md->tag, gllmk_dtype_name(t), big);
	step_sel = mr->m1 && (bench_selected(b, step) || bench_selected(b, step_p));
	layer_sel = mr->prefill && bench_selected(b, layer);
	for (int i = 0; i < N_MATS; i++) {
		wbytes[i] = bench_matrix_bytes(t, mat[i].n, mat[i].k);
		largest = wbytes[i] > largest ? wbytes[i] : largest;
		matrix_name(name, sizeof(name), md, t, &mat[i], 1, "");
		want1[i] = mr->m1 && (step_sel || bench_selected(b, name));
		matrix_name(name, sizeof(name), md, t, &mat[i], big, "");
		want_big[i] = mr->prefill && mat[i].per_layer > 0 && (layer_sel || bench_selected(b, name));
		any |= want1[i] || want_big[i];
	}
	if (!any)
		return;
	st = model_buffers(b, mr);
	if (st != GLLMK_OK) {
		bench_fail(b, md->name, st);
		return;
	}
	buf_bytes = rotation_bytes(b, largest);
	bw = bench_random_buffer(b, t, buf_bytes, 40 + (uint64_t)t, &st);
	if (!bw) {
		bench_fail(b, step, st);
		return;
	}
	for (int i = 0; i < N_MATS; i++) {
		if (want1[i]) {
			row_m1(b, md, t, &mat[i], wbytes[i], buf_bytes, &cursor, bw, mr->bx, mr->by, false, &got[i]);
			row_m1(b, md, t, &mat[i], wbytes[i], buf_bytes, &cursor, bw, mr->bx, mr->by, true, &got[i]);
		}
		if (want_big[i])
			row_big(b, md, t, &mat[i], big, wbytes[i], buf_bytes, &cursor, bw, mr->bx, mr->by, *mr->sgemm,
				&got[i]);
	}
	gllmk_buffer_free(bw);
	if (step_sel) {
		step_sum(b, md, mat, wbytes, got, false, step);
		step_sum(b, md, mat, wbytes, got, true, step_p);
	}
	if (layer_sel)
		layer_sum(b, mat, got, big, *mr->sgemm, layer);
}

void bench_cases_models(struct bench *b)
{
	const struct model *set = b->opt->smoke ? smoke_models : models;
	gllmk_dtype types[BENCH_MAX_DTYPES];
	size_t n_types = bench_weight_dtypes(types);
	double sgemm = 0;

	for (size_t mi = 0; mi < N_MODELS; mi++) {
		struct model_run mr = {
			.md = &set[mi],
			.m1 = (b->opt->models & set[mi].id) != 0,
			.prefill = (b->opt->prefill & set[mi].id) != 0,
			.big = b->opt->prefill_m ? b->opt->prefill_m : b->opt->smoke ? SMOKE_MODEL_M_BIG : MODEL_M_BIG,
			.sgemm = &sgemm,
		};

		for (size_t ti = 0; ti < n_types && (mr.m1 || mr.prefill); ti++)
			model_dtype(b, &mr, types[ti]);
		gllmk_buffer_free(mr.bx);
		gllmk_buffer_free(mr.by);
	}
}
