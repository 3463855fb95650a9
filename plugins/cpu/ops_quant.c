/* dequantize, quantize, convert and get_rows: row codecs from the kernel
 * table applied row by row, threaded over (row, segment) so that one long
 * row is shared out too. Segments are whole blocks.
 */
#include <string.h>

#include "cpu_plugin.h"
#include "cpu_view.h"
#include "prepared.h"
#include "quant_blocks.h"

#define SEGMENT 16384           /* elements per work item; a multiple of QK_K */
#define CONVERT_CHUNK 1024      /* f16 <-> bf16 go through f32 on the stack */

enum codec_kind {
	CODEC_COPY,             /* same dtype */
	CODEC_DECODE,           /* y f32 = dequant_row[x](x) */
	CODEC_ENCODE,           /* y = quant_row[y](x f32) */
	CODEC_HALF_TO_HALF,     /* f16 <-> bf16 through f32 */
};

struct codec_job {
	const struct cpu_cntx *k;
	const gllmk_tensor *y, *x;
	enum codec_kind kind;
	int64_t len, segments;  /* per row */
};

/* Elements [e0, e0 + len) of row r of a prepared tensor t (len up to
 * SEGMENT) decoded to f32: its group's part back to plain blocks, then the
 * row codec. */
static void decode_prepared(const struct cpu_cntx *k, const gllmk_tensor *t, int64_t r, int64_t e0, int64_t len,
			    float *y)
{
	_Alignas(64) char plain[CPU_PREPARED_PLAIN_BYTES(SEGMENT)];

	cpu_prepared_unpack(t->buf->layout, gllmk_tensor_host(t), t->stride[t->ndim - 2], r, 1, e0, len, plain);
	k->dequant_row[t->dtype](plain, y, len);
}

static void half_to_half(const struct cpu_cntx *k, int32_t yt, void *y, int32_t xt, const void *x, int64_t n)
{
	float buf[CONVERT_CHUNK];

	for (int64_t i = 0; i < n; i += CONVERT_CHUNK) {
		const int64_t len = n - i < CONVERT_CHUNK ? n - i : CONVERT_CHUNK;

		k->dequant_row[xt]((const uint16_t *)x + i, buf, len);
		k->quant_row[yt](buf, (uint16_t *)y + i, len);
	}
}

static void codec_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct codec_job *j = arg;
	const int32_t xt = j->x->dtype, yt = j->y->dtype;

	(void)tid;
	for (int64_t it = begin; it < end; it++) {
		const int64_t r = it / j->segments, e0 = it % j->segments * SEGMENT;
		const int64_t len = j->len - e0 < SEGMENT ? j->len - e0 : SEGMENT;
		const char *x = (const char *)cpu_row(j->x, r) + cpu_row_bytes(xt, e0);
		char *y = (char *)cpu_row(j->y, r) + cpu_row_bytes(yt, e0);

		switch (j->kind) {
		case CODEC_COPY:
			memmove(y, x, (size_t)cpu_row_bytes(xt, len));
			break;
		case CODEC_DECODE:
			if (j->x->buf->layout)
				decode_prepared(j->k, j->x, r, e0, len, (float *)y);
			else
				j->k->dequant_row[xt](x, (float *)y, len);
			break;
		case CODEC_ENCODE:
			j->k->quant_row[yt]((const float *)x, y, len);
			break;
		case CODEC_HALF_TO_HALF:
			half_to_half(j->k, yt, y, xt, x, len);
			break;
		}
	}
}

static void run_codec(struct cpu_state *s, gllmk_t y, gllmk_t x, enum codec_kind kind)
{
	struct codec_job j = {
		.k = s->k,
		.y = y,
		.x = x,
		.kind = kind,
		.len = cpu_row_len(x),
	};

	j.segments = (j.len + SEGMENT - 1) / SEGMENT;
	cpu_pool_run(s->pool, cpu_rows(x) * j.segments, 1, codec_task, &j);
}

gllmk_status cpu_dequantize(void *st, gllmk_t y, gllmk_t x)
{
	run_codec(st, y, x, CODEC_DECODE);
	return GLLMK_OK;
}

gllmk_status cpu_quantize(void *st, gllmk_t y, gllmk_t x)
{
	run_codec(st, y, x, CODEC_ENCODE);
	return GLLMK_OK;
}

/* Same dtype: a copy (nothing to do in place). f32 on one side: one codec.
 * f16 <-> bf16: through f32, which is exact for the widening and rounds
 * once for the narrowing. */
gllmk_status cpu_convert(void *st, gllmk_t y, gllmk_t x)
{
	if (x->dtype == y->dtype) {
		if (gllmk_tensor_host(x) == gllmk_tensor_host(y) && x->stride[0] == y->stride[0])
			return GLLMK_OK;
		run_codec(st, y, x, CODEC_COPY);
		return GLLMK_OK;
	}
	if (y->dtype == GLLMK_F32)
		run_codec(st, y, x, CODEC_DECODE);
	else if (x->dtype == GLLMK_F32)
		run_codec(st, y, x, CODEC_ENCODE);
	else
		run_codec(st, y, x, CODEC_HALF_TO_HALF);
	return GLLMK_OK;
}

/* ------------------------------------------------------------ get_rows */

struct get_rows_job {
	const struct cpu_cntx *k;
	const gllmk_tensor *y, *table;
	const gllmk_tensor *ids;
	int64_t len;
};

/* Element i of the ids, counted over all of its rows. */
static int32_t id_at(const gllmk_tensor *ids, int64_t i)
{
	const int64_t len = cpu_row_len(ids);

	return ((const int32_t *)cpu_row(ids, i / len))[i % len];
}

static void get_rows_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct get_rows_job *j = arg;
	const cpu_dequant_row_fn decode = j->k->dequant_row[j->table->dtype];

	(void)tid;
	for (int64_t i = begin; i < end; i++) {
		if (!j->table->buf->layout) {
			decode(cpu_row(j->table, id_at(j->ids, i)), cpu_row(j->y, i), j->len);
			continue;
		}
		for (int64_t e0 = 0; e0 < j->len; e0 += SEGMENT)
			decode_prepared(j->k, j->table, id_at(j->ids, i), e0,
					j->len - e0 < SEGMENT ? j->len - e0 : SEGMENT, (float *)cpu_row(j->y, i) + e0);
	}
}

gllmk_status cpu_get_rows(void *st, gllmk_t y, gllmk_t table, gllmk_t ids)
{
	struct cpu_state *s = st;
	const int64_t n = cpu_rows(ids) * cpu_row_len(ids);
	const int64_t rows = cpu_rows(table);
	struct get_rows_job j = {
		.k = s->k,
		.y = y,
		.table = table,
		.ids = ids,
		.len = cpu_row_len(table),
	};

	for (int64_t i = 0; i < n; i++) {
		const int32_t id = id_at(ids, i);

		if (id < 0 || id >= rows)
			return s->host->set_error(GLLMK_E_BOUNDS,
						  "gllmk_get_rows: ids[%lld] = %d outside the table's %lld rows",
						  (long long)i, id, (long long)rows);
	}
	cpu_pool_run(s->pool, n, 1 + SEGMENT / j.len, get_rows_task, &j);
	return GLLMK_OK;
}
