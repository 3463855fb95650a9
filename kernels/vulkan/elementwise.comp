/* y = op(a[, b]) elementwise over rows (add, mul, scale, activations, swiglu).
 * -DOP=... picks the operation. b broadcasts: the host gives it stride 0 on
 * every dim it repeats along, b_step 0 when it repeats along the row. */
#version 450
#include "common.glsl"
#include "math.glsl"

layout(local_size_x = 256) in;

#define OP_ADD 0
#define OP_MUL 1
#define OP_SCALE 2
#define OP_SILU 3
#define OP_GELU_TANH 4
#define OP_GELU_ERF 5
#define OP_RELU 6
#define OP_TANH 7
#define OP_EXP 8
#define OP_SWIGLU 9

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint ao, as0, as1, as2;
	uint bo, bs0, bs1, bs2;
	uint b_step;
	float s;
} p;

float silu(float x)
{
	return x / (1.0 + exp(-x));
}

float apply(float a, float b)
{
#if OP == OP_ADD
	return a + b;
#elif OP == OP_MUL
	return a * b;
#elif OP == OP_SCALE
	return a * p.s;
#elif OP == OP_SILU
	return silu(a);
#elif OP == OP_GELU_TANH
	/* 0.5a(1 + tanh u) = a / (1 + e^-2u): no cancellation for a < 0 */
	return a / (1.0 + exp(-1.5957691216057308 * (a + 0.044715 * a * a * a)));
#elif OP == OP_GELU_ERF
	return 0.5 * a * erfc_acc(-a * 0.7071067811865476);
#elif OP == OP_RELU
	return max(a, 0.0);
#elif OP == OP_TANH
	return tanh_acc(a);
#elif OP == OP_EXP
	return exp(a);
#elif OP == OP_SWIGLU
	return silu(a) * b;
#endif
}

void main()
{
	uint total = p.n * p.rows;
	uint step = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u;

	for (uint e = wg_linear() * 256u + gl_LocalInvocationID.x; e < total; e += step) {
		uint r = e / p.n, c = e % p.n;
		float a = LDF(b1, row_addr(r, p.d1, p.d2, p.ao, p.as0, p.as1, p.as2) + 4u * c);
		float b = 0.0;
#if OP == OP_ADD || OP == OP_MUL || OP == OP_SWIGLU
		b = LDF(b2, row_addr(r, p.d1, p.d2, p.bo, p.bs0, p.bs1, p.bs2) + p.b_step * c);
#endif
		STF(b0, row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2) + 4u * c, apply(a, b));
	}
}
