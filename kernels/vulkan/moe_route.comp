/* MoE routing, one workgroup per token (SPEC/OPERATORS.md, moe_route):
 * probabilities by the gating (softmax over E: a max and a sum reduced
 * first), selection scores = probs + bias, grouped: only the topk_group
 * best groups eligible (the others read as NaN, which ranks last), then k
 * selection passes (rank.glsl); thread 0 turns the picks' probs into
 * weights. Bindings: 0 ids [T, k], 1 logits [T, E], 2 weights [T, k],
 * 3 bias [E] (has_bias). */
#version 450
#include "common.glsl"

#define WG 256u
layout(local_size_x = 256) in;

#include "rank.glsl"

#define GATING_SOFTMAX 0
#define GATING_SIGMOID 1
#define GATING_SOFTMAX_AFTER 2
#define MAX_GROUPS 256u /* the core's limit */
#define NORM_MIN_SUM 6.103515625e-5 /* llama.cpp's floor under the sum */

layout(push_constant) uniform Push {
	uint e, tokens, k, has_bias;
	uint lo, ls0, io, is0, wo, ws0, bo;
	int gating, n_group, topk_group, norm;
	float scale;
} p;

shared float red[WG];
shared float gscore[MAX_GROUPS];
shared uint geligible[MAX_GROUPS];

float row_max, row_inv_sum;

/* The sum (or max) of every invocation's v. */
float reduce_f(float v, bool is_max)
{
	uint t = gl_LocalInvocationID.x;

	red[t] = v;
	barrier();
	for (uint s = WG / 2u; s > 0u; s >>= 1) {
		if (t < s)
			red[t] = is_max ? max(red[t], red[t + s]) : red[t] + red[t + s];
		barrier();
	}
	float r = red[0];
	barrier();
	return r;
}

float logit(uint l, uint i)
{
	return LDF(b1, l + 4u * i);
}

float prob(uint l, uint i)
{
	float x = logit(l, i);

	if (p.gating == GATING_SOFTMAX)
		return exp(x - row_max) * row_inv_sum;
	if (p.gating == GATING_SIGMOID) {
		float e = exp(-abs(x));
		float r = 1.0 / (1.0 + e);
		return x >= 0.0 ? r : e * r;
	}
	return x;
}

float selection(uint l, uint i)
{
	return prob(l, i) + (p.has_bias != 0u ? LDF(b3, p.bo + 4u * i) : 0.0);
}

/* Grouped: group g's score is the sum of its two best selection scores;
 * geligible[g] = 1 for the topk_group best groups. */
void rank_groups(uint l)
{
	uint t = gl_LocalInvocationID.x, groups = uint(p.n_group), per = p.e / groups;

	for (uint g = t; g < groups; g += WG) {
		float v0 = 0.0, v1 = 0.0;
		uint i0 = RANK_NONE, i1 = RANK_NONE;

		for (uint i = g * per; i < (g + 1u) * per; i++) {
			float v = selection(l, i);
			if (rank_better(v, i, v0, i0)) {
				v1 = v0;
				i1 = i0;
				v0 = v;
				i0 = i;
			} else if (rank_better(v, i, v1, i1)) {
				v1 = v;
				i1 = i;
			}
		}
		gscore[g] = v0 + v1;
	}
	barrier();
	for (uint g = t; g < groups; g += WG) {
		uint better = 0u;
		for (uint h = 0u; h < groups; h++)
			better += ranks_before(gscore[h], h, gscore[g], g) ? 1u : 0u;
		geligible[g] = better < uint(p.topk_group) ? 1u : 0u;
	}
	barrier();
}

void main()
{
	uint tok = wg_linear();
	if (tok >= p.tokens)
		return;
	uint t = gl_LocalInvocationID.x, l = p.lo + tok * p.ls0;
	uint ids = (p.io + tok * p.is0) / 4u, w = p.wo + tok * p.ws0;
	bool grouped = p.n_group > 1;
	uint per = grouped ? p.e / uint(p.n_group) : p.e;

	if (p.gating == GATING_SOFTMAX) {
		float m = NEG_INF, s = 0.0;
		for (uint i = t; i < p.e; i += WG)
			m = max(m, logit(l, i));
		row_max = reduce_f(m, true);
		for (uint i = t; i < p.e; i += WG)
			s += exp(logit(l, i) - row_max);
		row_inv_sum = 1.0 / reduce_f(s, false);
	}
	if (grouped)
		rank_groups(l);

	float pv = 0.0;
	uint pi = RANK_NONE;
	for (uint j = 0u; j < p.k; j++) {
		float bv = 0.0;
		uint bi = RANK_NONE;

		for (uint i = t; i < p.e; i += WG) {
			float v = grouped && geligible[i / per] == 0u ? uintBitsToFloat(0x7FC00000u) : selection(l, i);
			if ((pi == RANK_NONE || ranks_before(pv, pi, v, i)) && rank_better(v, i, bv, bi)) {
				bv = v;
				bi = i;
			}
		}
		rank_reduce(bv, bi);
		if (t == 0u) {
			b0.d[ids + j] = bi;
			STF(b2, w + 4u * j, prob(l, bi));
		}
		pv = bv;
		pi = bi;
	}
	if (t != 0u)
		return;
	/* the weights, by the one invocation that wrote them */
	if (p.gating == GATING_SOFTMAX_AFTER) {
		float m = NEG_INF, s = 0.0;
		for (uint j = 0u; j < p.k; j++)
			m = max(m, LDF(b2, w + 4u * j));
		for (uint j = 0u; j < p.k; j++) {
			float e = exp(LDF(b2, w + 4u * j) - m);
			STF(b2, w + 4u * j, e);
			s += e;
		}
		for (uint j = 0u; j < p.k; j++)
			STF(b2, w + 4u * j, LDF(b2, w + 4u * j) / s);
	}
	float f = p.scale;
	if (p.norm != 0) {
		float s = 0.0;
		for (uint j = 0u; j < p.k; j++)
			s += LDF(b2, w + 4u * j);
		f = p.scale / max(s, NORM_MIN_SUM);
	}
	for (uint j = 0u; j < p.k; j++)
		STF(b2, w + 4u * j, LDF(b2, w + 4u * j) * f);
}
