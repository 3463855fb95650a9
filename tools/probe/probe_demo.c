/* gllmk-probe --demo: one decode step of a small transformer layer on the
 * selected plugin, the quick start's main job.
 *
 * Weights are made on the device (random f32 quantized to q8_0 by
 * gllmk_quantize, the KV cache converted to f16 by gllmk_convert), then one
 * token goes through embedding lookup, rms_norm, the QKV matmul, rope, the
 * KV-cache append, attention over the cache, the output projection, the
 * residual add, the final norm, the logits matmul (tied embeddings), softmax,
 * argmax and sampling. Each op is timed on its own (synchronised); the step is
 * repeated and the median printed with a checksum of each op's output, so two
 * plugins (or two machines) can be compared at a glance.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_report.h"
#include "probe_tensor.h"

#define HIDDEN 2048
#define HEADS 16
#define KV_HEADS 4
#define HEAD_DIM 128
#define QKV (HIDDEN + 2 * KV_HEADS * HEAD_DIM)
#define PAST 1024   /* tokens already in the cache */
#define VOCAB 8192
#define TOKEN 42
#define REPEATS 5

struct demo {
	struct arena *a;
	/* weights and cache */
	const gllmk_tensor *emb, *wqkv, *wo, *norm1, *norm2, *kcache, *vcache;
	const gllmk_tensor *ids, *pos;
	/* activations */
	const gllmk_tensor *x, *h, *qkv, *q, *k, *v, *kslot, *vslot, *att, *att2d, *o, *x2, *h2, *logits, *probs;
	const gllmk_tensor *top, *pick;
	const gllmk_tensor *out; /* what the last step wrote */
};

static gllmk_status s_get_rows(struct demo *d)
{
	d->out = d->x;
	return gllmk_get_rows(d->a->ctx, d->x, d->emb, d->ids);
}

static gllmk_status s_norm1(struct demo *d)
{
	d->out = d->h;
	return gllmk_rms_norm(d->a->ctx, d->h, d->x, d->norm1, 1e-5f);
}

static gllmk_status s_qkv(struct demo *d)
{
	d->out = d->qkv;
	return gllmk_matmul(d->a->ctx, d->qkv, d->h, d->wqkv, NULL);
}

static gllmk_status s_rope(struct demo *d)
{
	gllmk_rope_params p = { .mode = GLLMK_ROPE_NORMAL, .theta_base = 10000.0f, .freq_scale = 1.0f };
	gllmk_status st = gllmk_rope(d->a->ctx, d->q, d->q, d->pos, &p);

	d->out = d->qkv;
	return st ? st : gllmk_rope(d->a->ctx, d->k, d->k, d->pos, &p);
}

static gllmk_status s_kv_append(struct demo *d)
{
	gllmk_status st = gllmk_convert(d->a->ctx, d->kslot, d->k);

	d->out = NULL; /* f16: no f32 checksum */
	return st ? st : gllmk_convert(d->a->ctx, d->vslot, d->v);
}

static gllmk_status s_attention(struct demo *d)
{
	gllmk_attention_params p = { .causal = 1 };

	d->out = d->att;
	return gllmk_attention(d->a->ctx, d->att, d->q, d->kcache, d->vcache, NULL, NULL, &p);
}

static gllmk_status s_out_proj(struct demo *d)
{
	d->out = d->o;
	return gllmk_matmul(d->a->ctx, d->o, d->att2d, d->wo, NULL);
}

static gllmk_status s_residual(struct demo *d)
{
	d->out = d->x2;
	return gllmk_add(d->a->ctx, d->x2, d->x, d->o);
}

static gllmk_status s_norm2(struct demo *d)
{
	d->out = d->h2;
	return gllmk_rms_norm(d->a->ctx, d->h2, d->x2, d->norm2, 1e-5f);
}

static gllmk_status s_logits(struct demo *d)
{
	d->out = d->logits;
	return gllmk_matmul(d->a->ctx, d->logits, d->h2, d->emb, NULL);
}

static gllmk_status s_softmax(struct demo *d)
{
	gllmk_softmax_params p = { .scale = 1.0f };

	d->out = d->probs;
	return gllmk_softmax(d->a->ctx, d->probs, d->logits, NULL, &p);
}

static gllmk_status s_argmax(struct demo *d)
{
	d->out = d->top;
	return gllmk_argmax(d->a->ctx, d->top, d->logits);
}

static gllmk_status s_sample(struct demo *d)
{
	const float uniform[1] = { 0.5f };
	gllmk_sample_params p = { .temperature = 0.8f, .top_k = 40, .top_p = 0.95f };

	d->out = d->pick;
	return gllmk_sample(d->a->ctx, d->pick, d->logits, uniform, &p);
}

static const struct {
	const char *name;
	gllmk_status (*run)(struct demo *d);
} steps[] = {
	{ "get_rows (embedding, q8_0)", s_get_rows },
	{ "rms_norm", s_norm1 },
	{ "matmul qkv (q8_0 3072x2048)", s_qkv },
	{ "rope q, k", s_rope },
	{ "convert k, v -> f16 cache", s_kv_append },
	{ "attention (1025 tokens, GQA 16/4)", s_attention },
	{ "matmul out (q8_0 2048x2048)", s_out_proj },
	{ "add (residual)", s_residual },
	{ "rms_norm", s_norm2 },
	{ "matmul logits (q8_0 8192x2048)", s_logits },
	{ "softmax", s_softmax },
	{ "argmax", s_argmax },
	{ "sample (T 0.8, top-k 40, top-p 0.95)", s_sample },
};

_Static_assert(sizeof(steps) / sizeof(steps[0]) <= PROBE_MAX_STEPS, "PROBE_MAX_STEPS too small");

typedef gllmk_status (*make_fn)(gllmk_context *, const gllmk_tensor *, const gllmk_tensor *);

/* A tensor of random values in [lo, hi): uploaded as f32 (make NULL), or
 * made on the device by make (gllmk_quantize, gllmk_convert) from an f32 upload. */
static const gllmk_tensor *random_tensor(struct demo *d, gllmk_dtype dt, make_fn make, double lo, double hi,
					 uint64_t seed, int32_t ndim, const int64_t *shape)
{
	gllmk_tensor like = gllmk_tensor_make(NULL, 0, GLLMK_F32, ndim, shape);
	float *host = prng_floats(seed, (size_t)tensor_elems(&like), lo, hi);
	struct arena tmp = { .ctx = d->a->ctx };
	const gllmk_tensor *t, *f;

	if (!host) {
		arena_fail(d->a, GLLMK_E_NO_MEMORY, "gllmk-probe: out of host memory");
		return NULL;
	}
	if (!make) {
		t = arena_new(d->a, GLLMK_F32, host, ndim, shape);
		free(host);
		return t;
	}
	t = arena_new(d->a, dt, NULL, ndim, shape);
	f = arena_new(&tmp, GLLMK_F32, host, ndim, shape);
	if (t && f && !arena_check(d->a, make(d->a->ctx, t, f)))
		arena_check(d->a, gllmk_sync(d->a->ctx));
	if (tmp.st)
		arena_fail(d->a, tmp.st, tmp.err);
	arena_free(&tmp);
	free(host);
	return t;
}

static void setup(struct demo *d)
{
	struct arena *a = d->a;
	const int32_t id = TOKEN, pos = PAST;
	const uint64_t slot = (uint64_t)PAST * KV_HEADS * HEAD_DIM * 2; /* f16 */

	d->emb = random_tensor(d, GLLMK_Q8_0, gllmk_quantize, -0.05, 0.05, 11, SHAPE(VOCAB, HIDDEN));
	d->wqkv = random_tensor(d, GLLMK_Q8_0, gllmk_quantize, -0.05, 0.05, 12, SHAPE(QKV, HIDDEN));
	d->wo = random_tensor(d, GLLMK_Q8_0, gllmk_quantize, -0.05, 0.05, 13, SHAPE(HIDDEN, HIDDEN));
	d->norm1 = random_tensor(d, GLLMK_F32, NULL, 0.5, 1.5, 14, SHAPE(HIDDEN));
	d->norm2 = random_tensor(d, GLLMK_F32, NULL, 0.5, 1.5, 15, SHAPE(HIDDEN));
	d->kcache = random_tensor(d, GLLMK_F16, gllmk_convert, -0.5, 0.5, 16, SHAPE(PAST + 1, KV_HEADS, HEAD_DIM));
	d->vcache = random_tensor(d, GLLMK_F16, gllmk_convert, -0.5, 0.5, 17, SHAPE(PAST + 1, KV_HEADS, HEAD_DIM));
	d->ids = arena_new(a, GLLMK_I32, &id, SHAPE(1));
	d->pos = arena_new(a, GLLMK_I32, &pos, SHAPE(1));
	d->x = arena_new(a, GLLMK_F32, NULL, SHAPE(1, HIDDEN));
	d->h = arena_new(a, GLLMK_F32, NULL, SHAPE(1, HIDDEN));
	d->qkv = arena_new(a, GLLMK_F32, NULL, SHAPE(1, QKV));
	d->q = arena_view(a, d->qkv, 0, GLLMK_F32, SHAPE(1, HEADS, HEAD_DIM));
	d->k = arena_view(a, d->qkv, HIDDEN * 4, GLLMK_F32, SHAPE(1, KV_HEADS, HEAD_DIM));
	d->v = arena_view(a, d->qkv, (HIDDEN + KV_HEADS * HEAD_DIM) * 4, GLLMK_F32, SHAPE(1, KV_HEADS, HEAD_DIM));
	d->kslot = arena_view(a, d->kcache, slot, GLLMK_F16, SHAPE(1, KV_HEADS, HEAD_DIM));
	d->vslot = arena_view(a, d->vcache, slot, GLLMK_F16, SHAPE(1, KV_HEADS, HEAD_DIM));
	d->att = arena_new(a, GLLMK_F32, NULL, SHAPE(1, HEADS, HEAD_DIM));
	d->att2d = arena_view(a, d->att, 0, GLLMK_F32, SHAPE(1, HIDDEN));
	d->o = arena_new(a, GLLMK_F32, NULL, SHAPE(1, HIDDEN));
	d->x2 = arena_new(a, GLLMK_F32, NULL, SHAPE(1, HIDDEN));
	d->h2 = arena_new(a, GLLMK_F32, NULL, SHAPE(1, HIDDEN));
	d->logits = arena_new(a, GLLMK_F32, NULL, SHAPE(1, VOCAB));
	d->probs = arena_new(a, GLLMK_F32, NULL, SHAPE(1, VOCAB));
	d->top = arena_new(a, GLLMK_I32, NULL, SHAPE(1));
	d->pick = arena_new(a, GLLMK_I32, NULL, SHAPE(1));
}

/* One op: run, sync, time, and checksum what it wrote. */
static void run_step(struct demo *d, size_t i, struct probe_step *s, double *ms, float *scratch)
{
	double t0 = probe_now();

	if (arena_check(d->a, steps[i].run(d)) || arena_check(d->a, gllmk_sync(d->a->ctx)))
		return;
	*ms = (probe_now() - t0) * 1e3;
	s->checksum = NAN;
	if (!d->out || arena_read(d->a, d->out, scratch))
		return;
	if (d->out->dtype == GLLMK_I32)
		s->checksum = *(int32_t *)(void *)scratch; /* a token id */
	else
		s->checksum = checksum(scratch, (size_t)tensor_elems(d->out));
}

void probe_demo(struct probe_demo *r, const struct probe_options *opt, const char *plugin)
{
	const size_t n = sizeof(steps) / sizeof(steps[0]);
	double times[PROBE_MAX_STEPS][REPEATS];
	float *scratch = malloc(sizeof(float) * (QKV > VOCAB ? QKV : VOCAB));
	struct arena a = { 0 };
	struct demo d = { .a = &a };

	*r = (struct probe_demo){ .ran = true, .repeats = REPEATS, .n_steps = (int)n };
	probe_copy(r->plugin, plugin);
	r->status = probe_open_named(opt, plugin, &a.ctx, r->error, sizeof(r->error));
	if (r->status != GLLMK_OK || !scratch) {
		free(scratch);
		return;
	}
	for (size_t i = 0; i < n; i++)
		probe_copy(r->steps[i].name, steps[i].name);
	setup(&d);
	for (int rep = 0; rep < REPEATS && !a.st; rep++)
		for (size_t i = 0; i < n && !a.st; i++)
			run_step(&d, i, &r->steps[i], &times[i][rep], scratch);
	if (!a.st) {
		arena_read(&a, d.top, &r->argmax_token);
		arena_read(&a, d.pick, &r->sampled_token);
	}
	for (size_t i = 0; i < n && !a.st; i++) {
		r->steps[i].ms = median(times[i], REPEATS);
	}
	r->status = a.st;
	if (a.st)
		probe_copy(r->error, a.err);
	arena_free(&a);
	gllmk_close(a.ctx);
	free(scratch);
}
