/* glu's fused form as the split one, shared by every plugin (CPU framework,
 * Vulkan, OpenCL): SPEC/OPERATORS.md "glu". A fused gate row is
 * [gate half, up half] ([up half, gate half] when swapped); seen as two
 * views of y's shape, the second N elements after the first, act(gate)·up
 * is the same binary op as the split form. y is f32 and contiguous in its
 * innermost dimension (the core checked it), so a half is N·4 bytes.
 */
#ifndef GLLMK_PLUGINS_GLU_VIEWS_H
#define GLLMK_PLUGINS_GLU_VIEWS_H

#include "gllmk.h"

static inline void glu_fused_views(const gllmk_tensor *y, const gllmk_tensor *gate, int swapped, gllmk_tensor *g,
				   gllmk_tensor *u)
{
	const int64_t n = y->shape[y->ndim - 1];
	const uint64_t half = (uint64_t)n * sizeof(float);

	*g = *gate;
	g->shape[g->ndim - 1] = n;
	*u = *g;
	if (swapped)
		g->offset += half;
	else
		u->offset += half;
}

#endif
