/* The row kernels, written once against simd.h's vf_* and compiled once
 * per ISA: AVX2 + FMA + F16C into avx2_*, AVX-512 F/BW/VL/DQ on top into
 * avx512_* (x86/meson.build), AdvSIMD into neon_* (cpu-neon/meson.build);
 * SIMD_NAME picks the build's name of the three each spells out. Signatures and contracts: cpu_cntx.h. Every
 * loop runs whole vectors and then one masked partial vector, so no kernel
 * reads or writes past element n.
 *
 * Every kernel that writes a row comes twice, from one body: <name> with
 * ordinary stores and <name>_nt with non-temporal ones (the table's nt
 * slots). The framework picks _nt for calls whose output is far larger than
 * the caches: no read for ownership of y, and the caches keep what the next
 * row needs. The _nt kernels do not fence; the framework does, once per
 * piece of work (cpu_view.h).
 */
#include <float.h>
#include <math.h>

#include "rows_simd.h"
#include "simd.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF_A 0.044715f
#define SQRT_HALF 0.70710678118654752440f

/* ------------------------------------------------------ row writers */

/* A vector from p, and a prefetch of what the loop will want PREFETCH
 * elements on. A long chain of arithmetic on each loaded vector (silu,
 * softmax: 20–30 instructions) fills the scheduler with work that waits
 * for its load, so few loads are in flight and the hardware prefetcher
 * alone does not keep up with DRAM; asking early does. */
#define PREFETCH 1024 /* elements: 4 KiB */

static inline vf load_ahead(const float *p)
{
	__builtin_prefetch(p + PREFETCH);
	return vf_load(p);
}

/* y[i, n) from the inputs, whole vectors then one partial, leaving i = n.
 * LOADS(L) declares the input vectors, L(p) loading p's elements at i;
 * EXPR is the output vector in terms of them. STORE(p, v) is vf_store or
 * vf_stream. */
#define LOAD_WHOLE(p) load_ahead((p) + i)
#define LOAD_PART(p) vf_load_n((p) + i, n - i)
#define ROW_LOOP(STORE, LOADS, EXPR)                                            \
	do {                                                                    \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {                    \
			LOADS(LOAD_WHOLE);                                      \
			STORE(y + i, (EXPR));                                   \
		}                                                               \
		if (i < n) {                                                    \
			LOADS(LOAD_PART);                                       \
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

/* The row y[0, n), streamed if `stream`: the head up to y's first 64-byte
 * boundary with ordinary (masked) stores, the whole aligned vectors after it
 * streamed, the rest as usual. A y that is not even float-aligned cannot
 * be aligned: ordinary stores. */
#define WRITE_ROW(stream, LOADS, EXPR)                                          \
	do {                                                                    \
		int64_t i = 0;                                                  \
		if ((stream) && ((uintptr_t)y & 3) == 0) {                      \
			const int64_t end = n;                                  \
			n = head_to_line(y, n);                                 \
			ROW_LOOP(vf_store, LOADS, EXPR);                        \
			n = end - (end - i) % VEC_WIDTH;                        \
			ROW_LOOP(vf_stream, LOADS, EXPR);                       \
			n = end;                                                \
		}                                                               \
		ROW_LOOP(vf_store, LOADS, EXPR);                                \
	} while (0)

/* The two kernels of a writer, fn (ordinary stores) and fn_nt (streaming
 * stores), from its body(args..., stream). */
#define DEFINE_WRITERS(fn, fn_nt, body, params, ...)                            \
	void fn params                                                          \
	{                                                                       \
		body(__VA_ARGS__, 0);                                           \
	}                                                                       \
	void fn_nt params                                                       \
	{                                                                       \
		body(__VA_ARGS__, 1);                                           \
	}

#define X_LOADS(L) vf v = L(x)
#define XW_LOADS(L) vf v = L(x), u = L(w)
#define AB_LOADS(L) vf v = L(a), u = L(b)

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

/* A writer y = EXPR(x) (v the x vector): its body and its two kernels. */
#define DEFINE_UNARY(body, fn, fn_nt, EXPR)                                     \
	static ALWAYS_INLINE void body(float *y, const float *x, int64_t n, int stream) \
	{                                                                       \
		WRITE_ROW(stream, X_LOADS, EXPR);                               \
	}                                                                       \
	DEFINE_WRITERS(fn, fn_nt, body, (float *y, const float *x, int64_t n), y, x, n)

/* A writer y = EXPR(a, b) (v and u their vectors). */
#define DEFINE_BINARY(body, fn, fn_nt, EXPR)                                    \
	static ALWAYS_INLINE void body(float *y, const float *a, const float *b, int64_t n, int stream) \
	{                                                                       \
		WRITE_ROW(stream, AB_LOADS, EXPR);                              \
	}                                                                       \
	DEFINE_WRITERS(fn, fn_nt, body, (float *y, const float *a, const float *b, int64_t n), y, a, b, n)

DEFINE_UNARY(silu_row_body, SIMD_NAME(avx2_silu_row, avx512_silu_row, neon_silu_row),
             SIMD_NAME(avx2_silu_row_nt, avx512_silu_row_nt, neon_silu_row_nt), silu_v(v))
DEFINE_UNARY(gelu_tanh_row_body, SIMD_NAME(avx2_gelu_tanh_row, avx512_gelu_tanh_row, neon_gelu_tanh_row),
             SIMD_NAME(avx2_gelu_tanh_row_nt, avx512_gelu_tanh_row_nt, neon_gelu_tanh_row_nt), gelu_tanh_v(v))
DEFINE_UNARY(gelu_erf_row_body, SIMD_NAME(avx2_gelu_erf_row, avx512_gelu_erf_row, neon_gelu_erf_row),
             SIMD_NAME(avx2_gelu_erf_row_nt, avx512_gelu_erf_row_nt, neon_gelu_erf_row_nt), gelu_erf_v(v))
DEFINE_UNARY(relu_row_body, SIMD_NAME(avx2_relu_row, avx512_relu_row, neon_relu_row),
             SIMD_NAME(avx2_relu_row_nt, avx512_relu_row_nt, neon_relu_row_nt), relu_v(v))
DEFINE_UNARY(tanh_row_body, SIMD_NAME(avx2_tanh_row, avx512_tanh_row, neon_tanh_row),
             SIMD_NAME(avx2_tanh_row_nt, avx512_tanh_row_nt, neon_tanh_row_nt), vf_tanh(v))
DEFINE_UNARY(exp_row_body, SIMD_NAME(avx2_exp_row, avx512_exp_row, neon_exp_row),
             SIMD_NAME(avx2_exp_row_nt, avx512_exp_row_nt, neon_exp_row_nt), vf_exp(v))
DEFINE_BINARY(add_row_body, SIMD_NAME(avx2_add_row, avx512_add_row, neon_add_row),
              SIMD_NAME(avx2_add_row_nt, avx512_add_row_nt, neon_add_row_nt), vf_add(v, u))
DEFINE_BINARY(mul_row_body, SIMD_NAME(avx2_mul_row, avx512_mul_row, neon_mul_row),
              SIMD_NAME(avx2_mul_row_nt, avx512_mul_row_nt, neon_mul_row_nt), vf_mul(v, u))
DEFINE_BINARY(swiglu_row_body, SIMD_NAME(avx2_swiglu_row, avx512_swiglu_row, neon_swiglu_row),
              SIMD_NAME(avx2_swiglu_row_nt, avx512_swiglu_row_nt, neon_swiglu_row_nt), swiglu_v(v, u))
DEFINE_UNARY(sigmoid_row_body, SIMD_NAME(avx2_sigmoid_row, avx512_sigmoid_row, neon_sigmoid_row),
             SIMD_NAME(avx2_sigmoid_row_nt, avx512_sigmoid_row_nt, neon_sigmoid_row_nt), vf_sigmoid(v))
DEFINE_BINARY(geglu_row_body, SIMD_NAME(avx2_geglu_row, avx512_geglu_row, neon_geglu_row),
              SIMD_NAME(avx2_geglu_row_nt, avx512_geglu_row_nt, neon_geglu_row_nt), vf_mul(gelu_tanh_v(v), u))
DEFINE_BINARY(geglu_erf_row_body, SIMD_NAME(avx2_geglu_erf_row, avx512_geglu_erf_row, neon_geglu_erf_row),
              SIMD_NAME(avx2_geglu_erf_row_nt, avx512_geglu_erf_row_nt, neon_geglu_erf_row_nt), vf_mul(gelu_erf_v(v), u))
DEFINE_BINARY(reglu_row_body, SIMD_NAME(avx2_reglu_row, avx512_reglu_row, neon_reglu_row),
              SIMD_NAME(avx2_reglu_row_nt, avx512_reglu_row_nt, neon_reglu_row_nt), vf_mul(relu_v(v), u))

/* min(x, hi) first: vf_min returns hi for a NaN x, as the reference. */
static ALWAYS_INLINE void clamp_row_body(float *y, const float *x, float lo, float hi, int64_t n, int stream)
{
	const vf l = vf_set1(lo), h = vf_set1(hi);

	WRITE_ROW(stream, X_LOADS, vf_max(vf_min(v, h), l));
}

DEFINE_WRITERS(SIMD_NAME(avx2_clamp_row, avx512_clamp_row, neon_clamp_row),
	       SIMD_NAME(avx2_clamp_row_nt, avx512_clamp_row_nt, neon_clamp_row_nt),
	       clamp_row_body, (float *y, const float *x, float lo, float hi, int64_t n), y, x, lo, hi, n)

static ALWAYS_INLINE void softcap_row_body(float *y, const float *x, float c, float inv_c, int64_t n, int stream)
{
	const vf cv = vf_set1(c), iv = vf_set1(inv_c);

	WRITE_ROW(stream, X_LOADS, vf_mul(cv, vf_tanh(vf_mul(v, iv))));
}

DEFINE_WRITERS(SIMD_NAME(avx2_softcap_row, avx512_softcap_row, neon_softcap_row),
	       SIMD_NAME(avx2_softcap_row_nt, avx512_softcap_row_nt, neon_softcap_row_nt),
	       softcap_row_body, (float *y, const float *x, float c, float inv_c, int64_t n), y, x, c, inv_c, n)

/* gpt-oss's glu: g' = min(g, limit), u' = clamp(u, −limit, limit),
 * y = g'·sigmoid(alpha·g')·(u' + 1). */
static inline vf swiglu_oai_v(vf g, vf u, vf alpha, vf limit)
{
	g = vf_min(g, limit);
	u = vf_max(vf_min(u, limit), vf_sub(vf_zero(), limit));
	return vf_mul(vf_mul(g, vf_sigmoid(vf_mul(alpha, g))), vf_add(u, vf_set1(1.0f)));
}

static ALWAYS_INLINE void swiglu_oai_row_body(float *y, const float *a, const float *b, float alpha, float limit,
					      int64_t n, int stream)
{
	const vf al = vf_set1(alpha), li = vf_set1(limit);

	WRITE_ROW(stream, AB_LOADS, swiglu_oai_v(v, u, al, li));
}

DEFINE_WRITERS(SIMD_NAME(avx2_swiglu_oai_row, avx512_swiglu_oai_row, neon_swiglu_oai_row),
	       SIMD_NAME(avx2_swiglu_oai_row_nt, avx512_swiglu_oai_row_nt, neon_swiglu_oai_row_nt),
	       swiglu_oai_row_body, (float *y, const float *a, const float *b, float alpha, float limit, int64_t n), y,
	       a, b, alpha, limit, n)

static ALWAYS_INLINE void scale_row_body(float *y, const float *x, float s, int64_t n, int stream)
{
	const vf sv = vf_set1(s);

	WRITE_ROW(stream, X_LOADS, vf_mul(v, sv));
}

DEFINE_WRITERS(SIMD_NAME(avx2_scale_row, avx512_scale_row, neon_scale_row),
	       SIMD_NAME(avx2_scale_row_nt, avx512_scale_row_nt, neon_scale_row_nt),
	       scale_row_body, (float *y, const float *x, float s, int64_t n), y, x, s, n)

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

static ALWAYS_INLINE void rms_norm_row_body(float *y, const float *x, const float *w, int64_t n, float eps,
					      int stream)
{
	const vf r = vf_set1((float)(1.0 / sqrt((double)sum_sq_row(x, n) / (double)n + eps)));

	if (w)
		WRITE_ROW(stream, XW_LOADS, vf_mul(vf_mul(v, r), u));
	else
		WRITE_ROW(stream, X_LOADS, vf_mul(v, r));
}

DEFINE_WRITERS(SIMD_NAME(avx2_rms_norm_row, avx512_rms_norm_row, neon_rms_norm_row),
	       SIMD_NAME(avx2_rms_norm_row_nt, avx512_rms_norm_row_nt, neon_rms_norm_row_nt),
	       rms_norm_row_body, (float *y, const float *x, const float *w, int64_t n, float eps), y, x, w, n, eps)

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

#define LN_LOADS(L) vf v = L(x), g = w ? L(w) : one, c = b ? L(b) : zero

static ALWAYS_INLINE void layer_norm_row_body(float *y, const float *x, const float *w, const float *b, int64_t n,
					      float eps, int stream)
{
	const float mean = (float)((double)sum_row(x, n) / (double)n);
	const float var = (float)((double)sum_dev_sq_row(x, mean, n) / (double)n);
	const vf m = vf_set1(mean), r = vf_set1((float)(1.0 / sqrt((double)var + eps)));
	const vf one = vf_set1(1.0f), zero = vf_zero();

	WRITE_ROW(stream, LN_LOADS, vf_fma(vf_mul(vf_sub(v, m), r), g, c));
}

DEFINE_WRITERS(SIMD_NAME(avx2_layer_norm_row, avx512_layer_norm_row, neon_layer_norm_row),
	       SIMD_NAME(avx2_layer_norm_row_nt, avx512_layer_norm_row_nt, neon_layer_norm_row_nt),
	       layer_norm_row_body, (float *y, const float *x, const float *w, const float *b, int64_t n, float eps),
	       y, x, w, b, n, eps)

float SIMD_NAME(avx2_dot_f32, avx512_dot_f32, neon_dot_f32)(int64_t n, const float *a, const float *b)
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
	return m ? vf_fma(scale, load_ahead(x + i), load_ahead(m + i)) : vf_mul(scale, load_ahead(x + i));
}

static inline vf logits_n(const float *x, const float *m, vf scale, int64_t i, int64_t k)
{
	vf add = m ? vf_load_n_or(m + i, k, -INFINITY) : vf_first_n(k, vf_zero(), vf_set1(-INFINITY));

	return vf_fma(scale, vf_load_n(x + i, k), add);
}

/* The largest z. vf_max(z, m) keeps m where z is NaN: NaN entries are
 * skipped, as the reference's z > max. */
float SIMD_NAME(avx2_softmax_max_row, avx512_softmax_max_row, neon_softmax_max_row)(const float *x, const float *m, float scale, int64_t n)
{
	const vf s = vf_set1(scale);
	vf m0 = vf_set1(-INFINITY), m1 = m0;
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		m0 = vf_max(logits(x, m, s, i), m0);
		m1 = vf_max(logits(x, m, s, i + VEC_WIDTH), m1);
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		m0 = vf_max(logits(x, m, s, i), m0);
	if (i < n)
		m1 = vf_max(logits_n(x, m, s, i, n - i), m1);
	return vf_hmax(vf_max(m0, m1));
}

double SIMD_NAME(avx2_softmax_exp_row, avx512_softmax_exp_row, neon_softmax_exp_row)(float *y, const float *x, const float *m, float scale, float max, int64_t n)
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

/* One step of the online softmax over the k vectors z[]: per lane, mx is
 * the running max and sum Σ e^(z − mx). The sums are rescaled only when
 * some lane's max grew (rare once the row's large values are seen). −inf
 * maxima are kept as they are; the exponents use at least −FLT_MAX so that
 * −inf − −inf never makes a NaN. */
static ALWAYS_INLINE void online_step(vf *mx, vf *sum, const vf *z, int k)
{
	vf bm = *mx;

	for (int j = 0; j < k; j++)
		bm = vf_max(z[j], bm);

	const vf base = vf_max(bm, vf_set1(-FLT_MAX));

	if (vf_any(vf_lt(*mx, bm))) {
		*sum = vf_mul(*sum, vf_exp(vf_sub(*mx, base)));
		*mx = bm;
	}
	vf t = vf_exp(vf_sub(z[0], base));

	for (int j = 1; j < k; j++)
		t = vf_add(t, vf_exp(vf_sub(z[j], base)));
	*sum = vf_add(*sum, t);
}

double SIMD_NAME(avx2_softmax_sum_row, avx512_softmax_sum_row, neon_softmax_sum_row)(const float *x, const float *m, float scale, int64_t n, float *max)
{
	const vf s = vf_set1(scale);
	vf mx = vf_set1(-INFINITY), sum = vf_zero(), z[4];
	int64_t i = 0;

	for (; i + 4 * VEC_WIDTH <= n; i += 4 * VEC_WIDTH) {
		for (int j = 0; j < 4; j++)
			z[j] = logits(x, m, s, i + j * VEC_WIDTH);
		online_step(&mx, &sum, z, 4);
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {
		z[0] = logits(x, m, s, i);
		online_step(&mx, &sum, z, 1);
	}
	if (i < n) {
		z[0] = logits_n(x, m, s, i, n - i);
		online_step(&mx, &sum, z, 1);
	}
	/* the lanes' sums brought to the row's max (lanes still at −inf add 0) */
	*max = vf_hmax(mx);
	if (*max == -INFINITY)
		return 0.0;
	return (double)vf_hsum(vf_mul(sum, vf_exp(vf_sub(mx, vf_set1(*max)))));
}

#define XM_LOADS(L) vf v = L(x), u = L(m)

static ALWAYS_INLINE void softmax_write_row_body(float *y, const float *x, const float *m, float scale, float max,
						 float inv_sum, int64_t n, int stream)
{
	const vf s = vf_set1(scale), mx = vf_set1(max), inv = vf_set1(inv_sum);

	/* z as logits() forms it */
	if (m)
		WRITE_ROW(stream, XM_LOADS, vf_mul(vf_exp(vf_sub(vf_fma(s, v, u), mx)), inv));
	else
		WRITE_ROW(stream, X_LOADS, vf_mul(vf_exp(vf_sub(vf_mul(s, v), mx)), inv));
}

DEFINE_WRITERS(SIMD_NAME(avx2_softmax_write_row, avx512_softmax_write_row, neon_softmax_write_row),
	       SIMD_NAME(avx2_softmax_write_row_nt, avx512_softmax_write_row_nt, neon_softmax_write_row_nt),
	       softmax_write_row_body, (float *y, const float *x, const float *m, float scale, float max, float inv_sum, int64_t n),
	       y, x, m, scale, max, inv_sum, n)

/* ------------------------------------------------------------ rope */

/* normal: pairs (x[2i], x[2i+1]) side by side; cs = (c0, c0, c1, c1, ...),
 * sn = (−s0, s0, −s1, s1, ...), so y = x·cs + swap_pairs(x)·sn. */
#define ROPE_LOADS(L) vf v = L(x), c = L(cs), s = L(sn)

/* neox: a = x[i], b = x[i + half] and the two outputs y[i], y[i + half] in
 * one loop (y may be x). Streamed only where both halves are aligned. */
#define NEOX_LOOP(STORE)                                                        \
	for (; i + VEC_WIDTH <= half; i += VEC_WIDTH) {                         \
		vf a = vf_load(x + i), b = vf_load(x + half + i);               \
		vf c = vf_load(cs + i), s = vf_load(sn + i);                    \
		STORE(y + i, vf_fnma(b, s, vf_mul(a, c)));                      \
		STORE(y + half + i, vf_fma(a, s, vf_mul(b, c)));                \
	}

static ALWAYS_INLINE void rope_neox(float *y, const float *x, const float *cs, const float *sn, int64_t half,
				    int stream)
{
	const uintptr_t align = VEC_WIDTH * sizeof(float);
	int64_t i = 0;

	if (stream && (uintptr_t)y % align == 0 && half % VEC_WIDTH == 0)
		NEOX_LOOP(vf_stream);
	NEOX_LOOP(vf_store);
	if (i < half) {
		int64_t k = half - i;
		vf a = vf_load_n(x + i, k), b = vf_load_n(x + half + i, k);
		vf c = vf_load_n(cs + i, k), s = vf_load_n(sn + i, k);

		vf_store_n(y + i, vf_fnma(b, s, vf_mul(a, c)), k);
		vf_store_n(y + half + i, vf_fma(a, s, vf_mul(b, c)), k);
	}
}

static ALWAYS_INLINE void rope_row_body(float *y, const float *x, const float *cs, const float *sn, int64_t n,
					int neox, int stream)
{
	if (neox)
		rope_neox(y, x, cs, sn, n / 2, stream);
	else
		WRITE_ROW(stream, ROPE_LOADS, vf_fma(vf_swap_pairs(v), s, vf_mul(v, c)));
}

DEFINE_WRITERS(SIMD_NAME(avx2_rope_row, avx512_rope_row, neon_rope_row),
	       SIMD_NAME(avx2_rope_row_nt, avx512_rope_row_nt, neon_rope_row_nt),
	       rope_row_body, (float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox),
	       y, x, cs, sn, n_rot, neox)

/* ------------------------------------------------- f16 / bf16 rows */

/* The row codecs of a 16-bit float format: dequant (to f32) and quant. */
#define DEFINE_HALF_CODEC(dequant, quant, LOAD, LOAD_N, STORE, STORE_N)         \
	void dequant(const void *src, float *y, int64_t n)                      \
	{                                                                       \
		const uint16_t *x = src;                                        \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			vf_store(y + i, LOAD(x + i));                           \
		if (i < n)                                                      \
			vf_store_n(y + i, LOAD_N(x + i, n - i), n - i);         \
	}                                                                       \
	void quant(const float *x, void *dst, int64_t n)                        \
	{                                                                       \
		uint16_t *y = dst;                                              \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			STORE(y + i, vf_load(x + i));                           \
		if (i < n)                                                      \
			STORE_N(y + i, vf_load_n(x + i, n - i), n - i);         \
	}

DEFINE_HALF_CODEC(SIMD_NAME(avx2_dequant_row_f16, avx512_dequant_row_f16, neon_dequant_row_f16),
		  SIMD_NAME(avx2_quant_row_f16, avx512_quant_row_f16, neon_quant_row_f16),
		  vf_load_f16, vf_load_f16_n, vf_store_f16, vf_store_f16_n)
DEFINE_HALF_CODEC(SIMD_NAME(avx2_dequant_row_bf16, avx512_dequant_row_bf16, neon_dequant_row_bf16),
		  SIMD_NAME(avx2_quant_row_bf16, avx512_quant_row_bf16, neon_quant_row_bf16),
		  vf_load_bf16, vf_load_bf16_n, vf_store_bf16, vf_store_bf16_n)
