/* The GEMM's packing (sgemm.c's loop nest): A blocks into mr-row panels,
 * B blocks into nr-column panels, decoding B on the way when it is a
 * quantized weight matrix (matmul at large M: the only place weights are
 * decoded for the GEMM). */
#include <stdint.h>
#include <string.h>

#include "gemm/sgemm_internal.h"
#include "prepared.h"
#include "quant_blocks.h"

typedef float v4f __attribute__((vector_size(16)));

static v4f load4(const float *p)
{
	v4f v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void store4(float *p, v4f v)
{
	memcpy(p, &v, sizeof(v));
}

/* Rows [0, 4) × depths [0, 4) of a row-major A (row stride rs) into a
 * panel (depth stride mr): a 4×4 transpose in registers, written with
 * gcc's generic vectors so SSE2 and NEON both get shuffles. Element by
 * element, packing a row-major A was 3-4 % of a 4096³ GEMM. */
static void transpose4(float *d, int64_t mr, const float *s, int64_t rs)
{
	const v4f r0 = load4(s), r1 = load4(s + rs), r2 = load4(s + 2 * rs), r3 = load4(s + 3 * rs);
	const v4f t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5), t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
	const v4f t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5), t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);

	store4(d, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
	store4(d + mr, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
	store4(d + 2 * mr, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
	store4(d + 3 * mr, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
}

/* rows × kc of a matrix X (X(ii, p) at src[ii·rs + p·cs]) into one panel
 * ([p·mr + ii], mr: the panel's width): an A panel, or a B panel of
 * transposed B (ii then runs over B's columns). The caller zeroes the
 * rows past rows. */
static void pack_panel(const float *src, int64_t rs, int64_t cs, int64_t rows, int64_t kc, int64_t mr, float *dst)
{
	int64_t p = 0;

	if (cs == 1) {          /* X's rows contiguous: transpose 4×4 tiles */
		for (; p + 4 <= kc; p += 4) {
			int64_t ii = 0;

			for (; ii + 4 <= rows; ii += 4)
				transpose4(dst + p * mr + ii, mr, src + ii * rs + p, rs);
			for (; ii < rows; ii++)
				for (int64_t q = 0; q < 4; q++)
					dst[(p + q) * mr + ii] = src[ii * rs + p + q];
		}
	}
	for (; p < kc; p++) {   /* X's columns contiguous (copies), the rest */
		float *d = dst + p * mr;
		const float *s = src + p * cs;

		for (int64_t ii = 0; ii < rows; ii++)
			d[ii] = s[ii * rs];
	}
}

/* A[i0.., p0..] (mc×kc) into mr-row panels: panel r holds A(i0 + r·mr + ii, p0 + p)
 * at [p·mr + ii], rows past mc zero. */
void sgemm_pack_a(const struct cpu_sgemm *g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t mr,
		   float *dst)
{
	for (int64_t ir = 0; ir < mc; ir += mr, dst += mr * kc) {
		const int64_t rows = min64(mc - ir, mr);

		pack_panel(g->a + (i0 + ir) * g->a_rs + p0 * g->a_cs, g->a_rs, g->a_cs, rows, kc, mr, dst);
		for (int64_t p = 0; rows < mr && p < kc; p++)
			for (int64_t ii = rows; ii < mr; ii++)
				dst[p * mr + ii] = 0.0f;
	}
}

/* The first `bytes` of weight rows w, w + row_bytes, ... (rows of them)
 * into the caches: the rows pack_b_decoded decodes next, fetched while it
 * decodes the current ones. A GEMM call reads each weight once, from DRAM,
 * and without it the decoder waited on every row's first lines (f16 pp512
 * on Zen 4: 5.5 % of the time in the f16 decoder, 2.8 % with it; the int8
 * GEMM's packers measured 4 % slower with the same prefetch, so they have
 * none). */
static void prefetch_rows(const char *w, int64_t row_bytes, int64_t rows, int64_t bytes)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t o = 0; o < bytes; o += 64)
			__builtin_prefetch(w + r * row_bytes + o, 0, 3);
}

/* Columns [j0, j0 + cols) of a weight matrix B (B(p, j) is row j's
 * element p), decoded 4 rows at a time and transposed into the panel in
 * 4×4 tiles: decoding a row and scattering it element by element took
 * 5 % of an f16 model's prefill (perf, pp512 on Zen 4), as much as the
 * decoding itself. The ISA's packer (b_pack), where the table has one for
 * the dtype, takes the whole groups of 8 rows in one pass instead. */
static void pack_b_decoded(const struct cpu_sgemm *g, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
			   float *dst)
{
	const char *b = (const char *)g->b + j0 * g->b_row_bytes + cpu_row_bytes(g->b_dtype, p0);
	const int64_t kc_bytes = cpu_row_bytes(g->b_dtype, kc);
	float rows[4][KC_MAX];
	_Alignas(64) char plain[4 * CPU_PREPARED_PLAIN_BYTES(KC_MAX)];
	int64_t jj = 0;

	if (g->b_pack && !g->b_layout) {
		jj = cols / 8 * 8;
		g->b_pack(b, g->b_row_bytes, jj, kc, nr, dst);
	}
	for (; jj < cols; jj += 4) {
		const int64_t n = min64(cols - jj, 4), next = min64(g->n - (j0 + jj + 4), 4);

		if (g->b_layout) /* the 4 rows' part of their group, back to plain rows */
			cpu_prepared_unpack(g->b_layout, g->b, g->b_row_bytes, j0 + jj, n, p0, kc, plain);
		else
			prefetch_rows(b + (jj + 4) * g->b_row_bytes, g->b_row_bytes, next, kc_bytes);
		for (int64_t r = 0; r < n; r++)
			g->b_dequant(g->b_layout ? plain + r * kc_bytes : b + (jj + r) * g->b_row_bytes, rows[r], kc);
		pack_panel(rows[0], KC_MAX, 1, n, kc, nr, dst + jj);
	}
}

/* One nr-panel of B when B is decoded or transposed: B(p0 + p, j0 + jj)
 * at [p·nr + jj], columns past cols zero. */
static void pack_b_panel(const struct cpu_sgemm *g, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
			 float *dst)
{
	if (g->b_dequant)
		pack_b_decoded(g, p0, kc, j0, cols, nr, dst);
	else
		pack_panel((const float *)g->b + j0 * g->b_cs + p0 * g->b_rs, g->b_cs, g->b_rs, cols, kc, nr, dst);
	for (int64_t p = 0; cols < nr && p < kc; p++)
		for (int64_t jj = cols; jj < nr; jj++)
			dst[p * nr + jj] = 0.0f;
}

/* The B block [p0, p0 + kc) × [j0, j0 + nc) into nr-panels (panel jr/nr
 * at dst + jr·kc). A row-major B is read row by row, each row of the
 * block once and contiguously, and scattered over the panels: panel by
 * panel, every 128-byte piece was a separate DRAM latency (rows ldb
 * apart), about 2 % of a 4096³ GEMM. */
void sgemm_pack_b(const struct cpu_sgemm *g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr, float *dst)
{
	if (g->b_dequant || g->b_cs != 1) {
		for (int64_t jr = 0; jr < nc; jr += nr)
			pack_b_panel(g, p0, kc, j0 + jr, min64(nc - jr, nr), nr, dst + jr * kc);
		return;
	}
	for (int64_t p = 0; p < kc; p++) {
		const float *src = (const float *)g->b + (p0 + p) * g->b_rs + j0;

		for (int64_t jr = 0; jr < nc; jr += nr) {
			const int64_t cols = min64(nc - jr, nr);
			float *d = dst + jr * kc + p * nr;

			for (int64_t jj = 0; jj < cols; jj++)
				d[jj] = src[jr + jj];
			for (int64_t jj = cols; jj < nr; jj++)
				d[jj] = 0.0f;
		}
	}
}

/* One nr-panel of bf16 pairs: word p0 + p of weight rows j0.. (depths
 * 2(p0 + p) and the next) at [p·nr + jj]. Rows whose words are 4-byte
 * aligned go through pack_panel's 4×4 transposes, as f32 weights do: a
 * word is moved, never read as a number. An odd K's last word (its high
 * half 0) and rows on a 2-byte boundary are assembled a word at a time. */
static void pack_b_pairs_panel(const struct cpu_sgemm *g, int64_t k_elems, int64_t p0, int64_t kc, int64_t j0,
			       int64_t cols, int64_t nr, float *dst)
{
	const char *b = (const char *)g->b + j0 * g->b_row_bytes + 4 * p0;
	int64_t p = 0;

	if (((uintptr_t)b | (uintptr_t)g->b_row_bytes) % 4 == 0) {
		p = min64(kc, k_elems / 2 - p0);
		pack_panel((const float *)b, g->b_row_bytes / 4, 1, cols, p, nr, dst);
	}
	for (; p < kc; p++) {
		for (int64_t jj = 0; jj < cols; jj++) {
			const char *e = b + jj * g->b_row_bytes + 4 * p;
			uint16_t half[2] = { 0, 0 };

			memcpy(&half[0], e, 2);
			if (2 * (p0 + p) + 1 < k_elems)
				memcpy(&half[1], e + 2, 2);
			memcpy(dst + p * nr + jj, half, 4);
		}
	}
	for (p = 0; cols < nr && p < kc; p++)
		for (int64_t jj = cols; jj < nr; jj++)
			dst[p * nr + jj] = 0.0f;
}

void sgemm_pack_b_pairs(const struct cpu_sgemm *g, int64_t k_elems, int64_t p0, int64_t kc, int64_t j0,
			int64_t nc, int64_t nr, float *dst)
{
	for (int64_t jr = 0; jr < nc; jr += nr)
		pack_b_pairs_panel(g, k_elems, p0, kc, j0 + jr, min64(nc - jr, nr), nr, dst + jr * kc);
}
