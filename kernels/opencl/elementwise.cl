/* Elementwise f32 ops, one kernel per -DOP: 0 add, 1 mul, 2 scale, 3 silu,
 * 4 gelu_tanh, 5 gelu_erf, 6 relu, 7 tanh, 8 exp, 9 swiglu (a = gate,
 * b = up), 10 sigmoid, 11 clamp (s = lo, t = hi), 12 softcap (s = c,
 * t = 1/c), the glu family with a = gate, b = up: 13 gelu_tanh,
 * 14 gelu_erf, 15 relu, 16 swiglu_oai (s = alpha, t = limit). One work-item per element of y; b broadcasts through its strides
 * (0 on broadcast dims) and b_step (0 when its rows have one element). */
#include "common.h"

/* each -DOP variant uses some of these */
__attribute__((unused)) static inline float sigmoid(float x)
{
	float e = exp(-fabs(x)), r = 1.0f / (1.0f + e);

	return x >= 0.0f ? r : e * r;
}

__attribute__((unused)) static inline float gelu_tanh(float x)
{
	return 0.5f * x * (1.0f + tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

__attribute__((unused)) static inline float gelu_erf(float x)
{
	return 0.5f * x * (1.0f + erf(x * 0.7071067811865476f));
}

static inline float op(float x, float b, float s, float t)
{
#if OP == 0
	return x + b;
#elif OP == 1
	return x * b;
#elif OP == 2
	return x * s;
#elif OP == 3
	return x / (1.0f + exp(-x));
#elif OP == 4
	return gelu_tanh(x);
#elif OP == 5
	return gelu_erf(x);
#elif OP == 6
	return fmax(x, 0.0f);
#elif OP == 7
	return tanh(x);
#elif OP == 8
	return exp(x);
#elif OP == 9
	return x / (1.0f + exp(-x)) * b;
#elif OP == 10
	return sigmoid(x);
#elif OP == 11
	/* min(x, hi) first: a NaN x gives hi, as the CPU plugins */
	float v = x < t ? x : t;
	return v > s ? v : s;
#elif OP == 12
	return s * tanh(x * t);
#elif OP == 13
	return gelu_tanh(x) * b;
#elif OP == 14
	return gelu_erf(x) * b;
#elif OP == 15
	return fmax(x, 0.0f) * b;
#elif OP == 16
	float g = fmin(x, t), u = clamp(b, -t, t);
	return g * sigmoid(s * g) * (u + 1.0f);
#else
#error "elementwise.cl: unknown OP"
#endif
}

__kernel void KNAME(gbytes *yb, TENSOR(y), cbytes *ab, TENSOR(a), cbytes *bb, TENSOR(b), long b_step, float s,
		    float t, long n, long d1, long d2, long total)
{
	long g = get_global_id(0);

	if (g >= total)
		return;
	long r = g / n, j = g % n;
	float x = ((__global const float *)(ab + ROW(a, r)))[j];
	float bv = ((__global const float *)(bb + ROW(b, r)))[j * b_step];

	((__global float *)(yb + ROW(y, r)))[j] = op(x, bv, s, t);
}
