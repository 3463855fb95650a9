/* The x86 row kernels, written once against simd.h and compiled twice:
 * with -mavx2 -mfma -mf16c into avx2_* and with AVX-512 F/BW/VL/DQ on top
 * into avx512_* (meson.build; the prefix follows VEC_WIDTH). Signatures
 * and contracts: cpu_kernels.h. Every loop runs whole vectors and then one
 * masked partial vector, so no kernel reads or writes past element n.
 *
 * Elementwise rows longer than STREAM_MIN elements are far bigger than the
 * caches, so their results are written with non-temporal stores: no read
 * for ownership of y, and the caches keep what the next row needs.
 */
#include <math.h>

#include "rows_x86.h"
#include "simd.h"

#if VEC_WIDTH == 16
#define X86_FN(name) avx512_##name
#else
#define X86_FN(name) avx2_##name
#endif

#define STREAM_MIN (256 * 1024) /* elements: 1 MiB of f32 */
#define SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF_A 0.044715f
#define SQRT_HALF 0.70710678118654752440f

/* ----------------------------------------------------- elementwise */

static inline vf relu_v(vf v)
{
	return vf_max(v, vf_zero()); /* NaN gives 0, as the reference */
}

static inline vf silu_v(vf v)
{
	return vf_mul(v, vf_sigmoid(v));
}

/* 0.5·x·(1 + tanh(u)) = x·sigmoid(2u): no cancellation for x < 0. */
static inline vf gelu_tanh_v(vf v)
{
	vf u = vf_mul(vf_mul(v, vf_set1(SQRT_2_OVER_PI)), vf_fma(vf_mul(v, v), vf_set1(GELU_COEF_A), vf_set1(1.0f)));

	return vf_mul(v, vf_sigmoid(vf_add(u, u)));
}

/* 0.5·x·(1 + erf(z)), z = x/√2: 1 + erf(z) is erfc(−z) below 0 and
 * 2 − erfc(z) above, so neither side cancels. */
static inline vf gelu_erf_v(vf v)
{
	vf c = vf_erfc(vf_abs(vf_mul(v, vf_set1(SQRT_HALF))));
	vf one_plus_erf = vf_select(vf_lt(v, vf_zero()), c, vf_sub(vf_set1(2.0f), c));

	return vf_mul(vf_mul(v, vf_set1(0.5f)), one_plus_erf);
}

static inline vf swiglu_v(vf a, vf b)
{
	return vf_mul(silu_v(a), b);
}

/* y[i, n) from x (or a and b): whole vectors, then one partial, leaving
 * i = n. EXPR is in v (and u, the second operand's vector). STORE(p, v) is
 * vf_store or vf_stream. */
#define UNARY_LOOP(STORE, EXPR)                                                 \
	do {                                                                    \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {                    \
			vf v = vf_load(x + i);                                  \
			STORE(y + i, (EXPR));                                   \
		}                                                               \
		if (i < n) {                                                    \
			vf v = vf_load_n(x + i, n - i);                         \
			vf_store_n(y + i, (EXPR), n - i);                       \
			i = n;                                                  \
		}                                                               \
	} while (0)

#define BINARY_LOOP(STORE, EXPR)                                                \
	do {                                                                    \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {                    \
			vf v = vf_load(a + i), u = vf_load(b + i);              \
			STORE(y + i, (EXPR));                                   \
		}                                                               \
		if (i < n) {                                                    \
			vf v = vf_load_n(a + i, n - i), u = vf_load_n(b + i, n - i); \
			vf_store_n(y + i, (EXPR), n - i);                       \
			i = n;                                                  \
		}                                                               \
	} while (0)

/* Elements before y's next 64-byte boundary (at most n), so that the
 * streaming loop stores whole aligned vectors. */
static inline int64_t head_to_line(const float *y, int64_t n)
{
	int64_t head = (int64_t)(((64 - ((uintptr_t)y & 63)) & 63) / sizeof(float));

	return head < n ? head : n;
}

#if VEC_WIDTH == 16
#define vf_stream(p, v) _mm512_stream_ps((p), (v))
#else
#define vf_stream(p, v) _mm256_stream_ps((p), (v))
#endif

/* The aligned head with masked stores (a tail loop of its own), the body
 * streamed when n is big and y is float-aligned, the rest as usual. */
#define ROW_BODY(LOOP, EXPR)                                                    \
	do {                                                                    \
		int64_t i = 0;                                                  \
		if (n >= STREAM_MIN && ((uintptr_t)y & 3) == 0) {               \
			int64_t end = n;                                        \
			n = head_to_line(y, n);                                 \
			LOOP(vf_store, EXPR);                                   \
			n = end - (end - i) % VEC_WIDTH;                        \
			LOOP(vf_stream, EXPR);                                  \
			_mm_sfence();                                           \
			n = end;                                                \
		}                                                               \
		LOOP(vf_store, EXPR);                                           \
	} while (0)

#define DEFINE_UNARY(name, EXPR)                                                \
	void X86_FN(name##_row)(float *y, const float *x, int64_t n)           \
	{                                                                       \
		ROW_BODY(UNARY_LOOP, EXPR);                                     \
	}

#define DEFINE_BINARY(name, EXPR)                                               \
	void X86_FN(name##_row)(float *y, const float *a, const float *b, int64_t n) \
	{                                                                       \
		ROW_BODY(BINARY_LOOP, EXPR);                                    \
	}

DEFINE_UNARY(silu, silu_v(v))
DEFINE_UNARY(gelu_tanh, gelu_tanh_v(v))
DEFINE_UNARY(gelu_erf, gelu_erf_v(v))
DEFINE_UNARY(relu, relu_v(v))
DEFINE_UNARY(tanh, vf_tanh(v))
DEFINE_UNARY(exp, vf_exp(v))
DEFINE_BINARY(add, vf_add(v, u))
DEFINE_BINARY(mul, vf_mul(v, u))
DEFINE_BINARY(swiglu, swiglu_v(v, u))

void X86_FN(scale_row)(float *y, const float *x, float s, int64_t n)
{
	const vf sv = vf_set1(s);

	ROW_BODY(UNARY_LOOP, vf_mul(v, sv));
}

/* ------------------------------------------------------ reductions */

/* Σ TERM(v) over x[0, n): four accumulators hide the add latency; the
 * partial vector's dead lanes are zero, and TERM(0) must be 0. */
#define DEFINE_SUM(name, params, TERM)                                          \
	static inline float name params                                         \
	{                                                                       \
		vf s0 = vf_zero(), s1 = vf_zero(), s2 = vf_zero(), s3 = vf_zero(); \
		int64_t i = 0;                                                  \
		for (; i + 4 * VEC_WIDTH <= n; i += 4 * VEC_WIDTH) {            \
			s0 = TERM(s0, vf_load(x + i));                          \
			s1 = TERM(s1, vf_load(x + i + VEC_WIDTH));              \
			s2 = TERM(s2, vf_load(x + i + 2 * VEC_WIDTH));          \
			s3 = TERM(s3, vf_load(x + i + 3 * VEC_WIDTH));          \
		}                                                               \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			s0 = TERM(s0, vf_load(x + i));                          \
		if (i < n)                                                      \
			s1 = TERM(s1, vf_load_n(x + i, n - i));                 \
		return vf_hsum(vf_add(vf_add(s0, s1), vf_add(s2, s3)));         \
	}

#define ACC_VALUE(s, v) vf_add((s), (v))
#define ACC_SQUARE(s, v) vf_fma((v), (v), (s))
/* The partial vector's dead lanes are 0 and would add mean²: masked by
 * the caller, which runs only whole vectors through it (sum_dev_sq_row). */
#define ACC_DEV_SQUARE(s, v) vf_fma(vf_sub((v), m), vf_sub((v), m), (s))

DEFINE_SUM(sum_row, (const float *x, int64_t n), ACC_VALUE)
DEFINE_SUM(sum_sq_row, (const float *x, int64_t n), ACC_SQUARE)
DEFINE_SUM(sum_dev_sq_body, (const float *x, vf m, int64_t n), ACC_DEV_SQUARE)

void X86_FN(rms_norm_row)(float *y, const float *x, const float *w, int64_t n, float eps)
{
	const vf r = vf_set1((float)(1.0 / sqrt((double)sum_sq_row(x, n) / (double)n + eps)));
	int64_t i = 0;

	if (w) {
		const float *a = x, *b = w;

		BINARY_LOOP(vf_store, vf_mul(vf_mul(v, r), u));
	} else {
		UNARY_LOOP(vf_store, vf_mul(v, r));
	}
}

/* Two passes for the variance (mean, then squared deviations): rows far
 * from zero (100 ± 1) lose everything to cancellation in E[x²] − E[x]². */
static inline float sum_dev_sq_row(const float *x, float mean, int64_t n)
{
	int64_t body = n - n % VEC_WIDTH;
	float s = sum_dev_sq_body(x, vf_set1(mean), body);

	for (int64_t i = body; i < n; i++)
		s += (x[i] - mean) * (x[i] - mean);
	return s;
}

void X86_FN(layer_norm_row)(float *y, const float *x, const float *w, const float *b, int64_t n, float eps)
{
	const float mean = (float)((double)sum_row(x, n) / (double)n);
	const float var = (float)((double)sum_dev_sq_row(x, mean, n) / (double)n);
	const vf m = vf_set1(mean), r = vf_set1((float)(1.0 / sqrt((double)var + eps)));
	const vf one = vf_set1(1.0f), zero = vf_zero();
	int64_t i = 0;

	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {
		vf v = vf_mul(vf_sub(vf_load(x + i), m), r);

		v = vf_fma(v, w ? vf_load(w + i) : one, b ? vf_load(b + i) : zero);
		vf_store(y + i, v);
	}
	if (i < n) {
		int64_t k = n - i;
		vf v = vf_mul(vf_sub(vf_load_n(x + i, k), m), r);

		v = vf_fma(v, w ? vf_load_n(w + i, k) : one, b ? vf_load_n(b + i, k) : zero);
		vf_store_n(y + i, v, k);
	}
}

float X86_FN(dot_f32)(int64_t n, const float *a, const float *b)
{
	vf s0 = vf_zero(), s1 = vf_zero(), s2 = vf_zero(), s3 = vf_zero();
	int64_t i = 0;

	for (; i + 4 * VEC_WIDTH <= n; i += 4 * VEC_WIDTH) {
		s0 = vf_fma(vf_load(a + i), vf_load(b + i), s0);
		s1 = vf_fma(vf_load(a + i + VEC_WIDTH), vf_load(b + i + VEC_WIDTH), s1);
		s2 = vf_fma(vf_load(a + i + 2 * VEC_WIDTH), vf_load(b + i + 2 * VEC_WIDTH), s2);
		s3 = vf_fma(vf_load(a + i + 3 * VEC_WIDTH), vf_load(b + i + 3 * VEC_WIDTH), s3);
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		s0 = vf_fma(vf_load(a + i), vf_load(b + i), s0);
	if (i < n)
		s1 = vf_fma(vf_load_n(a + i, n - i), vf_load_n(b + i, n - i), s1);
	return vf_hsum(vf_add(vf_add(s0, s1), vf_add(s2, s3)));
}

/* --------------------------------------------------------- softmax */

/* z = scale·x + mask, formed the same way in both passes so that the
 * largest z minus the max is exactly 0. Dead lanes of a partial vector
 * get −inf (exp gives 0; scale is finite). */
static inline vf logits(const float *x, const float *m, vf scale, int64_t i)
{
	return m ? vf_fma(scale, vf_load(x + i), vf_load(m + i)) : vf_mul(scale, vf_load(x + i));
}

static inline vf logits_n(const float *x, const float *m, vf scale, int64_t i, int64_t k)
{
	vf add = m ? vf_load_n_or(m + i, k, -INFINITY) : vf_first_n(k, vf_zero(), vf_set1(-INFINITY));

	return vf_fma(scale, vf_load_n(x + i, k), add);
}

float X86_FN(softmax_max_row)(const float *x, const float *m, float scale, int64_t n)
{
	const vf s = vf_set1(scale);
	vf m0 = vf_set1(-INFINITY), m1 = m0;
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		m0 = vf_max(m0, logits(x, m, s, i));
		m1 = vf_max(m1, logits(x, m, s, i + VEC_WIDTH));
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		m0 = vf_max(m0, logits(x, m, s, i));
	if (i < n)
		m1 = vf_max(m1, logits_n(x, m, s, i, n - i));
	return vf_hmax(vf_max(m0, m1));
}

double X86_FN(softmax_exp_row)(float *y, const float *x, const float *m, float scale, float max, int64_t n)
{
	const vf s = vf_set1(scale), mx = vf_set1(max);
	vf s0 = vf_zero(), s1 = vf_zero();
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		vf e0 = vf_exp(vf_sub(logits(x, m, s, i), mx));
		vf e1 = vf_exp(vf_sub(logits(x, m, s, i + VEC_WIDTH), mx));

		vf_store(y + i, e0);
		vf_store(y + i + VEC_WIDTH, e1);
		s0 = vf_add(s0, e0);
		s1 = vf_add(s1, e1);
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {
		vf e = vf_exp(vf_sub(logits(x, m, s, i), mx));

		vf_store(y + i, e);
		s0 = vf_add(s0, e);
	}
	if (i < n) {
		vf e = vf_exp(vf_sub(logits_n(x, m, s, i, n - i), mx));

		vf_store_n(y + i, e, n - i);
		s1 = vf_add(s1, e);
	}
	return (double)vf_hsum(vf_add(s0, s1));
}

/* ------------------------------------------------------------ rope */

/* neox: a = x[i], b = x[i + half], cs/sn one entry per pair. */
static void rope_neox(float *y, const float *x, const float *cs, const float *sn, int64_t half)
{
	int64_t i = 0;

	for (; i + VEC_WIDTH <= half; i += VEC_WIDTH) {
		vf a = vf_load(x + i), b = vf_load(x + half + i), c = vf_load(cs + i), s = vf_load(sn + i);

		vf_store(y + i, vf_fnma(b, s, vf_mul(a, c)));
		vf_store(y + half + i, vf_fma(a, s, vf_mul(b, c)));
	}
	if (i < half) {
		int64_t k = half - i;
		vf a = vf_load_n(x + i, k), b = vf_load_n(x + half + i, k);
		vf c = vf_load_n(cs + i, k), s = vf_load_n(sn + i, k);

		vf_store_n(y + i, vf_fnma(b, s, vf_mul(a, c)), k);
		vf_store_n(y + half + i, vf_fma(a, s, vf_mul(b, c)), k);
	}
}

/* normal: pairs (x[2i], x[2i+1]) side by side; cs = (c0, c0, c1, c1, ...),
 * sn = (−s0, s0, −s1, s1, ...), so y = x·cs + swap_pairs(x)·sn. */
static void rope_normal(float *y, const float *x, const float *cs, const float *sn, int64_t n)
{
	int64_t i = 0;

	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {
		vf v = vf_load(x + i);

		vf_store(y + i, vf_fma(vf_swap_pairs(v), vf_load(sn + i), vf_mul(v, vf_load(cs + i))));
	}
	if (i < n) {
		int64_t k = n - i;
		vf v = vf_load_n(x + i, k);

		vf_store_n(y + i, vf_fma(vf_swap_pairs(v), vf_load_n(sn + i, k), vf_mul(v, vf_load_n(cs + i, k))), k);
	}
}

void X86_FN(rope_row)(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox)
{
	if (neox)
		rope_neox(y, x, cs, sn, n_rot / 2);
	else
		rope_normal(y, x, cs, sn, n_rot);
}

/* ------------------------------------------------- f16 / bf16 rows */

#define DEFINE_HALF_CODEC(name, LOAD, LOAD_N, STORE, STORE_N)                   \
	void X86_FN(dequant_row_##name)(const void *src, float *y, int64_t n)   \
	{                                                                       \
		const uint16_t *x = src;                                        \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			vf_store(y + i, LOAD(x + i));                           \
		if (i < n)                                                      \
			vf_store_n(y + i, LOAD_N(x + i, n - i), n - i);         \
	}                                                                       \
	void X86_FN(quant_row_##name)(const float *x, void *dst, int64_t n)     \
	{                                                                       \
		uint16_t *y = dst;                                              \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			STORE(y + i, vf_load(x + i));                           \
		if (i < n)                                                      \
			STORE_N(y + i, vf_load_n(x + i, n - i), n - i);         \
	}

DEFINE_HALF_CODEC(f16, vf_load_f16, vf_load_f16_n, vf_store_f16, vf_store_f16_n)
DEFINE_HALF_CODEC(bf16, vf_load_bf16, vf_load_bf16_n, vf_store_bf16, vf_store_bf16_n)
