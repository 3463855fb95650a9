/* What the two GPU plugins (plugins/vulkan, plugins/opencl) share on the
 * host side. Header-only: each plugin is one shared module and links
 * nothing of the other. */
#ifndef GLLMK_GPU_COMMON_H
#define GLLMK_GPU_COMMON_H

#include "gllmk_plugin.h"

/* GPU_IF_<column>(x): x for a dtype whose abi/gllmk_dtypes.def column is 1;
 * the per-dtype kernel tables (ops_common.c) keep the WEIGHT or KV dtypes. */
#define GPU_IF_0(x)
#define GPU_IF_1(x) x

/* convert's float dtypes as an index 0..2 (f32, f16, bf16): its kernels
 * are the 3 x 3 table convert_<src>_<dst> of kernels.list. */
static inline int gpu_float_slot(int32_t dtype)
{
	return dtype == GLLMK_F32 ? 0 : dtype == GLLMK_F16 ? 1 : 2;
}

/* attention_varlen's index data, read to the host: cu_q (seqs + 1 i32),
 * kv_len (seqs) and the block tables (row s at tables + s * table_words),
 * with what they index: q's rows, k's blocks of `page` tokens, `pages`
 * entries per table, the mask's columns (INT64_MAX: no mask). */
struct gpu_varlen {
	const char *fn;
	int64_t seqs, rows, page, blocks, pages, mask_cols;
	const int32_t *cu_q, *kv_len, *tables;
	int64_t table_words;
};

/* cu_q starts at 0, never decreases and ends at the query rows; each
 * kv_len is within its table (0 .. pages * page) and the mask's columns;
 * the pages each sequence uses are blocks of k. GLLMK_E_BOUNDS (through
 * host->set_error) names the first offence and its sequence. In
 * index_checks.c. */
gllmk_status gpu_check_varlen(const gllmk_host *host, const struct gpu_varlen *v);

#endif
