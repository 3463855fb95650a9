/* The AArch64 row kernels on AdvSIMD (4 f32 lanes), neon_*. Same structure
 * as the x86 row kernels: whole vectors, then one partial vector through a
 * stack buffer (simd_neon.h), so no kernel reads or writes past element n.
 * Signatures and contracts: cpu_kernels.h.
 */
#include <math.h>

#include "rows_neon.h"
#include "simd_neon.h"

#define SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF_A 0.044715f
#define SQRT_HALF 0.70710678118654752440f

/* ----------------------------------------------------- elementwise */

/* vmaxnm returns the number when one side is NaN: relu(NaN) = 0, as the
 * reference (v > 0 ? v : 0). */
static inline vf relu_v(vf v)
{
	return vmaxnmq_f32(v, vdupq_n_f32(0.0f));
}

static inline vf silu_v(vf v)
{
	return vmulq_f32(v, vf_sigmoid(v));
}

/* 0.5·x·(1 + tanh(u)) = x·sigmoid(2u): no cancellation for x < 0. */
static inline vf gelu_tanh_v(vf v)
{
	vf u = vmulq_f32(vmulq_n_f32(v, SQRT_2_OVER_PI),
			 vf_fma(vmulq_f32(v, v), vdupq_n_f32(GELU_COEF_A), vdupq_n_f32(1.0f)));

	return vmulq_f32(v, vf_sigmoid(vaddq_f32(u, u)));
}

/* 0.5·x·(1 + erf(z)), z = x/√2: erfc(−z) below 0, 2 − erfc(z) above. */
static inline vf gelu_erf_v(vf v)
{
	vf c = vf_erfc(vabsq_f32(vmulq_n_f32(v, SQRT_HALF)));
	vf one_plus_erf = vbslq_f32(vcltq_f32(v, vdupq_n_f32(0.0f)), c, vsubq_f32(vdupq_n_f32(2.0f), c));

	return vmulq_f32(vmulq_n_f32(v, 0.5f), one_plus_erf);
}

static inline vf swiglu_v(vf a, vf b)
{
	return vmulq_f32(silu_v(a), b);
}

/* y[0, n) from x (or a and b); EXPR is in v (and u, b's vector). */
#define UNARY_LOOP(EXPR)                                                        \
	do {                                                                    \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {                    \
			vf v = vld1q_f32(x + i);                                \
			vst1q_f32(y + i, (EXPR));                               \
		}                                                               \
		if (i < n) {                                                    \
			vf v = vf_load_n(x + i, n - i);                         \
			vf_store_n(y + i, (EXPR), n - i);                       \
		}                                                               \
	} while (0)

#define BINARY_LOOP(EXPR)                                                       \
	do {                                                                    \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {                    \
			vf v = vld1q_f32(a + i), u = vld1q_f32(b + i);          \
			vst1q_f32(y + i, (EXPR));                               \
		}                                                               \
		if (i < n) {                                                    \
			vf v = vf_load_n(a + i, n - i), u = vf_load_n(b + i, n - i); \
			vf_store_n(y + i, (EXPR), n - i);                       \
		}                                                               \
	} while (0)

#define DEFINE_UNARY(name, EXPR)                                                \
	void neon_##name##_row(float *y, const float *x, int64_t n)             \
	{                                                                       \
		UNARY_LOOP(EXPR);                                               \
	}

#define DEFINE_BINARY(name, EXPR)                                               \
	void neon_##name##_row(float *y, const float *a, const float *b, int64_t n) \
	{                                                                       \
		BINARY_LOOP(EXPR);                                              \
	}

DEFINE_UNARY(silu, silu_v(v))
DEFINE_UNARY(gelu_tanh, gelu_tanh_v(v))
DEFINE_UNARY(gelu_erf, gelu_erf_v(v))
DEFINE_UNARY(relu, relu_v(v))
DEFINE_UNARY(tanh, vf_tanh(v))
DEFINE_UNARY(exp, vf_exp(v))
DEFINE_BINARY(add, vaddq_f32(v, u))
DEFINE_BINARY(mul, vmulq_f32(v, u))
DEFINE_BINARY(swiglu, swiglu_v(v, u))

void neon_scale_row(float *y, const float *x, float s, int64_t n)
{
	UNARY_LOOP(vmulq_n_f32(v, s));
}

/* ------------------------------------------------------ reductions */

/* Σ TERM(s, v) over x[0, n) in four accumulators (the add latency); the
 * partial vector's dead lanes are 0 and TERM(s, 0) must leave s. */
#define DEFINE_SUM(name, params, TERM)                                          \
	static inline float name params                                         \
	{                                                                       \
		vf s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;           \
		int64_t i = 0;                                                  \
		for (; i + 4 * VEC_WIDTH <= n; i += 4 * VEC_WIDTH) {            \
			s0 = TERM(s0, vld1q_f32(x + i));                        \
			s1 = TERM(s1, vld1q_f32(x + i + VEC_WIDTH));            \
			s2 = TERM(s2, vld1q_f32(x + i + 2 * VEC_WIDTH));        \
			s3 = TERM(s3, vld1q_f32(x + i + 3 * VEC_WIDTH));        \
		}                                                               \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			s0 = TERM(s0, vld1q_f32(x + i));                        \
		if (i < n)                                                      \
			s1 = TERM(s1, vf_load_n(x + i, n - i));                 \
		return vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3))); \
	}

#define ACC_VALUE(s, v) vaddq_f32((s), (v))
#define ACC_SQUARE(s, v) vfmaq_f32((s), (v), (v))

DEFINE_SUM(sum_row, (const float *x, int64_t n), ACC_VALUE)
DEFINE_SUM(sum_sq_row, (const float *x, int64_t n), ACC_SQUARE)

void neon_rms_norm_row(float *y, const float *x, const float *w, int64_t n, float eps)
{
	const float r = (float)(1.0 / sqrt((double)sum_sq_row(x, n) / (double)n + eps));

	if (w) {
		const float *a = x, *b = w;

		BINARY_LOOP(vmulq_f32(vmulq_n_f32(v, r), u));
	} else {
		UNARY_LOOP(vmulq_n_f32(v, r));
	}
}

/* Two passes for the variance: E[x²] − E[x]² cancels for rows far from 0. */
static inline float sum_dev_sq_row(const float *x, float mean, int64_t n)
{
	const vf m = vdupq_n_f32(mean);
	vf s0 = vdupq_n_f32(0.0f), s1 = s0;
	int64_t i = 0;
	float s;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		vf d0 = vsubq_f32(vld1q_f32(x + i), m), d1 = vsubq_f32(vld1q_f32(x + i + VEC_WIDTH), m);

		s0 = vfmaq_f32(s0, d0, d0);
		s1 = vfmaq_f32(s1, d1, d1);
	}
	s = vaddvq_f32(vaddq_f32(s0, s1));
	for (; i < n; i++)
		s += (x[i] - mean) * (x[i] - mean);
	return s;
}

void neon_layer_norm_row(float *y, const float *x, const float *w, const float *b, int64_t n, float eps)
{
	const float mean = (float)((double)sum_row(x, n) / (double)n);
	const float var = (float)((double)sum_dev_sq_row(x, mean, n) / (double)n);
	const vf m = vdupq_n_f32(mean), r = vdupq_n_f32((float)(1.0 / sqrt((double)var + eps)));
	const vf one = vdupq_n_f32(1.0f), zero = vdupq_n_f32(0.0f);
	int64_t i = 0;

	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {
		vf v = vmulq_f32(vsubq_f32(vld1q_f32(x + i), m), r);

		v = vf_fma(v, w ? vld1q_f32(w + i) : one, b ? vld1q_f32(b + i) : zero);
		vst1q_f32(y + i, v);
	}
	if (i < n) {
		int64_t k = n - i;
		vf v = vmulq_f32(vsubq_f32(vf_load_n(x + i, k), m), r);

		v = vf_fma(v, w ? vf_load_n(w + i, k) : one, b ? vf_load_n(b + i, k) : zero);
		vf_store_n(y + i, v, k);
	}
}

float neon_dot_f32(int64_t n, const float *a, const float *b)
{
	vf s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
	int64_t i = 0;

	for (; i + 4 * VEC_WIDTH <= n; i += 4 * VEC_WIDTH) {
		s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
		s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
		s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
		s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
	if (i < n)
		s1 = vfmaq_f32(s1, vf_load_n(a + i, n - i), vf_load_n(b + i, n - i));
	return vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
}

/* --------------------------------------------------------- softmax */

/* z = scale·x + mask, formed the same way in both passes (one FMA, or one
 * product), so that the largest z minus the max is exactly 0. Dead lanes of
 * a partial vector get −inf. */
static inline vf logits(const float *x, const float *m, vf scale, int64_t i)
{
	return m ? vfmaq_f32(vld1q_f32(m + i), scale, vld1q_f32(x + i)) : vmulq_f32(scale, vld1q_f32(x + i));
}

static inline vf logits_n(const float *x, const float *m, vf scale, int64_t i, int64_t k)
{
	vf xv = vf_load_n(x + i, k);

	if (m)
		return vfmaq_f32(vf_load_n_or(m + i, k, -INFINITY), scale, xv);
	/* scale·x (a plain product, as the whole vectors), −inf in the dead lanes */
	static const uint32_t lane[VEC_WIDTH] = { 0, 1, 2, 3 };
	uint32x4_t live = vcltq_u32(vld1q_u32(lane), vdupq_n_u32((uint32_t)k));

	return vbslq_f32(live, vmulq_f32(scale, xv), vdupq_n_f32(-INFINITY));
}

/* The largest z; NaN lanes are skipped as the reference's z > max does. */
float neon_softmax_max_row(const float *x, const float *m, float scale, int64_t n)
{
	const vf s = vdupq_n_f32(scale);
	vf m0 = vdupq_n_f32(-INFINITY), m1 = m0;
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		m0 = vmaxnmq_f32(m0, logits(x, m, s, i));
		m1 = vmaxnmq_f32(m1, logits(x, m, s, i + VEC_WIDTH));
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		m0 = vmaxnmq_f32(m0, logits(x, m, s, i));
	if (i < n)
		m1 = vmaxnmq_f32(m1, logits_n(x, m, s, i, n - i));
	return vmaxnmvq_f32(vmaxnmq_f32(m0, m1));
}

double neon_softmax_exp_row(float *y, const float *x, const float *m, float scale, float max, int64_t n)
{
	const vf s = vdupq_n_f32(scale), mx = vdupq_n_f32(max);
	vf s0 = vdupq_n_f32(0.0f), s1 = s0;
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		vf e0 = vf_exp(vsubq_f32(logits(x, m, s, i), mx));
		vf e1 = vf_exp(vsubq_f32(logits(x, m, s, i + VEC_WIDTH), mx));

		vst1q_f32(y + i, e0);
		vst1q_f32(y + i + VEC_WIDTH, e1);
		s0 = vaddq_f32(s0, e0);
		s1 = vaddq_f32(s1, e1);
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {
		vf e = vf_exp(vsubq_f32(logits(x, m, s, i), mx));

		vst1q_f32(y + i, e);
		s0 = vaddq_f32(s0, e);
	}
	if (i < n) {
		vf e = vf_exp(vsubq_f32(logits_n(x, m, s, i, n - i), mx));

		vf_store_n(y + i, e, n - i);
		s1 = vaddq_f32(s1, e);
	}
	return (double)vaddvq_f32(vaddq_f32(s0, s1));
}

/* ------------------------------------------------------------ rope */

/* neox: a = x[i], b = x[i + half], cs/sn one entry per pair. */
static void rope_neox(float *y, const float *x, const float *cs, const float *sn, int64_t half)
{
	int64_t i = 0;

	for (; i + VEC_WIDTH <= half; i += VEC_WIDTH) {
		vf a = vld1q_f32(x + i), b = vld1q_f32(x + half + i);
		vf c = vld1q_f32(cs + i), s = vld1q_f32(sn + i);

		vst1q_f32(y + i, vfmsq_f32(vmulq_f32(a, c), b, s));
		vst1q_f32(y + half + i, vfmaq_f32(vmulq_f32(b, c), a, s));
	}
	if (i < half) {
		int64_t k = half - i;
		vf a = vf_load_n(x + i, k), b = vf_load_n(x + half + i, k);
		vf c = vf_load_n(cs + i, k), s = vf_load_n(sn + i, k);

		vf_store_n(y + i, vfmsq_f32(vmulq_f32(a, c), b, s), k);
		vf_store_n(y + half + i, vfmaq_f32(vmulq_f32(b, c), a, s), k);
	}
}

/* normal: y = x·cs + swap_pairs(x)·sn (cpu_kernels.h's tables). */
static void rope_normal(float *y, const float *x, const float *cs, const float *sn, int64_t n)
{
	int64_t i = 0;

	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH) {
		vf v = vld1q_f32(x + i);

		vst1q_f32(y + i, vfmaq_f32(vmulq_f32(v, vld1q_f32(cs + i)), vrev64q_f32(v), vld1q_f32(sn + i)));
	}
	if (i < n) {
		int64_t k = n - i;
		vf v = vf_load_n(x + i, k);

		vf_store_n(y + i, vfmaq_f32(vmulq_f32(v, vf_load_n(cs + i, k)), vrev64q_f32(v), vf_load_n(sn + i, k)), k);
	}
}

void neon_rope_row(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox)
{
	if (neox)
		rope_neox(y, x, cs, sn, n_rot / 2);
	else
		rope_normal(y, x, cs, sn, n_rot);
}

/* ------------------------------------------------- f16 / bf16 rows */

/* f16: fcvtl/fcvtn are exact widening and round-to-nearest-even narrowing
 * with subnormals kept (Linux runs with FPCR.FZ clear) and NaNs quieted
 * with their top payload, as fp16.h. bf16: widening is a shift; narrowing
 * rounds to nearest even by an integer add of 0x7fff plus the kept lsb, a
 * NaN becomes quiet with its top payload (fp16.h's f32_to_bf16). */
static inline vf load_f16(const uint16_t *p)
{
	return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

static inline uint16x4_t f16_bits(vf v)
{
	return vreinterpret_u16_f16(vcvt_f16_f32(v));
}

static inline vf load_bf16(const uint16_t *p)
{
	return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}

static inline uint16x4_t bf16_bits(vf v)
{
	uint32x4_t x = vreinterpretq_u32_f32(v);
	uint32x4_t lsb = vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(1));
	uint16x4_t rounded = vshrn_n_u32(vaddq_u32(x, vaddq_u32(vdupq_n_u32(0x7fff), lsb)), 16);
	uint16x4_t nan = vorr_u16(vshrn_n_u32(x, 16), vdup_n_u16(0x40));
	uint16x4_t is_num = vmovn_u32(vceqq_f32(v, v));

	return vbsl_u16(is_num, rounded, nan);
}

#define DEFINE_HALF_CODEC(name, LOAD, BITS)                                     \
	void neon_dequant_row_##name(const void *src, float *y, int64_t n)      \
	{                                                                       \
		const uint16_t *x = src;                                        \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			vst1q_f32(y + i, LOAD(x + i));                          \
		if (i < n) {                                                    \
			uint16_t buf[VEC_WIDTH] = { 0 };                        \
			memcpy(buf, x + i, (size_t)(n - i) * sizeof(*x));       \
			vf_store_n(y + i, LOAD(buf), n - i);                    \
		}                                                               \
	}                                                                       \
	void neon_quant_row_##name(const float *x, void *dst, int64_t n)        \
	{                                                                       \
		uint16_t *y = dst;                                              \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			vst1_u16(y + i, BITS(vld1q_f32(x + i)));                \
		if (i < n) {                                                    \
			uint16_t buf[VEC_WIDTH];                                \
			vst1_u16(buf, BITS(vf_load_n(x + i, n - i)));           \
			memcpy(y + i, buf, (size_t)(n - i) * sizeof(*y));       \
		}                                                               \
	}

DEFINE_HALF_CODEC(f16, load_f16, f16_bits)
DEFINE_HALF_CODEC(bf16, load_bf16, bf16_bits)

/* ------------------------------------------- axpy and f16 attention rows */

/* y += a·x over n f32, or over n f16 widened exactly (attention's V rows). */
#define DEFINE_AXPY(name, type, LOAD, TAIL_LOAD)                                \
	void neon_axpy_##name(float *y, float a, const type *x, int64_t n)      \
	{                                                                       \
		int64_t i = 0;                                                  \
		for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)                      \
			vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), LOAD(x + i), a)); \
		if (i < n)                                                      \
			vf_store_n(y + i, vfmaq_n_f32(vf_load_n(y + i, n - i), TAIL_LOAD(x + i, n - i), a), \
				   n - i);                                      \
	}

static inline vf load_f16_n(const uint16_t *p, int64_t n)
{
	uint16_t buf[VEC_WIDTH] = { 0 };

	memcpy(buf, p, (size_t)n * sizeof(*p));
	return load_f16(buf);
}

DEFINE_AXPY(f32, float, vld1q_f32, vf_load_n)
DEFINE_AXPY(f16, uint16_t, load_f16, load_f16_n)

/* Σ a·b with b in f16 (attention's K rows), accumulated in f32. */
float neon_dot_f32_f16(int64_t n, const float *a, const uint16_t *b)
{
	vf s0 = vdupq_n_f32(0.0f), s1 = s0;
	int64_t i = 0;

	for (; i + 2 * VEC_WIDTH <= n; i += 2 * VEC_WIDTH) {
		s0 = vfmaq_f32(s0, vld1q_f32(a + i), load_f16(b + i));
		s1 = vfmaq_f32(s1, vld1q_f32(a + i + VEC_WIDTH), load_f16(b + i + VEC_WIDTH));
	}
	for (; i + VEC_WIDTH <= n; i += VEC_WIDTH)
		s0 = vfmaq_f32(s0, vld1q_f32(a + i), load_f16(b + i));
	if (i < n)
		s1 = vfmaq_f32(s1, vf_load_n(a + i, n - i), load_f16_n(b + i, n - i));
	return vaddvq_f32(vaddq_f32(s0, s1));
}
