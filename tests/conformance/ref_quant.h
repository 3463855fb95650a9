/* Independent references for gllmk's weight dtypes, written for the tests
 * from the documented GGUF/ggml block layouts (SPEC/QUANT.md), never from a
 * plugin's code:
 *  - decoders of every dtype to double (f32, f16, bf16, the block formats;
 *    f16/bf16 scalars through ref_half.h);
 *  - ggml's reference encoders for q8_0 and q8_K, bit for bit, as
 *    SPEC/OPERATORS.md states them (float arithmetic, because that is the
 *    definition), and a comparison that knows their one allowed deviation;
 *  - random but valid rows of any dtype (finite, moderate scales);
 *  - the double-precision matmul with a per-element error bound, shared by
 *    the matmul test and the ggml vectors test.
 */
#ifndef GLLMK_REF_QUANT_H
#define GLLMK_REF_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"

/* ---------------------------------------------------------------- dtypes */

/* Elements and bytes per block (1 and the element size for f32/f16/bf16);
 * 0 for a dtype without a reference decoder (i32, unknown). */
int64_t ref_block_elems(gllmk_dtype dt);
int64_t ref_block_bytes(gllmk_dtype dt);
/* Bytes of a row of n elements (n a multiple of the block). */
size_t ref_row_bytes(gllmk_dtype dt, int64_t n);
const char *ref_dtype_name(gllmk_dtype dt);
int ref_dtype_is_block(gllmk_dtype dt);

/* Decodes n elements (a multiple of the block) of a row of dt to double:
 * every decoded value is exact in double. */
void ref_decode_row(gllmk_dtype dt, const void *src, double *dst, int64_t n);

/* tol[i] such that |got - want[i]| <= tol[i] holds exactly for got equal to
 * want[i] rounded to f32 or one of that float's two neighbours: "exact, or
 * within 1 ulp of f32", for conf_check_within. */
void ref_ulp_tolerance(const double *want, double *tol, size_t n);

/* A random, valid row of n elements of dt: moderate values for f32/f16/bf16
 * (uniform in [-1, 1), rounded to the dtype), random quant bits with finite
 * f16 scales of magnitude 2^-10 .. 2^-3 for block formats, and consistent
 * bsums for q8_K. */
void ref_random_row(gllmk_dtype dt, struct conf_rng *r, void *dst, int64_t n);

/* ------------------------------------------------------------- encoders */

/* ggml's quantize_row_q8_0_ref / quantize_row_q8_K_ref per SPEC/OPERATORS.md,
 * n a multiple of the block. */
void ref_quantize_q8_0(const float *x, void *dst, int64_t n);
void ref_quantize_q8_K(const float *x, void *dst, int64_t n);

/* Compares a plugin's q8_0/q8_K row with the reference encoding of x:
 * scales bit for bit; each quant equal, except that a difference of one
 * step is allowed where x·id (in double) lies within 1e-6 of a rounding tie
 * without sitting exactly on it (SPEC/TOLERANCES.md); q8_K's bsums must be
 * the sums of the plugin's own quants. Returns 0, or -1 after writing the
 * first offence into msg. */
int ref_compare_q8(gllmk_dtype dt, const float *x, const void *got, const void *want, int64_t n, char *msg,
		   size_t msg_len);

/* ---------------------------------------------------------------- matmul */

/* y[M,N] = x[M,K] · decode(w)[N,K]ᵀ (+ bias) in double. w holds N rows of
 * w_row_bytes each (rows may be padded). bound[M×N] gets each element's
 * allowed error (SPEC/TOLERANCES.md, "matrix, quant, attention"):
 *   1e-5 · Σ_k |x_k·w_k|                                 (f32 accumulation)
 * + 6 · sqrt(Σ_k (e_k·w_k)²), e_k = 0.6·amax(x's block)/127 for block dtypes
 *   (a plugin may quantize x to q8_0/q8_K), 0 for f32/f16/bf16 (x stays f32)
 * and, for bf16 weights when conf.bf16_act (x may be rounded to bf16):
 * + 2⁻⁸ · Σ_k |x_k·w_k| + 2⁻¹²⁶ · (K + Σ_k (|x_k| + |w_k|))
 *   (each x_k moves by at most 2⁻⁸ of itself; vdpbf16ps flushes subnormal
 *   inputs and sums to zero).
 */
void ref_matmul(gllmk_dtype wdt, const void *w, size_t w_row_bytes, int64_t n_rows, int64_t k, const float *x,
		int64_t m, const float *bias, double *y, double *bound);
/* matmul's norm-wise bound on results of >= 64 independent elements: 1e-2
 * block weights, 1e-4 f32/f16/bf16, 2⁻⁸ bf16 when conf.bf16_act. */
double ref_matmul_norm_tolerance(gllmk_dtype wdt);

#endif
