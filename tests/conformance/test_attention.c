/* attention against ref_attention.c's naive double softmax.
 *
 * Tq 1, 3 and 7; kv_len 1, 7, 33, 300, 513, 777, 1000, 4097 (quick: 513);
 * heads 1/1, 8/8, 6/2, 8/2, 12/4, 32/8 (GQA groups 1, 3, 4), 4/1 (MQA) and
 * 16/2 (group 8); D = Dv 64 and 128, D != Dv both ways, and D, Dv of 24,
 * 33, 40, 72, 80, 100 (vector tails); decoding (Tq 1) with long KV, which
 * the CPU plugins split over the tokens, contiguous and paged; f32 and f16 KV;
 * causal; additive masks (random finite values with -inf holes, a row that
 * is all -inf, speculative-decoding tree masks); queries that see nothing
 * give zeros; kv_len < Tkv. Paged cases put the same tokens in shuffled
 * blocks of 16 and must agree with the contiguous layout and the reference.
 * Everything a plugin must not read (tokens past kv_len, spare slots and
 * blocks, mask columns past kv_len) is NaN, so reading it shows.
 *
 * Tolerance (SPEC/TOLERANCES.md): |got − want| <= 2e-5 · Σ_t p_t·|v_t|, the
 * output's own scale; exact zeros for a query that sees nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_attention.h"
#include "ref_half.h"

#define ATTN_RTOL 2e-5
#define PAGE 16

enum mask_kind {
	MASK_NONE,
	MASK_RANDOM, /* uniform(-2, 2), 10% -inf, row 1 all -inf */
	MASK_TREE,   /* prefix visible; the draft tokens see their ancestors */
};

struct attn_case {
	int64_t tq, hq, hkv, d, dv, kv_len;
	int f16;         /* k, v in f16 */
	int causal;
	enum mask_kind mask;
	int paged;       /* also run paged; both must match */
	int64_t extra;   /* contiguous Tkv = kv_len + extra (kv_len < Tkv) */
	float scale;     /* 0: 1/sqrt(D) */
	int big;         /* quick mode: kv_len 513 */
};

static const struct attn_case attn_cases[] = {
	{ .tq = 1, .hq = 1, .hkv = 1, .d = 64, .dv = 64, .kv_len = 1 },
	{ .tq = 7, .hq = 8, .hkv = 2, .d = 128, .dv = 128, .kv_len = 33, .causal = 1 },
	{ .tq = 1, .hq = 4, .hkv = 1, .d = 128, .dv = 128, .kv_len = 4097, .f16 = 1, .big = 1 },
	{ .tq = 7, .hq = 8, .hkv = 2, .d = 64, .dv = 64, .kv_len = 300, .f16 = 1, .causal = 1, .paged = 1 },
	{ .tq = 7, .hq = 4, .hkv = 1, .d = 128, .dv = 64, .kv_len = 300, .mask = MASK_TREE, .paged = 1, .scale = 0.3f },
	{ .tq = 7, .hq = 1, .hkv = 1, .d = 64, .dv = 64, .kv_len = 1, .causal = 1 }, /* 6 queries see nothing */
	{ .tq = 7, .hq = 8, .hkv = 2, .d = 128, .dv = 128, .kv_len = 4097, .causal = 1, .paged = 1, .big = 1 },
	{ .tq = 7, .hq = 1, .hkv = 1, .d = 64, .dv = 64, .kv_len = 33, .f16 = 1, .mask = MASK_RANDOM, .extra = 7 },
	{ .tq = 1, .hq = 8, .hkv = 2, .d = 64, .dv = 64, .kv_len = 33, .paged = 1, .extra = 9 },
	{ .tq = 7, .hq = 4, .hkv = 1, .d = 64, .dv = 128, .kv_len = 33, .f16 = 1, .causal = 1, .mask = MASK_TREE,
	  .paged = 1 },
	{ .tq = 7, .hq = 8, .hkv = 2, .d = 128, .dv = 128, .kv_len = 300, .mask = MASK_RANDOM, .paged = 1,
	  .scale = 0.5f },
	{ .tq = 1, .hq = 1, .hkv = 1, .d = 128, .dv = 128, .kv_len = 300, .f16 = 1, .extra = 1 },
	/* decode shapes for the chunk kernels: GQA groups of 8 (two head
	 * blocks), 3 (a block of 2 and one of 1) and 1; split-K over long KV,
	 * paged too; D and Dv that are no multiple of any vector width */
	{ .tq = 1, .hq = 16, .hkv = 2, .d = 128, .dv = 128, .kv_len = 4097, .f16 = 1, .big = 1 },
	{ .tq = 1, .hq = 32, .hkv = 8, .d = 128, .dv = 128, .kv_len = 4097, .f16 = 1, .paged = 1, .big = 1 },
	{ .tq = 1, .hq = 6, .hkv = 2, .d = 33, .dv = 33, .kv_len = 1000, .mask = MASK_RANDOM, .paged = 1 },
	{ .tq = 7, .hq = 8, .hkv = 8, .d = 72, .dv = 100, .kv_len = 7, .f16 = 1, .causal = 1 },
	{ .tq = 3, .hq = 16, .hkv = 2, .d = 80, .dv = 80, .kv_len = 513, .causal = 1, .extra = 5 },
	{ .tq = 1, .hq = 12, .hkv = 4, .d = 40, .dv = 24, .kv_len = 777, .f16 = 1, .mask = MASK_RANDOM },
	/* prompt shapes (8 queries or more: the CPU plugins' longer chunks),
	 * with a chunk and a partial one, masks and pages */
	{ .tq = 33, .hq = 8, .hkv = 2, .d = 64, .dv = 64, .kv_len = 300, .f16 = 1, .causal = 1, .paged = 1 },
	{ .tq = 9, .hq = 4, .hkv = 1, .d = 80, .dv = 72, .kv_len = 513, .mask = MASK_RANDOM, .extra = 3 },
	{ .tq = 8, .hq = 6, .hkv = 2, .d = 33, .dv = 33, .kv_len = 130, .f16 = 1, .causal = 1, .mask = MASK_TREE,
	  .paged = 1 },
	{ .tq = 19, .hq = 4, .hkv = 2, .d = 64, .dv = 64, .kv_len = 5, .f16 = 1, .causal = 1 }, /* 14 see nothing */
};

/* ------------------------------------------------------------ host data */

/* A KV tensor image: rows of `len` elements, f32 or f16, NaN everywhere a
 * token is not placed. */
struct kv_image {
	void *data;
	size_t es;    /* element size */
	int64_t rows; /* slots × heads */
	int64_t len;
};

static struct kv_image kv_image(int f16, int64_t rows, int64_t len)
{
	struct kv_image im = { .es = f16 ? 2 : 4, .rows = rows, .len = len };
	size_t n = (size_t)(rows * len);

	im.data = conf_xmalloc(n * im.es);
	for (size_t i = 0; i < n; i++) {
		if (f16)
			((uint16_t *)im.data)[i] = 0x7e00;
		else
			((float *)im.data)[i] = NAN;
	}
	return im;
}

static void kv_put(struct kv_image *im, int64_t row, const float *src)
{
	for (int64_t j = 0; j < im->len; j++) {
		if (im->es == 2)
			((uint16_t *)im->data)[row * im->len + j] = ref_f16_bits(src[j]);
		else
			((float *)im->data)[row * im->len + j] = src[j];
	}
}

/* Logical k or v [kv_len, hkv, len], uniform in [-1, 1), rounded to f16
 * when the cache is f16 so the reference sees the stored values. */
static float *random_kv(struct conf_rng *r, int f16, int64_t n)
{
	float *x = conf_xmalloc(sizeof(float) * (size_t)n);

	conf_fill_uniform(r, x, (size_t)n, -1.0, 1.0);
	if (f16) {
		for (int64_t i = 0; i < n; i++)
			x[i] = (float)ref_f16_value(ref_f16_bits(x[i]));
	}
	return x;
}

static void fill_mask(struct conf_rng *r, const struct attn_case *c, float *mask, int64_t cols)
{
	int64_t prefix = c->kv_len - c->tq;
	int64_t parent[16];

	for (int64_t i = 0; i < c->tq; i++) {
		parent[i] = conf_rng_int(r, -1, i - 1);
		for (int64_t t = 0; t < cols; t++) {
			float *m = mask + i * cols + t;

			if (t >= c->kv_len) {
				*m = NAN; /* past kv_len: never read */
			} else if (c->mask == MASK_RANDOM) {
				*m = (i == 1 || conf_rng_int(r, 0, 9) == 0) ? -INFINITY
									     : (float)conf_rng_uniform(r, -2.0, 2.0);
			} else {
				int64_t a = i;

				*m = t < prefix ? 0.0f : -INFINITY;
				while (*m != 0.0f && a >= 0) {
					if (t - prefix == a)
						*m = 0.0f;
					a = parent[a];
				}
			}
		}
	}
}

/* ---------------------------------------------------------------- layout */

struct kv_layout {
	struct conf_tensor k, v, table;
	int paged;
	int64_t kv_len_param;
};

/* Contiguous: [kv_len + extra, hkv, len] with the extra rows NaN. */
static struct conf_tensor upload_contiguous(const struct attn_case *c, const float *x, int64_t len)
{
	int64_t tkv = c->kv_len + c->extra, shape[3] = { tkv, c->hkv, len };
	struct kv_image im = kv_image(c->f16, tkv * c->hkv, len);

	for (int64_t row = 0; row < c->kv_len * c->hkv; row++)
		kv_put(&im, row, x + row * len);

	struct conf_tensor t = conf_upload(c->f16 ? GLLMK_F16 : GLLMK_F32, 3, shape, im.data);

	free(im.data);
	return t;
}

/* Paged: [nblk, PAGE, hkv, len]; token t in block table[t / PAGE], slot
 * t % PAGE; spare blocks and slots NaN. */
static struct conf_tensor upload_paged(const struct attn_case *c, const float *x, int64_t len, const int32_t *table,
				       int64_t nblk)
{
	int64_t shape[4] = { nblk, PAGE, c->hkv, len };
	struct kv_image im = kv_image(c->f16, nblk * PAGE * c->hkv, len);

	for (int64_t t = 0; t < c->kv_len; t++) {
		int64_t slot = (int64_t)table[t / PAGE] * PAGE + t % PAGE;

		for (int64_t h = 0; h < c->hkv; h++)
			kv_put(&im, slot * c->hkv + h, x + (t * c->hkv + h) * len);
	}

	struct conf_tensor t = conf_upload(c->f16 ? GLLMK_F16 : GLLMK_F32, 4, shape, im.data);

	free(im.data);
	return t;
}

/* A shuffled block table of every page kv_len needs plus one more (a
 * valid, unused, NaN block), among three spare blocks. */
static int32_t *shuffled_table(struct conf_rng *r, int64_t kv_len, int64_t *npages, int64_t *nblk)
{
	int32_t *perm;

	*npages = (kv_len + PAGE - 1) / PAGE + 1;
	*nblk = *npages + 3;
	perm = conf_xmalloc(sizeof(int32_t) * (size_t)*nblk);
	for (int64_t i = 0; i < *nblk; i++)
		perm[i] = (int32_t)i;
	for (int64_t i = *nblk - 1; i > 0; i--) {
		int64_t j = conf_rng_int(r, 0, i);
		int32_t tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	return perm;
}

/* ------------------------------------------------------------- the case */

static void run_attention(const struct attn_case *c, const char *what, struct kv_layout *l,
			  const struct conf_tensor *q, const struct conf_tensor *mask, const double *want,
			  const double *tol, float *got)
{
	int64_t out_shape[3] = { c->tq, c->hq, c->dv };
	gllmk_attention_params p = { .scale = c->scale, .causal = c->causal, .kv_len = (int32_t)l->kv_len_param };
	struct conf_tensor out = conf_output(GLLMK_F32, 3, out_shape);
	size_t n = (size_t)(c->tq * c->hq * c->dv);

	conf_ok(gllmk_attention(conf.ctx, &out.t, &q->t, &l->k.t, &l->v.t, mask ? &mask->t : NULL,
				l->paged ? &l->table.t : NULL, &p));
	conf_download(&out, got);
	conf_check_within(what, got, want, tol, n);
	conf_free(&out);
}

static void attention_one(const struct attn_case *c0)
{
	struct attn_case c = *c0;
	struct conf_rng r;
	char what[160];

	if (c.big && conf.quick)
		c.kv_len = 513;
	snprintf(what, sizeof(what), "attention Tq=%lld H=%lld/%lld D=%lld Dv=%lld kv_len=%lld %s%s%s%s extra=%lld scale=%g",
		 (long long)c.tq, (long long)c.hq, (long long)c.hkv, (long long)c.d, (long long)c.dv,
		 (long long)c.kv_len, c.f16 ? "f16" : "f32", c.causal ? " causal" : "",
		 c.mask == MASK_TREE ? " tree-mask" : c.mask == MASK_RANDOM ? " mask" : "", c.paged ? " paged" : "",
		 (long long)c.extra, c.scale);
	conf_rng_init(&r, what);

	int64_t nq = c.tq * c.hq * c.d, nout = c.tq * c.hq * c.dv, mask_cols = c.kv_len + 3;
	float *q = conf_xmalloc(sizeof(float) * (size_t)nq);
	float *k, *v, *mask = NULL;
	float *got = conf_xmalloc(sizeof(float) * (size_t)nout);
	float *got_paged = conf_xmalloc(sizeof(float) * (size_t)nout);
	double *want = conf_xmalloc(sizeof(double) * (size_t)nout);
	double *tol = conf_xmalloc(sizeof(double) * (size_t)nout);

	conf_fill_uniform(&r, q, (size_t)nq, -2.0, 2.0);
	k = random_kv(&r, c.f16, c.kv_len * c.hkv * c.d);
	v = random_kv(&r, c.f16, c.kv_len * c.hkv * c.dv);
	if (c.mask != MASK_NONE) {
		mask = conf_xmalloc(sizeof(float) * (size_t)(c.tq * mask_cols));
		fill_mask(&r, &c, mask, mask_cols);
	}

	struct ref_attn ra = { .tq = c.tq, .hq = c.hq, .hkv = c.hkv, .d = c.d, .dv = c.dv, .kv_len = c.kv_len,
			       .causal = c.causal, .scale = c.scale != 0.0f ? c.scale : 1.0 / sqrt((double)c.d) };

	ref_attention(&ra, q, k, v, mask, mask_cols, want, tol);
	for (int64_t i = 0; i < nout; i++)
		tol[i] *= ATTN_RTOL;

	int64_t q_shape[3] = { c.tq, c.hq, c.d }, m_shape[2] = { c.tq, mask_cols };
	struct conf_tensor qt = conf_upload(GLLMK_F32, 3, q_shape, q);
	struct conf_tensor mt = { 0 };

	if (mask)
		mt = conf_upload(GLLMK_F32, 2, m_shape, mask);

	struct kv_layout contiguous = {
		.k = upload_contiguous(&c, k, c.d),
		.v = upload_contiguous(&c, v, c.dv),
		.kv_len_param = c.extra ? c.kv_len : 0, /* 0 = all of Tkv */
	};

	run_attention(&c, what, &contiguous, &qt, mask ? &mt : NULL, want, tol, got);
	conf_free(&contiguous.k);
	conf_free(&contiguous.v);

	if (c.paged) {
		int64_t npages, nblk;
		int32_t *table = shuffled_table(&r, c.kv_len, &npages, &nblk);
		struct kv_layout paged = {
			.k = upload_paged(&c, k, c.d, table, nblk),
			.v = upload_paged(&c, v, c.dv, table, nblk),
			.table = conf_upload(GLLMK_I32, 1, &npages, table),
			.paged = 1,
			.kv_len_param = c.kv_len,
		};
		char paged_what[200];
		double *contiguous_result = conf_xmalloc(sizeof(double) * (size_t)nout);

		snprintf(paged_what, sizeof(paged_what), "%s (paged)", what);
		run_attention(&c, paged_what, &paged, &qt, mask ? &mt : NULL, want, tol, got_paged);
		snprintf(paged_what, sizeof(paged_what), "%s (paged vs contiguous)", what);
		for (int64_t i = 0; i < nout; i++)
			contiguous_result[i] = got[i];
		conf_check_within(paged_what, got_paged, contiguous_result, tol, (size_t)nout);
		conf_free(&paged.k);
		conf_free(&paged.v);
		conf_free(&paged.table);
		free(table);
		free(contiguous_result);
	}

	conf_free(&qt);
	if (mask)
		conf_free(&mt);
	free(q);
	free(k);
	free(v);
	free(mask);
	free(got);
	free(got_paged);
	free(want);
	free(tol);
}

static void attention_cases(size_t from, size_t to)
{
	conf_begin("attention");
	for (size_t i = from; i < to; i++)
		attention_one(&attn_cases[i]);
	conf_covered("attention");
}

static void attention_small(void **state)
{
	(void)state;
	attention_cases(0, 2);
}

static void attention_long_f16(void **state)
{
	(void)state;
	attention_cases(2, 3);
}

static void attention_paged_causal(void **state)
{
	(void)state;
	attention_cases(3, 5);
}

static void attention_sees_nothing(void **state)
{
	(void)state;
	attention_cases(5, 6);
}

static void attention_long_paged(void **state)
{
	(void)state;
	attention_cases(6, 7);
}

static void attention_masks_and_views(void **state)
{
	(void)state;
	attention_cases(7, 12);
}

static void attention_decode_shapes(void **state)
{
	(void)state;
	attention_cases(12, sizeof(attn_cases) / sizeof(attn_cases[0]));
}

/* A block id outside [0, nblk) among the pages kv_len uses: GLLMK_E_BOUNDS,
 * from the call or (a GPU plugin whose table sits in device memory) the next
 * sync. */
static void attention_block_out_of_range(void **state)
{
	static const int32_t bad_ids[] = { 4, -1, INT32_MAX };
	int64_t nblk = 4, q_shape[3] = { 1, 2, 64 }, kv_shape[4] = { nblk, PAGE, 1, 64 }, npages = 3;
	struct conf_rng r;
	float *q = conf_xmalloc(sizeof(float) * 128);
	float *kv = conf_xmalloc(sizeof(float) * (size_t)(nblk * PAGE * 64));

	(void)state;
	conf_begin("attention");
	conf_rng_init(&r, "attention block id out of range");
	conf_fill_uniform(&r, q, 128, -1.0, 1.0);
	conf_fill_uniform(&r, kv, (size_t)(nblk * PAGE * 64), -1.0, 1.0);

	struct conf_tensor qt = conf_upload(GLLMK_F32, 3, q_shape, q);
	struct conf_tensor kt = conf_upload(GLLMK_F32, 4, kv_shape, kv);
	struct conf_tensor vt = conf_upload(GLLMK_F32, 4, kv_shape, kv);
	struct conf_tensor out = conf_output(GLLMK_F32, 3, q_shape);

	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		int32_t table[3] = { 2, 0, 1 };
		gllmk_attention_params p = { .kv_len = 33 }; /* three pages: the last one is used */

		table[2 - i] = bad_ids[i]; /* the last page first, then the earlier ones */
		struct conf_tensor tt = conf_upload(GLLMK_I32, 1, &npages, table);
		gllmk_status st = gllmk_attention(conf.ctx, &out.t, &qt.t, &kt.t, &vt.t, NULL, &tt.t, &p);

		if (st == GLLMK_OK) /* a GPU plugin that checks the table on the device */
			st = gllmk_sync(conf.ctx);
		conf_free(&tt);
		if (st != GLLMK_E_BOUNDS)
			conf_fail("attention block_table[%zu] = %d (nblk %lld): got %s (%s), want GLLMK_E_BOUNDS",
				  2 - i, bad_ids[i], (long long)nblk, gllmk_status_string(st), gllmk_last_error());
	}
	conf_free(&qt);
	conf_free(&kt);
	conf_free(&vt);
	conf_free(&out);
	free(q);
	free(kv);
	conf_covered("attention");
}

CONF_GROUP(attention) = {
	cmocka_unit_test(attention_small),
	cmocka_unit_test(attention_long_f16),
	cmocka_unit_test(attention_paged_causal),
	cmocka_unit_test(attention_sees_nothing),
	cmocka_unit_test(attention_long_paged),
	cmocka_unit_test(attention_masks_and_views),
	cmocka_unit_test(attention_decode_shapes),
	cmocka_unit_test(attention_block_out_of_range),
};
CONF_GROUP_END(attention);
