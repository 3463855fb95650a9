/* y = op(a[, b]) elementwise over rows (add, mul, scale, activations, swiglu,
 * the glu family, clamp, softcap).
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
#define OP_SIGMOID 10
#define OP_CLAMP 11       /* s = lo, t = hi */
#define OP_SOFTCAP 12     /* s = c, t = 1/c */
#define OP_GEGLU 13
#define OP_GEGLU_ERF 14
#define OP_REGLU 15
#define OP_SWIGLU_OAI 16  /* s = alpha, t = limit */

#define IS_BINARY (OP == OP_ADD || OP == OP_MUL || OP == OP_SWIGLU || OP == OP_GEGLU || OP == OP_GEGLU_ERF || \
		   OP == OP_REGLU || OP == OP_SWIGLU_OAI)

layout(push_constant) uniform Push {
	uint n, d1, d2, rows;
	uint yo, ys0, ys1, ys2;
	uint ao, as0, as1, as2;
	uint bo, bs0, bs1, bs2;
	uint b_step;
	float s, t;
} p;

float silu(float x)
{
	return x / (1.0 + exp(-x));
}

/* 1/(1 + e^-x) from e^-|x|: no overflow for very negative x. */
float sigmoid(float x)
{
	float e = exp(-abs(x));
	float r = 1.0 / (1.0 + e);
	return x >= 0.0 ? r : e * r;
}

/* 0.5a(1 + tanh u) = a / (1 + e^-2u): no cancellation for a < 0 */
float gelu_tanh(float a)
{
	return a / (1.0 + exp(-1.5957691216057308 * (a + 0.044715 * a * a * a)));
}

float gelu_erf(float a)
{
	return 0.5 * a * erfc_acc(-a * 0.7071067811865476);
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
	return gelu_tanh(a);
#elif OP == OP_GELU_ERF
	return gelu_erf(a);
#elif OP == OP_RELU
	return max(a, 0.0);
#elif OP == OP_TANH
	return tanh_acc(a);
#elif OP == OP_EXP
	return exp(a);
#elif OP == OP_SWIGLU
	return silu(a) * b;
#elif OP == OP_SIGMOID
	return sigmoid(a);
#elif OP == OP_CLAMP
	/* min(a, hi) first: a NaN a gives hi, as the CPU plugins */
	float v = a < p.t ? a : p.t;
	return v > p.s ? v : p.s;
#elif OP == OP_SOFTCAP
	return p.s * tanh_acc(a * p.t);
#elif OP == OP_GEGLU
	return gelu_tanh(a) * b;
#elif OP == OP_GEGLU_ERF
	return gelu_erf(a) * b;
#elif OP == OP_REGLU
	return max(a, 0.0) * b;
#elif OP == OP_SWIGLU_OAI
	float g = min(a, p.t);
	float u = clamp(b, -p.t, p.t);
	return g * sigmoid(p.s * g) * (u + 1.0);
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
#if IS_BINARY
		b = LDF(b2, row_addr(r, p.d1, p.d2, p.bo, p.bs0, p.bs1, p.bs2) + p.b_step * c);
#endif
		STF(b0, row_addr(r, p.d1, p.d2, p.yo, p.ys0, p.ys1, p.ys2) + 4u * c, apply(a, b));
	}
}
