/* Portable scalar row kernels (rows_ref.h). Plain loops the compiler can
 * vectorise for the baseline ISA; transcendental functions from libm. */
#include <math.h>

#include "rows_ref.h"

/* Elementwise rows from one expression each: y[i] = EXPR(x[i]) or EXPR(a[i], b[i]). */
#define REF_UNARY_ROW(name, expr)                                       \
	void ref_##name##_row(float *y, const float *x, int64_t n)     \
	{                                                               \
		for (int64_t i = 0; i < n; i++) {                       \
			float v = x[i];                                 \
			y[i] = (expr);                                  \
		}                                                       \
	}

#define REF_BINARY_ROW(name, expr)                                                      \
	void ref_##name##_row(float *y, const float *a, const float *b, int64_t n)     \
	{                                                                               \
		for (int64_t i = 0; i < n; i++) {                                       \
			float u = a[i], v = b[i];                                       \
			y[i] = (expr);                                                  \
		}                                                                       \
	}

#define SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF_A 0.044715f
#define SQRT_HALF 0.70710678118654752440f

static inline float silu(float v)
{
	return v / (1.0f + expf(-v));
}

static inline float gelu_tanh(float v)
{
	return 0.5f * v * (1.0f + tanhf(SQRT_2_OVER_PI * v * (1.0f + GELU_COEF_A * v * v)));
}

static inline float gelu_erf(float v)
{
	return 0.5f * v * (1.0f + erff(v * SQRT_HALF));
}

static inline float relu(float v)
{
	return v > 0.0f ? v : 0.0f;
}

REF_UNARY_ROW(silu, silu(v))
REF_UNARY_ROW(gelu_tanh, gelu_tanh(v))
REF_UNARY_ROW(gelu_erf, gelu_erf(v))
REF_UNARY_ROW(relu, relu(v))
REF_UNARY_ROW(sigmoid, 1.0f / (1.0f + expf(-v)))
REF_UNARY_ROW(tanh, tanhf(v))
REF_UNARY_ROW(exp, expf(v))
REF_BINARY_ROW(add, u + v)
REF_BINARY_ROW(mul, u * v)
REF_BINARY_ROW(swiglu, silu(u) * v)
REF_BINARY_ROW(geglu, gelu_tanh(u) * v)
REF_BINARY_ROW(geglu_erf, gelu_erf(u) * v)
REF_BINARY_ROW(reglu, relu(u) * v)

/* ggml's order: min(x, hi) first, so NaN gives hi (NaN < hi is false). */
void ref_clamp_row(float *y, const float *x, float lo, float hi, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		float v = x[i] < hi ? x[i] : hi;

		y[i] = v > lo ? v : lo;
	}
}

void ref_softcap_row(float *y, const float *x, float c, float inv_c, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = c * tanhf(x[i] * inv_c);
}

/* gpt-oss: g' = min(g, limit), u' = clamp(u, -limit, limit),
 * y = g'·sigmoid(alpha·g')·(u' + 1), as ggml_swiglu_oai. */
void ref_swiglu_oai_row(float *y, const float *gate, const float *up, float alpha, float limit, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		float g = gate[i] < limit ? gate[i] : limit;
		float u = up[i] < limit ? up[i] : limit;

		u = u > -limit ? u : -limit;
		y[i] = g / (1.0f + expf(-alpha * g)) * (u + 1.0f);
	}
}

void ref_scale_row(float *y, const float *x, float s, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] * s;
}

/* Sums in double over LANES independent partial sums: a short dependency
 * chain the compiler can vectorise, and pairwise-like rounding on top of
 * double's headroom. Each function sums TERM(i) for i < n. */
#define LANES 8
#define DEFINE_SUM(name, params, TERM)                                  \
	static double name params                                       \
	{                                                               \
		double part[LANES] = { 0 }, sum = 0.0;                  \
		int64_t i = 0;                                          \
									\
		for (; i + LANES <= n; i += LANES)                      \
			for (int l = 0; l < LANES; l++)                 \
				part[l] += TERM(i + l);                 \
		for (; i < n; i++)                                      \
			part[0] += TERM(i);                             \
		for (int l = 0; l < LANES; l++)                         \
			sum += part[l];                                 \
		return sum;                                             \
	}

#define VALUE(i) ((double)x[i])
#define SQUARE(i) ((double)x[i] * x[i])
#define DEVIATION_SQ(i) (((double)x[i] - mean) * ((double)x[i] - mean))
#define PRODUCT(i) ((double)a[i] * b[i])
DEFINE_SUM(sum_d, (const float *x, int64_t n), VALUE)
DEFINE_SUM(sum_sq_d, (const float *x, int64_t n), SQUARE)
DEFINE_SUM(sum_dev_sq_d, (const float *x, double mean, int64_t n), DEVIATION_SQ)
DEFINE_SUM(dot_d, (const float *a, const float *b, int64_t n), PRODUCT)

void ref_rms_norm_row(float *y, const float *x, const float *w, int64_t n, float eps)
{
	float r = (float)(1.0 / sqrt(sum_sq_d(x, n) / (double)n + eps));

	if (w) {
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i] * r * w[i];
	} else {
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i] * r;
	}
}

/* Two passes (mean, then squared deviations): no cancellation in var. */
void ref_layer_norm_row(float *y, const float *x, const float *w, const float *b, int64_t n, float eps)
{
	double mean = sum_d(x, n) / (double)n;
	double r = 1.0 / sqrt(sum_dev_sq_d(x, mean, n) / (double)n + eps);

	for (int64_t i = 0; i < n; i++) {
		float v = (float)((x[i] - mean) * r);

		if (w)
			v *= w[i];
		if (b)
			v += b[i];
		y[i] = v;
	}
}

float ref_dot_f32(int64_t n, const float *a, const float *b)
{
	return (float)dot_d(a, b, n);
}

/* z = scale·x + mask, the same expression in both passes. */
static inline float logit(const float *x, const float *mask, float scale, int64_t j)
{
	return scale * x[j] + (mask ? mask[j] : 0.0f);
}

float ref_softmax_max_row(const float *x, const float *mask, float scale, int64_t n)
{
	float max = -INFINITY;

	for (int64_t j = 0; j < n; j++) {
		float z = logit(x, mask, scale, j);

		max = z > max ? z : max;
	}
	return max;
}

double ref_softmax_exp_row(float *y, const float *x, const float *mask, float scale, float max, int64_t n)
{
	double sum = 0.0;

	for (int64_t j = 0; j < n; j++) {
		y[j] = expf(logit(x, mask, scale, j) - max);
		sum += y[j];
	}
	return sum;
}

/* The reference takes the max and the sum in two passes over the row. */
double ref_softmax_sum_row(const float *x, const float *mask, float scale, int64_t n, float *max)
{
	double sum = 0.0;

	*max = ref_softmax_max_row(x, mask, scale, n);
	if (*max == -INFINITY)
		return 0.0;
	for (int64_t j = 0; j < n; j++)
		sum += expf(logit(x, mask, scale, j) - *max);
	return sum;
}

void ref_softmax_write_row(float *y, const float *x, const float *mask, float scale, float max, float inv_sum,
			   int64_t n)
{
	for (int64_t j = 0; j < n; j++)
		y[j] = expf(logit(x, mask, scale, j) - max) * inv_sum;
}

/* Both layouts (cpu_cntx.h) as a_i = x[i·step], b_i = a_i[b_off]; the
 * normal layout's tables hold each pair's cos at 2i and sin at 2i + 1. */
void ref_rope_row(float *y, const float *x, const float *cs, const float *sn, int64_t n_rot, int neox)
{
	const int64_t step = neox ? 1 : 2, b_off = neox ? n_rot / 2 : 1;

	for (int64_t i = 0; i < n_rot / 2; i++) {
		const float a = x[i * step], b = x[i * step + b_off];
		const float c = neox ? cs[i] : cs[2 * i], s = neox ? sn[i] : sn[2 * i + 1];

		y[i * step] = a * c - b * s;
		y[i * step + b_off] = a * s + b * c;
	}
}
