/* Elementwise f32 ops, one kernel per -DOP: 0 add, 1 mul, 2 scale, 3 silu,
 * 4 gelu_tanh, 5 gelu_erf, 6 relu, 7 tanh, 8 exp, 9 swiglu (a = gate,
 * b = up). One work-item per element of y; b broadcasts through its strides
 * (0 on broadcast dims) and b_step (0 when its rows have one element). */
#include "common.h"

static inline float op(float x, float b, float s)
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
	return 0.5f * x * (1.0f + tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
#elif OP == 5
	return 0.5f * x * (1.0f + erf(x * 0.7071067811865476f));
#elif OP == 6
	return fmax(x, 0.0f);
#elif OP == 7
	return tanh(x);
#elif OP == 8
	return exp(x);
#elif OP == 9
	return x / (1.0f + exp(-x)) * b;
#else
#error "elementwise.cl: unknown OP"
#endif
}

__kernel void KNAME(gbytes *yb, TENSOR(y), cbytes *ab, TENSOR(a), cbytes *bb, TENSOR(b), long b_step, float s,
		    long n, long d1, long d2, long total)
{
	long g = get_global_id(0);

	if (g >= total)
		return;
	long r = g / n, j = g % n;
	float x = ((__global const float *)(ab + ROW(a, r)))[j];
	float bv = ((__global const float *)(bb + ROW(b, r)))[j * b_step];

	((__global float *)(yb + ROW(y, r)))[j] = op(x, bv, s);
}
