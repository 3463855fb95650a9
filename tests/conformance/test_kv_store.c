/* kv_store (SPEC/OPERATORS.md "kv_store"): rows of x scattered into
 * contiguous and paged caches of every cache dtype, bit for bit as the
 * test's own encoders write them (f16/bf16 rounding from ref_half, ggml's
 * q8_0 and q4_0 reference encoders); -1 slots skip their row; every row not
 * named keeps its poison, so a stray write shows; padded (strided) cache
 * rows keep their padding; a slot outside the cache is GLLMK_E_BOUNDS naming
 * the row, with nothing written. Tokens 1, 7, 33 and 4097.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_half.h"
#include "ref_quant.h"

struct kv_case {
	gllmk_dtype dt;
	int64_t t, hkv, d;
	int64_t nblk, page; /* paged [nblk, page, Hkv, D]; page 0: contiguous [nblk, Hkv, D] */
	int64_t row_pad;    /* bytes between cache rows beyond their length */
	int skip_every;     /* every n-th token gets slot -1 (0: none) */
};

/* ggml's quantize_row_q4_0_ref, written for the test: the element of largest
 * |x| (the first on ties) becomes -8, d = max / -8 stored as f16,
 * q = min(15, (int8)(x/d + 8.5)), element j in the low nibble of byte j,
 * element j + 16 in its high nibble. */
static void test_quantize_q4_0(const float *x, uint8_t *dst, int64_t n)
{
	for (int64_t b = 0; b < n / 32; b++, x += 32, dst += 18) {
		float amax = 0.0f, max = 0.0f;

		for (int j = 0; j < 32; j++)
			if (fabsf(x[j]) > amax) {
				amax = fabsf(x[j]);
				max = x[j];
			}
		float d = max / -8, id = d != 0.0f ? 1.0f / d : 0.0f;
		uint16_t h = ref_f16_bits(d);

		memcpy(dst, &h, 2);
		for (int j = 0; j < 16; j++) {
			float v0 = x[j] * id, v1 = x[16 + j] * id;
			int q0 = (int8_t)(v0 + 8.5f), q1 = (int8_t)(v1 + 8.5f);

			dst[2 + j] = (uint8_t)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
		}
	}
}

/* One row of D f32 in the cache's encoding. */
static void encode_row(gllmk_dtype dt, const float *x, uint8_t *dst, int64_t d)
{
	for (int64_t i = 0; dt == GLLMK_F32 && i < d; i++)
		memcpy(dst + 4 * i, &x[i], 4);
	for (int64_t i = 0; (dt == GLLMK_F16 || dt == GLLMK_BF16) && i < d; i++) {
		uint16_t h = dt == GLLMK_F16 ? ref_f16_bits(x[i]) : ref_bf16_bits(x[i]);

		memcpy(dst + 2 * i, &h, 2);
	}
	if (dt == GLLMK_Q8_0)
		ref_quantize_q8_0(x, dst, d);
	if (dt == GLLMK_Q4_0)
		test_quantize_q4_0(x, dst, d);
}

/* Distinct slots in random order (a partial permutation of the cache), with
 * every skip_every-th token -1. */
static void make_slots(struct conf_rng *rng, const struct kv_case *c, int64_t cap, int32_t *slots)
{
	int32_t *perm = conf_xmalloc((size_t)cap * sizeof(int32_t));

	for (int64_t i = 0; i < cap; i++)
		perm[i] = (int32_t)i;
	for (int64_t i = 0; i < c->t; i++) {
		int64_t j = conf_rng_int(rng, i, cap - 1);
		int32_t v = perm[j];

		perm[j] = perm[i];
		perm[i] = v;
		slots[i] = c->skip_every && i % c->skip_every == 1 ? -1 : v;
	}
	free(perm);
}

static void kv_case_run(struct conf_rng *rng, const struct kv_case *c)
{
	int paged = c->page > 0;
	int64_t cap = c->nblk * (paged ? c->page : 1);
	int64_t xshape[3] = { c->t, c->hkv, c->d };
	int64_t cshape[4] = { c->nblk, c->page, c->hkv, c->d };
	int64_t cdims[3] = { c->nblk, c->hkv, c->d };
	int32_t nd = paged ? 4 : 3;
	size_t row_bytes = ref_row_bytes(c->dt, c->d), cache_bytes = (size_t)(cap * c->hkv) * row_bytes;
	float *x = conf_xmalloc((size_t)(c->t * c->hkv * c->d) * sizeof(float));
	int32_t *slots = conf_xmalloc((size_t)c->t * sizeof(int32_t));
	uint8_t *want = conf_xmalloc(cache_bytes), *got = conf_xmalloc(cache_bytes);
	struct conf_tensor tx, ts, tc;
	char what[200];

	conf_fill_uniform(rng, x, (size_t)(c->t * c->hkv * c->d), -3, 3);
	for (int64_t i = 0; i < c->t * c->hkv * c->d; i += 61) /* exact zeros and ties of the q4_0 scale */
		x[i] = i % 2 ? 0.0f : -x[i];
	make_slots(rng, c, cap, slots);
	tx = conf_upload(GLLMK_F32, 3, xshape, x);
	ts = conf_upload(GLLMK_I32, 1, xshape, slots);
	tc = c->row_pad ? conf_output_padded(c->dt, nd, paged ? cshape : cdims, c->row_pad)
			: conf_output(c->dt, nd, paged ? cshape : cdims);
	conf_download(&tc, want); /* the poison: rows no slot names keep it */
	for (int64_t t = 0; t < c->t; t++)
		for (int64_t h = 0; slots[t] >= 0 && h < c->hkv; h++)
			encode_row(c->dt, x + (t * c->hkv + h) * c->d, want + ((size_t)slots[t] * c->hkv + h) * row_bytes,
				   c->d);
	conf_ok(gllmk_kv_store(conf.ctx, &tc.t, &tx.t, &ts.t));
	conf_download(&tc, got);
	snprintf(what, sizeof(what), "kv_store %s %s [%lld,%lld,%lld] into %lld slots%s%s", ref_dtype_name(c->dt),
		 paged ? "paged" : "contiguous", (long long)c->t, (long long)c->hkv, (long long)c->d, (long long)cap,
		 c->row_pad ? " padded rows" : "", c->skip_every ? " with -1 slots" : "");
	conf_check_equal_bytes(what, got, want, cache_bytes);
	if (c->row_pad)
		conf_check_padding(&tc);
	conf_free(&tx);
	conf_free(&ts);
	conf_free(&tc);
	free(x);
	free(slots);
	free(want);
	free(got);
}

/* A slot past the cache (or below -1) is GLLMK_E_BOUNDS naming its row.
 * Checked where the call is recorded, the call returns it and writes
 * nothing, not even the good rows before it. A GPU plugin checks slots it
 * cannot read without waiting on the device (in device memory, or made by
 * a pending op: by_copy, a device copy, runs that path on lavapipe): it
 * skips the bad row and the next sync returns the error; no slot outside
 * {3, 7, 0} is written either way. */
static void kv_bounds(struct conf_rng *rng, gllmk_dtype dt, int paged, int32_t bad, int by_copy)
{
	int64_t xshape[3] = { 5, 2, 32 }, cshape[4] = { 3, 4, 2, 32 }, cdims[3] = { 12, 2, 32 };
	int64_t cap = 12;
	size_t row = 2 * ref_row_bytes(dt, 32), bytes = (size_t)cap * row;
	float x[5 * 2 * 32];
	int32_t slots[5] = { 3, -1, 7, bad, 0 };
	uint8_t *before = conf_xmalloc(bytes), *after = conf_xmalloc(bytes);
	struct conf_tensor tx, ts, tsrc = { 0 }, tc;
	gllmk_status st;
	int deferred;
	char what[160];

	conf_fill_uniform(rng, x, sizeof(x) / sizeof(x[0]), -1, 1);
	tx = conf_upload(GLLMK_F32, 3, xshape, x);
	tc = conf_output(dt, paged ? 4 : 3, paged ? cshape : cdims);
	conf_download(&tc, before); /* a read waits for every op: before the slots' copy */
	ts = by_copy ? conf_upload_by_copy(GLLMK_I32, 1, xshape, slots, &tsrc) : conf_upload(GLLMK_I32, 1, xshape, slots);
	st = gllmk_kv_store(conf.ctx, &tc.t, &tx.t, &ts.t);
	deferred = st == GLLMK_OK;
	if (deferred)
		st = gllmk_sync(conf.ctx);
	if (st != GLLMK_E_BOUNDS || !strstr(gllmk_last_error(), "slots[3]"))
		fail_msg("kv_store %s slot %d%s: want GLLMK_E_BOUNDS naming slots[3], got %s (%s)", ref_dtype_name(dt), bad,
			 by_copy ? " (slots by a device copy)" : "", gllmk_status_string(st),
			 st == GLLMK_OK ? "" : gllmk_last_error());
	conf_ok(gllmk_sync(conf.ctx));
	conf_download(&tc, after);
	snprintf(what, sizeof(what), "kv_store %s slot %d%s: nothing written", ref_dtype_name(dt), bad,
		 by_copy ? " (slots by a device copy)" : "");
	if (!deferred) {
		conf_check_equal_bytes(what, after, before, bytes);
	} else {
		/* the good rows' slots may hold their rows; every other one is untouched */
		for (int64_t sl = 0; sl < cap; sl++)
			if (sl != 3 && sl != 7 && sl != 0)
				conf_check_equal_bytes(what, after + (size_t)sl * row, before + (size_t)sl * row, row);
	}
	conf_free(&tx);
	conf_free(&ts);
	if (by_copy)
		conf_free(&tsrc);
	conf_free(&tc);
	free(before);
	free(after);
}
static const gllmk_dtype kv_dtypes[] = { GLLMK_F32, GLLMK_F16, GLLMK_BF16, GLLMK_Q8_0, GLLMK_Q4_0 };

static void test_kv_store(void **state)
{
	struct conf_rng rng;

	(void)state;
	conf_begin("kv_store");
	conf_rng_init(&rng, "kv_store");
	for (size_t i = 0; i < sizeof(kv_dtypes) / sizeof(kv_dtypes[0]); i++) {
		gllmk_dtype dt = kv_dtypes[i];
		int block = dt == GLLMK_Q8_0 || dt == GLLMK_Q4_0;
		const struct kv_case cases[] = {
			/* dt, t, hkv, d, nblk, page, row_pad, skip_every */
			{ dt, 1, 8, 128, 40, 0, 0, 0 },      /* decode, contiguous */
			{ dt, 1, 2, 64, 6, 16, 0, 0 },       /* decode, paged */
			{ dt, 7, 4, 128, 5, 16, 0, 3 },
			{ dt, 33, 2, 64, 50, 0, 0, 4 },
			{ dt, 33, 3, 96, 4, 32, 12, 0 },     /* paged, padded rows */
			{ dt, 7, 1, 32, 9, 0, 4, 2 },        /* contiguous, padded rows: odd 18/34-byte rows */
			{ dt, 7, 3, block ? 32 : 7, 3, 5, 0, 0 }, /* odd heads, odd page; odd D for floats */
			{ dt, 4097, 1, 32, 5000, 0, 0, 5 },  /* long prefill */
		};

		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			if (conf.quick && cases[k].t > 1000)
				continue;
			kv_case_run(&rng, &cases[k]);
		}
		kv_bounds(&rng, dt, 0, 12, 0);
		kv_bounds(&rng, dt, 1, 12, 0);
		kv_bounds(&rng, dt, 1, -2, 0);
		kv_bounds(&rng, dt, 0, 12, 1);
		kv_bounds(&rng, dt, 1, -2, 1);
	}
	conf_covered("kv_store");
}

CONF_GROUP(kv_store) = {
	cmocka_unit_test(test_kv_store),
};
CONF_GROUP_END(kv_store);
