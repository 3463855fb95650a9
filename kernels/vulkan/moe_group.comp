/* matmul_id's grouping for the grouped GEMM (matmul.comp -DIDS), one
 * workgroup: the T·k slots of ids [T, k] (slot s = t·k + j) counted per
 * expert in shared memory, start[E + 1] (the running sums) written from
 * word go of binding 5, then each slot placed in its expert's run of the
 * list that follows (start[E] + 1 words on). The order inside a run is
 * whatever the atomics give: every slot's product is computed alone, so it
 * changes no result. An id outside [0, E) is raised in the status buffer
 * and counted as expert 0 (as matvec.comp -DIDS does).
 *
 * -DWEIGH: y[t, n] = Σ_j weights[t, j] · c[t·k + j, n], j in order, one
 * invocation an element, c the grouped GEMM's slot rows (N floats each).
 * Bindings: 4 ids or c, 5 the grouping, or the slot weights; WEIGH: 0 y. */
#version 450
#include "common.glsl"

#define WG 256u
#define MAX_E 1024u /* plugins/vulkan/ops_matmul.c: VK_GROUPED_MAX_E */
layout(local_size_x = 256) in;

#ifndef WEIGH
layout(push_constant) uniform Push {
	uint T, k, E, ido, ids0, go;
} p;

shared uint runs[MAX_E];

uint expert_of(uint s)
{
	uint tok = s / p.k, j = s % p.k;
	int id = int(LD32(b4, p.ido + tok * p.ids0 + 4u * j));
	if (id < 0 || uint(id) >= p.E) {
		status_raise_slot(STATUS_EXPERT_IDS, tok, j, uint(id), p.E);
		id = 0;
	}
	return uint(id);
}

void main()
{
	uint t = gl_LocalInvocationID.x, slots = p.T * p.k;

	for (uint e = t; e < p.E; e += WG)
		runs[e] = 0u;
	barrier();
	for (uint s = t; s < slots; s += WG)
		atomicAdd(runs[expert_of(s)], 1u);
	barrier();
	if (t == 0u) { /* counts to starts: E is at most MAX_E */
		uint run = 0u;
		for (uint e = 0u; e < p.E; e++) {
			uint n = runs[e];
			b5.d[p.go + e] = run;
			runs[e] = run;
			run += n;
		}
		b5.d[p.go + p.E] = run;
	}
	barrier();
	for (uint s = t; s < slots; s += WG)
		b5.d[p.go + p.E + 1u + atomicAdd(runs[expert_of(s)], 1u)] = s;
}
#else
layout(push_constant) uniform Push {
	uint T, N, k, yo, ys0, co, swo, sws0;
} p;

void main()
{
	uint i = wg_linear() * WG + gl_LocalInvocationID.x;
	if (i >= p.T * p.N)
		return;
	uint tok = i / p.N, n = i % p.N;
	float sum = 0.0;
	for (uint j = 0u; j < p.k; j++)
		sum += LDF(b5, p.swo + tok * p.sws0 + 4u * j) * LDF(b4, p.co + 4u * ((tok * p.k + j) * p.N + n));
	STF(b0, p.yo + tok * p.ys0 + 4u * n, sum);
}
#endif
