/* Compatibility with ggml's own CPU code, from the vectors in
 * <vectors>/ggml/<type>.bin (layout: ../shared/vectors/README.md). One
 * cmocka test per format; with no vectors folder each one is SKIPPED,
 * never passed.
 *
 * For every format:
 *  - gllmk_dequantize of ggml's blocks equals ggml's dequantization, exactly
 *    or within 1 ulp (and so does this suite's own decoder, which keeps the
 *    reference honest);
 *  - gllmk_matmul(x, blocks) against the float64 column (the exact product
 *    of the dequantized weights and x): norm-wise error <= 1e-2 for block
 *    formats, 1e-3 for f16/bf16, and never worse than 3× ggml's own error
 *    against that column; against ggml's mul_mat (which quantizes x to 8
 *    bits, and rounds x to f16/bf16): within 2× ggml's own error, the
 *    distance a plugin that does not quantize x (≈ 1×) or quantizes it
 *    another way (≈ √2×) lands at; and every element within ref_matmul's
 *    bound of the float64 product;
 *  - q8_0 only: gllmk_quantize of the source weights reproduces ggml's
 *    blocks bit for bit (ref_compare_q8's near-tie rule aside).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_extra.h"
#include "ref_quant.h"

#define VECTORS_MAGIC 0x564B4C47u /* "GLKV" */

struct vectors {
	uint32_t k, n, m, block_elems, block_bytes;
	float *src;      /* [n, k] source weights */
	uint8_t *blocks; /* [n, k/block × bytes] ggml's quantized rows */
	float *deq;      /* [n, k] ggml's dequantization */
	float *x;        /* [m, k] */
	float *y_ggml;   /* [m, n] ggml's mul_mat */
	double *y64;     /* [m, n] float64 product of deq and x */
};

static uint8_t *read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		data = conf_xmalloc((size_t)len);
		if (fread(data, 1, (size_t)len, f) != (size_t)len) {
			free(data);
			data = NULL;
		}
		*size = (size_t)len;
	}
	fclose(f);
	return data;
}

/* Copies the next `bytes` of the file into a fresh allocation (the file's
 * sections are not aligned for their types). */
static void *take(const uint8_t *file, size_t *at, size_t bytes)
{
	void *p = conf_xmalloc(bytes);

	memcpy(p, file + *at, bytes);
	*at += bytes;
	return p;
}

static void load_vectors(const char *type, gllmk_dtype dt, struct vectors *v)
{
	char path[1024];
	size_t size = 0, at = 44;
	uint32_t head[11];
	uint8_t *file;

	snprintf(path, sizeof(path), "%s/ggml/%s.bin", conf.vectors_dir, type);
	file = read_whole(path, &size);
	if (!file)
		conf_fail("ggml vectors %s: cannot read %s", type, path);
	if (size < 44)
		conf_fail("ggml vectors %s: %s is %zu bytes, shorter than its header", type, path, size);
	memcpy(head, file, sizeof(head));
	if (head[0] != VECTORS_MAGIC || head[1] != 1 || strncmp((const char *)file + 8, type, 16) != 0)
		conf_fail("ggml vectors %s: %s has magic 0x%08x version %u type '%.16s'", type, path, head[0],
			  head[1], (const char *)file + 8);
	v->k = head[6];
	v->n = head[7];
	v->m = head[8];
	v->block_elems = head[9];
	v->block_bytes = head[10];
	if ((int64_t)v->block_elems != ref_block_elems(dt) || (int64_t)v->block_bytes != ref_block_bytes(dt) ||
	    v->k % v->block_elems)
		conf_fail("ggml vectors %s: blocks of %u elements / %u bytes, K = %u; gllmk's %s has %lld / %lld",
			  type, v->block_elems, v->block_bytes, v->k, ref_dtype_name(dt),
			  (long long)ref_block_elems(dt), (long long)ref_block_bytes(dt));

	size_t nk = (size_t)v->n * v->k, mk = (size_t)v->m * v->k, mn = (size_t)v->m * v->n;
	size_t qbytes = ref_row_bytes(dt, v->k) * v->n;

	if (size != 44 + 4 * nk + qbytes + 4 * nk + 4 * mk + 4 * mn + 8 * mn)
		conf_fail("ggml vectors %s: %s is %zu bytes, its header implies %zu", type, path, size,
			  44 + 8 * nk + qbytes + 4 * mk + 12 * mn);
	v->src = take(file, &at, 4 * nk);
	v->blocks = take(file, &at, qbytes);
	v->deq = take(file, &at, 4 * nk);
	v->x = take(file, &at, 4 * mk);
	v->y_ggml = take(file, &at, 4 * mn);
	v->y64 = take(file, &at, 8 * mn);
	free(file);
}

static void free_vectors(struct vectors *v)
{
	free(v->src);
	free(v->blocks);
	free(v->deq);
	free(v->x);
	free(v->y_ggml);
	free(v->y64);
}

static double rel_norm_error(const float *got, const double *want, size_t n)
{
	double err = 0.0, norm = 0.0;

	for (size_t i = 0; i < n; i++) {
		err += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
		norm += want[i] * want[i];
	}
	return sqrt(err / norm);
}

/* ------------------------------------------------------------- the checks */

static void check_dequantize(const char *type, gllmk_dtype dt, const struct vectors *v)
{
	size_t nk = (size_t)v->n * v->k;
	int64_t shape[2] = { v->n, v->k };
	double *want = conf_xmalloc(sizeof(double) * nk);
	double *tol = conf_xmalloc(sizeof(double) * nk);
	double *mine = conf_xmalloc(sizeof(double) * nk);
	float *got = conf_xmalloc(sizeof(float) * nk);
	char what[96];

	for (size_t i = 0; i < nk; i++)
		want[i] = v->deq[i];
	ref_ulp_tolerance(want, tol, nk);

	/* the suite's reference first: a wrong reference would blame plugins */
	ref_decode_row(dt, v->blocks, mine, (int64_t)nk);
	for (size_t i = 0; i < nk; i++)
		got[i] = (float)mine[i];
	snprintf(what, sizeof(what), "ggml %s: the suite's reference decoder vs ggml", type);
	conf_check_within(what, got, want, tol, nk);

	struct conf_tensor wt = conf_upload(dt, 2, shape, v->blocks);
	struct conf_tensor yt = conf_output(GLLMK_F32, 2, shape);

	conf_ok(gllmk_dequantize(conf.ctx, &yt.t, &wt.t));
	conf_download(&yt, got);
	snprintf(what, sizeof(what), "ggml %s: dequantize vs ggml's to_float", type);
	conf_check_within(what, got, want, tol, nk);
	conf_free(&wt);
	conf_free(&yt);
	free(want);
	free(tol);
	free(mine);
	free(got);
}

static void check_matmul(const char *type, gllmk_dtype dt, const struct vectors *v)
{
	size_t mn = (size_t)v->m * v->n;
	int64_t w_shape[2] = { v->n, v->k }, x_shape[2] = { v->m, v->k }, y_shape[2] = { v->m, v->n };
	double *y_ggml = conf_xmalloc(sizeof(double) * mn);
	double *want = conf_xmalloc(sizeof(double) * mn);
	double *bound = conf_xmalloc(sizeof(double) * mn);
	float *got = conf_xmalloc(sizeof(float) * mn);
	double tol64 = ref_dtype_is_block(dt) ? 1e-2 : 1e-3;
	char what[96];

	for (size_t i = 0; i < mn; i++)
		y_ggml[i] = v->y_ggml[i];
	ref_matmul(dt, v->blocks, ref_row_bytes(dt, v->k), v->n, v->k, v->x, v->m, NULL, want, bound);

	struct conf_tensor wt = conf_upload(dt, 2, w_shape, v->blocks);
	struct conf_tensor xt = conf_upload(GLLMK_F32, 2, x_shape, v->x);
	struct conf_tensor yt = conf_output(GLLMK_F32, 2, y_shape);

	conf_ok(gllmk_matmul(conf.ctx, &yt.t, &xt.t, &wt.t, NULL));
	conf_download(&yt, got);

	double ggml_err = rel_norm_error(v->y_ggml, v->y64, mn);
	double err64 = rel_norm_error(got, v->y64, mn);
	double err_vs_ggml = rel_norm_error(got, y_ggml, mn);
	double cap64 = fmin(tol64, fmax(3.0 * ggml_err, 1e-6));
	double cap_ggml = 2.0 * ggml_err + 1e-5;

	print_message("ggml %s: matmul error vs float64 %.3g (ggml's own %.3g, allowed %.3g), vs ggml's mul_mat "
		      "%.3g (allowed %.3g)\n",
		      type, err64, ggml_err, cap64, err_vs_ggml, cap_ggml);
	snprintf(what, sizeof(what), "ggml %s: matmul vs the float64 column", type);
	conf_check_within(what, got, v->y64, bound, mn);
	if (!(err64 <= cap64))
		conf_fail("ggml %s: matmul norm-wise error vs float64 %.3g > %.3g (min of %.0e and 3x ggml's %.3g)",
			  type, err64, cap64, tol64, ggml_err);
	if (!(err_vs_ggml <= cap_ggml))
		conf_fail("ggml %s: matmul differs from ggml's mul_mat by %.3g > %.3g (2x ggml's own error %.3g)",
			  type, err_vs_ggml, cap_ggml, ggml_err);
	conf_free(&wt);
	conf_free(&xt);
	conf_free(&yt);
	free(y_ggml);
	free(want);
	free(bound);
	free(got);
}

static void check_quantize_q8_0(const struct vectors *v)
{
	int64_t shape[2] = { v->n, v->k };
	size_t row_bytes = ref_row_bytes(GLLMK_Q8_0, v->k);
	uint8_t *got = conf_xmalloc(row_bytes * v->n);
	char msg[256];

	struct conf_tensor xt = conf_upload(GLLMK_F32, 2, shape, v->src);
	struct conf_tensor yt = conf_output(GLLMK_Q8_0, 2, shape);

	conf_ok(gllmk_quantize(conf.ctx, &yt.t, &xt.t));
	conf_download(&yt, got);
	for (uint32_t i = 0; i < v->n; i++) {
		if (ref_compare_q8(GLLMK_Q8_0, v->src + (size_t)i * v->k, got + i * row_bytes,
				   v->blocks + i * row_bytes, v->k, msg, sizeof(msg)))
			conf_fail("ggml q8_0: quantize row %u vs ggml's blocks: %s", i, msg);
	}
	conf_free(&xt);
	conf_free(&yt);
	free(got);
}

static void vectors_case(gllmk_dtype dt)
{
	const char *type = gllmk_dtype_name(dt);
	struct vectors v;

	if (!conf.vectors_dir) {
		print_message("ggml vectors %s: no vectors folder (--vectors): SKIPPED, not passed\n", type);
		skip();
		return;
	}
	load_vectors(type, dt, &v);
	conf_begin("dequantize");
	conf_begin("matmul");
	check_dequantize(type, dt, &v);
	check_matmul(type, dt, &v);
	if (dt == GLLMK_Q8_0) {
		conf_begin("quantize");
		check_quantize_q8_0(&v);
		conf_covered("quantize");
	}
	conf_covered("dequantize");
	conf_covered("matmul");
	free_vectors(&v);
}

/* The dtypes with ggml vectors: every weight dtype of abi/gllmk_dtypes.def
 * but f32 (no encoding to compare) and q8_K (ggml's activation format: no
 * ggml mul_mat takes it as weights). A listed dtype without its file fails. */
static int has_ggml_vectors(gllmk_dtype dt)
{
	return conf_weight_dtype(dt) && dt != GLLMK_F32 && dt != GLLMK_Q8_K;
}

CONF_GROUP(ggml_vectors) = {
	CONF_DTYPE_TESTS("ggml_vectors", vectors_case, has_ggml_vectors),
};
CONF_GROUP_END(ggml_vectors);
