/* The order of top_k, moe_route (and sample): larger value first, ties to
 * the lower index, NaN after every number. Selection by k passes: pass j
 * takes the best entry that ranks after pass j-1's pick, found by each
 * invocation over its stride of the row and then a tree over the
 * workgroup. Needs WG (a power of two) and local_size_x = WG. */

const uint RANK_NONE = 0xFFFFFFFFu;

bool ranks_before(float av, uint ai, float bv, uint bi)
{
	bool an = is_nan_bits(floatBitsToUint(av)), bn = is_nan_bits(floatBitsToUint(bv));

	if (an != bn)
		return bn;
	if (!an && av != bv)
		return av > bv;
	return ai < bi;
}

/* (v, i) is better than the best so far (bi RANK_NONE: none yet). */
bool rank_better(float v, uint i, float bv, uint bi)
{
	return bi == RANK_NONE || ranks_before(v, i, bv, bi);
}

shared float rank_v[WG];
shared uint rank_i[WG];

/* Every invocation offers its best (bi RANK_NONE: none); every invocation
 * gets the workgroup's best. Ends with a barrier, so rank_v/rank_i are free
 * again once it returns. */
void rank_reduce(inout float bv, inout uint bi)
{
	uint t = gl_LocalInvocationID.x;

	rank_v[t] = bv;
	rank_i[t] = bi;
	barrier();
	for (uint s = WG / 2u; s > 0u; s >>= 1) {
		if (t < s && rank_i[t + s] != RANK_NONE && rank_better(rank_v[t + s], rank_i[t + s], rank_v[t], rank_i[t])) {
			rank_v[t] = rank_v[t + s];
			rank_i[t] = rank_i[t + s];
		}
		barrier();
	}
	bv = rank_v[0];
	bi = rank_i[0];
	barrier();
}
