/* libFuzzer target: every block decoder. Random blocks of one dtype (the
 * first input byte picks it) are dequantized by cpu-generic and by the CPU
 * plugin this machine selects; every output element must have the same bits
 * in both, or be non-finite in both (SPEC/TOLERANCES.md: decoding is exact;
 * NaN payloads and the sign of an infinity from a non-finite scale are not
 * specified). The rows also go through get_rows, the other decoding path.
 */
#include <math.h>

#include "fuzz_common.h"

/* The decoded dtypes: every weight dtype of abi/gllmk_dtypes.def but f32
 * (copied, not decoded), in the .def's order; filled by LLVMFuzzerInitialize. */
static const struct {
	gllmk_dtype dt;
	int weight;
} def_rows[] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) { e, weight },
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};
static gllmk_dtype dtypes[sizeof(def_rows) / sizeof(def_rows[0])];
static size_t n_dtypes;
#define MAX_ELEMS 4096

static gllmk_context *ctx[2];
static float out[2][2][MAX_ELEMS];

static void same_bits(gllmk_dtype dt, const char *path, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		float a = out[0][0][i], b = out[1][0][i];

		if (!isfinite(a) && !isfinite(b))
			continue;
		FUZZ_CHECK(!memcmp(&a, &b, 4), "%s %s element %lld: %s gives %a, %s gives %a", gllmk_dtype_name(dt),
			   path, (long long)i, gllmk_context_plugin(ctx[0]), a, gllmk_context_plugin(ctx[1]), b);
	}
}

/* Decodes `rows` rows of `cols` elements on context c, by dequantize into
 * out[c][0] and by get_rows (ids 0..rows-1) into out[c][1]. */
static void decode(int c, gllmk_dtype dt, const uint8_t *blocks, uint64_t bytes, int64_t rows, int64_t cols)
{
	int64_t shape[2] = {rows, cols};
	int32_t ids[MAX_ELEMS];
	gllmk_buffer *q, *y, *id;
	gllmk_tensor tq, ty, tid;
	uint64_t ybytes = (uint64_t)(rows * cols) * 4;

	for (int64_t r = 0; r < rows; r++)
		ids[r] = (int32_t)(rows - 1 - r);
	FUZZ_CHECK(gllmk_buffer_alloc(ctx[c], bytes, &q) == GLLMK_OK && gllmk_buffer_alloc(ctx[c], ybytes, &y) == GLLMK_OK &&
			   gllmk_buffer_alloc(ctx[c], (uint64_t)rows * 4, &id) == GLLMK_OK,
		   "buffer_alloc: %s", gllmk_last_error());
	FUZZ_CHECK(gllmk_buffer_write(q, 0, blocks, bytes) == GLLMK_OK && gllmk_buffer_write(id, 0, ids, (uint64_t)rows * 4) == GLLMK_OK,
		   "buffer_write: %s", gllmk_last_error());
	tq = gllmk_tensor_make(q, 0, dt, 2, shape);
	ty = gllmk_tensor_make(y, 0, GLLMK_F32, 2, shape);
	tid = gllmk_tensor_make(id, 0, GLLMK_I32, 1, shape);
	FUZZ_CHECK(gllmk_dequantize(ctx[c], &ty, &tq) == GLLMK_OK, "dequantize %s: %s", gllmk_dtype_name(dt),
		   gllmk_last_error());
	FUZZ_CHECK(gllmk_buffer_read(y, 0, out[c][0], ybytes) == GLLMK_OK, "read: %s", gllmk_last_error());
	FUZZ_CHECK(gllmk_get_rows(ctx[c], &ty, &tq, &tid) == GLLMK_OK, "get_rows %s: %s", gllmk_dtype_name(dt),
		   gllmk_last_error());
	FUZZ_CHECK(gllmk_buffer_read(y, 0, out[c][1], ybytes) == GLLMK_OK, "read: %s", gllmk_last_error());
	gllmk_buffer_free(q);
	gllmk_buffer_free(y);
	gllmk_buffer_free(id);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(def_rows) / sizeof(def_rows[0]); i++)
		if (def_rows[i].weight && def_rows[i].dt != GLLMK_F32)
			dtypes[n_dtypes++] = def_rows[i].dt;
	fuzz_contexts(ctx);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gllmk_dtype dt;
	int64_t be, bb, cols, rows, nblk;

	if (size < 2)
		return 0;
	dt = dtypes[data[0] % n_dtypes];
	be = gllmk_dtype_block_elems(dt);
	bb = gllmk_dtype_block_bytes(dt);
	nblk = (int64_t)(size - 2) / bb;
	if (be == 1) /* f16, bf16: a "block" is one element; rows of 32 */
		nblk -= nblk % 32;
	if (nblk == 0 || nblk * be > MAX_ELEMS)
		return 0;
	/* data[1] splits the blocks into rows (a row is a whole number of blocks) */
	cols = be * (be == 1 ? 32 : 1) * (1 + data[1] % 4);
	rows = nblk * be / cols;
	if (rows == 0)
		return 0;
	for (int c = 0; c < 2; c++)
		decode(c, dt, data + 2, (uint64_t)(rows * cols / be * bb), rows, cols);
	same_bits(dt, "dequantize", rows * cols);
	/* get_rows reversed the rows: compare each against the dequantized row */
	for (int c = 0; c < 2; c++)
		for (int64_t r = 0; r < rows; r++)
			for (int64_t i = 0; i < cols; i++) {
				float a = out[c][0][(rows - 1 - r) * cols + i], b = out[c][1][r * cols + i];

				FUZZ_CHECK((!isfinite(a) && !isfinite(b)) || !memcmp(&a, &b, 4),
					   "%s on %s: get_rows row %lld element %lld is %a, dequantize gave %a",
					   gllmk_dtype_name(dt), gllmk_context_plugin(ctx[c]), (long long)r, (long long)i, b, a);
			}
	return 0;
}
