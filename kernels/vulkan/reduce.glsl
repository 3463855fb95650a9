/* Workgroup-wide reductions (WG threads, a power of two). Every invocation
 * of the workgroup must call them. With -DSUBGROUP each subgroup reduces in
 * registers (subgroupAdd/Max) and one shared slot per subgroup is combined:
 * one barrier pair instead of log2(WG). Without it, a shared-memory tree. */
shared float red_f[WG];

#ifdef SUBGROUP
#define WG_REDUCE(name, sg_op, OP)                          \
float name(float v)                                         \
{                                                           \
	float s = sg_op(v);                                 \
	if (subgroupElect())                                \
		red_f[gl_SubgroupID] = s;                   \
	barrier();                                          \
	float r = red_f[0];                                 \
	for (uint g = 1u; g < gl_NumSubgroups; g++)         \
		r = OP(r, red_f[g]);                        \
	barrier();                                          \
	return r;                                           \
}
#else
#define WG_REDUCE(name, sg_op, OP)                          \
float name(float v)                                         \
{                                                           \
	uint t = gl_LocalInvocationID.x;                    \
	red_f[t] = v;                                       \
	barrier();                                          \
	for (uint s = WG / 2u; s > 0u; s >>= 1) {           \
		if (t < s)                                  \
			red_f[t] = OP(red_f[t], red_f[t + s]); \
		barrier();                                  \
	}                                                   \
	float r = red_f[0];                                 \
	barrier();                                          \
	return r;                                           \
}
#endif

float op_add(float a, float b)
{
	return a + b;
}

WG_REDUCE(wg_sum, subgroupAdd, op_add)
WG_REDUCE(wg_max, subgroupMax, max)
