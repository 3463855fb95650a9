/* Index data only a GPU plugin sees, checked on the host once the plugin
 * has read it back (the Vulkan plugin maps or copies it, the OpenCL plugin
 * reads it with a blocking read): SPEC/VULKAN.md and SPEC/OPENCL.md,
 * "Bounds checks". Compiled into both plugins. */
#include "gpu_common.h"

/* One sequence's cu_q step, kv_len and pages; GLLMK_E_BOUNDS names it. */
static gllmk_status check_sequence(const gllmk_host *host, const struct gpu_varlen *v, int64_t seq)
{
	const int32_t *cu = v->cu_q, *row = v->tables + seq * v->table_words;
	int64_t n = v->kv_len[seq];

	if (cu[seq + 1] < cu[seq] || cu[seq + 1] > v->rows)
		return host->set_error(GLLMK_E_BOUNDS,
				       "%s: sequence %lld: cu_q[%lld] = %d after cu_q[%lld] = %d (q has %lld rows)",
				       v->fn, (long long)seq, (long long)seq + 1, cu[seq + 1], (long long)seq, cu[seq],
				       (long long)v->rows);
	if (n < 0 || n > v->pages * v->page)
		return host->set_error(GLLMK_E_BOUNDS,
				       "%s: sequence %lld: kv_len[%lld] = %lld, its block table holds %lld tokens", v->fn,
				       (long long)seq, (long long)seq, (long long)n, (long long)(v->pages * v->page));
	if (n > v->mask_cols)
		return host->set_error(GLLMK_E_BOUNDS, "%s: sequence %lld: kv_len[%lld] = %lld, mask has %lld columns",
				       v->fn, (long long)seq, (long long)seq, (long long)n, (long long)v->mask_cols);
	for (int64_t j = 0; j < (n + v->page - 1) / v->page; j++)
		if (row[j] < 0 || row[j] >= v->blocks)
			return host->set_error(GLLMK_E_BOUNDS,
					       "%s: sequence %lld: block_tables[%lld, %lld] = %d, k and v have %lld blocks",
					       v->fn, (long long)seq, (long long)seq, (long long)j, row[j],
					       (long long)v->blocks);
	return GLLMK_OK;
}

gllmk_status gpu_check_varlen(const gllmk_host *host, const struct gpu_varlen *v)
{
	gllmk_status st = GLLMK_OK;

	if (v->cu_q[0] != 0)
		return host->set_error(GLLMK_E_BOUNDS, "%s: cu_q[0] = %d, must be 0", v->fn, v->cu_q[0]);
	for (int64_t s = 0; !st && s < v->seqs; s++)
		st = check_sequence(host, v, s);
	if (!st && v->cu_q[v->seqs] != v->rows)
		st = host->set_error(GLLMK_E_BOUNDS, "%s: cu_q[%lld] = %d, q has %lld rows", v->fn, (long long)v->seqs,
				     v->cu_q[v->seqs], (long long)v->rows);
	return st;
}
