/* Helpers of the ISA plugins' multi-row dots (cpu_matmul_kernel's
 * vec_dot_rows, contract in cpu_cntx.h): one always-inline body per
 * format over `rows` weight rows, `stride` bytes apart, against one
 * activation row, instantiated with rows = 1 (vec_dot) and rows = the
 * table's dot_rows (vec_dot_rows). Bodies keep per-row state in arrays
 * indexed by the row; FOR_ROWS unrolls those loops so that the arrays
 * live in registers.
 */
#ifndef GLLMK_CPU_DOT_KERNEL_H
#define GLLMK_CPU_DOT_KERNEL_H

#include <stdint.h>

#define DOT_ALWAYS_INLINE inline __attribute__((always_inline))
#define FOR_ROWS(r) _Pragma("GCC unroll 8") for (int r = 0; r < rows; r++)
/* The same over a tile's xrows activation rows (vec_dot_tile bodies). */
#define FOR_X_ROWS(t) _Pragma("GCC unroll 8") for (int t = 0; t < xrows; t++)

static DOT_ALWAYS_INLINE const void *dot_row_at(const void *w, int64_t stride, int r)
{
	return (const char *)w + r * stride;
}

/* Weights stream from DRAM once per matmul: at the few instructions per
 * byte these dots take, the hardware prefetcher alone leaves the loads
 * waiting on memory (perf on Sapphire Rapids: the stalls sat on the first
 * use of each run's scales; one row a call ran q4_0 and q4_K at 35-40 % of
 * DRAM speed). Each step prefetches, in each of its rows, the `bytes` it
 * consumes DOT_PREFETCH_AHEAD bytes further on; past a row's end, the same
 * place in the same row of the next group (rows·stride on), which the next
 * call reads (one row a call: stride = the row's bytes, the next row). */
#define DOT_PREFETCH_AHEAD 2048

static DOT_ALWAYS_INLINE void dot_prefetch_rows(const void *w, int64_t stride, int rows, int64_t row_bytes,
						int64_t off, int bytes)
{
	const char *base = w;

	off += DOT_PREFETCH_AHEAD;
	if (off >= row_bytes) {
		base += rows * stride;
		off -= row_bytes;
	}
	FOR_ROWS(r)
		for (int o = 0; o < bytes; o += 64)
			__builtin_prefetch(base + r * stride + off + o, 0, 3);
}

/* dot_prefetch_rows at `ahead` bytes, which may span several groups of
 * rows: short rows (K = 2048: a q4_0 row is 1152 bytes) need a lookahead
 * of more than the next group to keep enough lines in flight. Past a row's
 * end the same place g groups on (g·rows·stride), g the rows it passes. */
#ifndef DOT_PREFETCH_FAR_LOCALITY
#define DOT_PREFETCH_FAR_LOCALITY 2
#endif

static DOT_ALWAYS_INLINE void dot_prefetch_rows_far(const void *w, int64_t stride, int rows, int64_t row_bytes,
						    int64_t off, int bytes, int64_t ahead)
{
	const char *base = w;

	off += ahead;
	if (off >= row_bytes) {
		const int64_t g = off / row_bytes;

		base += g * rows * stride;
		off -= g * row_bytes;
	}
	FOR_ROWS(r)
		for (int o = 0; o < bytes; o += 64)
			__builtin_prefetch(base + r * stride + off + o, 0, DOT_PREFETCH_FAR_LOCALITY);
}

/* The 8 6-bit sub-block scales ls of an iq4_xs block (SPEC/QUANT.md),
 * one a byte, sub-block j in byte j: the 4-bit fields of scales_l and the
 * 2-bit fields of scales_h spread out in 64-bit words. */
static inline uint64_t dot_iq4_xs_ls(uint16_t scales_h, const uint8_t scales_l[4])
{
	uint64_t lo = (uint64_t)scales_l[0] | (uint64_t)scales_l[1] << 8 | (uint64_t)scales_l[2] << 16 |
		      (uint64_t)scales_l[3] << 24, hi = scales_h;

	lo = (lo | lo << 16) & 0x0000ffff0000ffffull;
	lo = (lo | lo << 8) & 0x00ff00ff00ff00ffull;
	lo = (lo | lo << 4) & 0x0f0f0f0f0f0f0f0full;
	hi = (hi | hi << 24) & 0x000000ff000000ffull;
	hi = (hi | hi << 12) & 0x000f000f000f000full;
	hi = (hi | hi << 6) & 0x0303030303030303ull;
	return lo | hi << 4;
}

/* A build's name of a kernel defined in a source built twice, with and
 * without an ISA extension (VNNI's vpdpbusd, AArch64's sdot): each ISA's
 * dot header defines DOT_NAME(name_with, name_without) to pick one, so
 * that both names are spelled out where the kernel is defined. */

/* The vec_dot `dot` and vec_dot_rows `dot_rows` (cpu_cntx.h) of a
 * format whose multi-row body is body(n, w, stride, xq, out, rows):
 * row_bytes a row's bytes (vec_dot's prefetch past its end), rows the
 * context table's dot_rows. */
#define DEFINE_DOT_ENTRIES(dot, dot_rows, body, row_bytes, rows) \
	DEFINE_DOT_FAMILY_ENTRIES(dot, dot_rows, DOT_CALL, body, row_bytes, rows)
#define DOT_CALL(body, ...) body(__VA_ARGS__)

/* The same for a family whose formats share one body, body(f, n, w,
 * stride, xq, out, rows) with f the format's constant F (the K-quants'
 * kq_rows). */
#define DEFINE_DOT_FAMILY_ENTRIES(dot, dot_rows, body, F, row_bytes, rows)                          \
	float dot(int64_t n, const void *w, const void *xq)                                         \
	{                                                                                           \
		float out;                                                                          \
                                                                                                    \
		body(F, n, w, row_bytes, xq, &out, 1);                                              \
		return out;                                                                         \
	}                                                                                           \
	void dot_rows(int64_t n, const void *w, int64_t stride, const void *xq, float *out)         \
	{                                                                                           \
		body(F, n, w, stride, xq, out, rows);                                               \
	}

/* A family's vec_dot_tile `dot_tile` (cpu_cntx.h) of the format F from its
 * tile body, body(f, n, w, stride, xq, xq_stride, out, rows, xrows), with
 * `rows` weight rows and `xrows` activation rows a call. */
#define DEFINE_DOT_FAMILY_TILE(dot_tile, body, F, rows, xrows)                                      \
	void dot_tile(int64_t n, const void *w, int64_t stride, const void *xq, int64_t xq_stride, float *out) \
	{                                                                                           \
		body(F, n, w, stride, xq, xq_stride, out, rows, xrows);                             \
	}

#endif
