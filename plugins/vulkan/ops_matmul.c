/* matmul and gemm. Small M (decode, M <= VK_MATVEC_MAX_M) goes to
 * matvec.comp: one workgroup per weight row, the row decoded once for all
 * activation rows (Q8_0/Q4_0/Q4_K/Q6_K a 32-element unit per invocation in
 * registers), reduced with subgroupAdd where the device has subgroup
 * arithmetic (the matvec_sg_* variants), else through shared memory. Larger M goes to the tiled shared-memory GEMM
 * (matmul.comp), which also serves gemm's f32 transposes. Weights of every
 * dtype are decoded in the kernels; activations stay f32 (no q8 rounding of
 * x, so results sit closer to the exact product than ggml's). */
#include "vk_plugin.h"

#define VK_MATVEC_MAX_M 8
#define VK_TILE 64
/* matmul_id takes the grouped GEMM from this many tokens on, with at most
 * this many experts (moe_group.comp counts them in shared memory). */
#define VK_GROUPED_MIN_T 16
#define VK_GROUPED_MAX_E 1024

/* matvec.comp's push constants; the fields after biaso are its -DIDS
 * variant's (matmul_id). */
struct matvec_push {
	uint32_t M, N, K, flags;
	uint32_t xo, xs0;
	uint32_t wo, ws0;
	uint32_t yo, ys0;
	uint32_t biaso;
	uint32_t xs1, wse, ys1, B; /* batch strides and count (1: one matmul); IDS: slot/expert strides */
	uint32_t biase;
	uint32_t ido, ids0;
	uint32_t swo, sws0;
	uint32_t k, E;
};

struct gemm_push {
	uint32_t M, N, K, flags;
	uint32_t ao, asm_, ask;
	uint32_t bo, bsn, bsk;
	uint32_t co, cs0;
	uint32_t biaso;
	float alpha, beta;
	uint32_t tiles_n;
	uint32_t abs_, bbs, cbs, B; /* batch strides and count (1: one product) */
};

static gllmk_status gemm_run(struct vk_ctx *c, enum vk_kernel k, struct vk_call *call, struct gemm_push *p)
{
	p->tiles_n = (p->N + VK_TILE - 1) / VK_TILE;
	p->B = p->B ? p->B : 1;
	uint64_t tiles_m = (p->M + VK_TILE - 1) / VK_TILE;
	return vk_dispatch(c, k, call, p, sizeof(*p), tiles_m * p->tiles_n * p->B);
}

/* Byte stride of a tensor's outer (batch) index: 0 for a 2-D one (one
 * batch) or a batch dim of 1 (one w for every batch). */
static uint32_t batch_stride(gllmk_t t)
{
	return t->ndim == 3 && t->shape[0] > 1 ? (uint32_t)t->stride[0] : 0;
}

/* matvec.comp's flag 4: x's offset and strides (bytes) are multiples of 16,
 * so the kernel may read x four elements a load. */
static uint32_t matvec_x_flag(uint32_t xo, uint32_t xs0, uint32_t xs1)
{
	return (xo | xs0 | xs1) % 16 == 0 ? 4u : 0u;
}

/* The 2-D matrix shape of x [M, K] or [B, M, K]: its last two dims. */
static uint32_t dim_from_end(gllmk_t t, int d)
{
	return d < t->ndim ? (uint32_t)t->shape[t->ndim - 1 - d] : 1;
}

static uint32_t stride_from_end(gllmk_t t, int d)
{
	return d < t->ndim && t->shape[t->ndim - 1 - d] > 1 ? (uint32_t)t->stride[t->ndim - 1 - d] : 0;
}

/* y [B, M, N] = x [B, M, K] · w[b]ᵀ (2-D x, y and w: B = 1, matmul), one
 * dispatch for every batch: the batch is the outer workgroup index. */
static gllmk_status matmul_run(struct vk_ctx *c, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	struct vk_call call = { 0 };
	uint32_t B = x->ndim == 3 ? (uint32_t)x->shape[0] : 1;
	uint32_t M = dim_from_end(x, 1);
	uint32_t K = dim_from_end(x, 0);
	uint32_t N = dim_from_end(w, 1);
	gllmk_status st = vk_bind_codebooks(c, &call);

	if (st)
		return st;
	uint32_t yo = vk_bind(c, &call, 0, y, true);
	uint32_t wo = vk_bind(c, &call, 1, w, false);
	uint32_t xo = vk_bind(c, &call, 2, x, false);
	uint32_t bo = bias ? vk_bind(c, &call, 3, bias, false) : 0;

	if (M <= VK_MATVEC_MAX_M) {
		struct matvec_push p = {
			.M = M, .N = N, .K = K, .flags = bias ? 1 : 0,
			.xo = xo, .xs0 = stride_from_end(x, 1),
			.wo = wo, .ws0 = (uint32_t)w->stride[w->ndim - 2],
			.yo = yo, .ys0 = stride_from_end(y, 1),
			.biaso = bo,
			.xs1 = batch_stride(x), .wse = batch_stride(w), .ys1 = batch_stride(y), .B = B,
		};
		p.flags |= matvec_x_flag(p.xo, p.xs0, p.xs1);
		const struct vk_weight_kernels *wk = &vk_weight_kernels[w->dtype];
		return vk_dispatch(c, vk_pick(c, wk->matvec, wk->matvec_sg), &call, &p, sizeof(p), (uint64_t)N * B);
	}
	struct gemm_push p = {
		.M = M, .N = N, .K = K, .flags = bias ? 1 : 0,
		.ao = xo, .asm_ = stride_from_end(x, 1), .ask = 4,
		.bo = wo, .bsn = (uint32_t)w->stride[w->ndim - 2], .bsk = w->dtype == GLLMK_F32 ? 4 : 0,
		.co = yo, .cs0 = stride_from_end(y, 1),
		.biaso = bo,
		.alpha = 1.0f,
		.abs_ = batch_stride(x), .bbs = batch_stride(w), .cbs = batch_stride(y), .B = B,
	};
	return gemm_run(c, vk_weight_kernels[w->dtype].matmul, &call, &p);
}

gllmk_status vk_matmul(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	return matmul_run(st, y, x, w, bias);
}

gllmk_status vk_gemm(void *st, gllmk_t cm, gllmk_t a, gllmk_t b, const gllmk_gemm_params *gp)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	uint32_t lda = (uint32_t)a->stride[0], ldb = (uint32_t)b->stride[0];
	struct gemm_push p = {
		.M = (uint32_t)cm->shape[0],
		.N = (uint32_t)cm->shape[1],
		.K = (uint32_t)(gp->trans_a ? a->shape[0] : a->shape[1]),
		.flags = gp->beta != 0.0f ? 2 : 0,
		.asm_ = gp->trans_a ? 4 : lda,
		.ask = gp->trans_a ? lda : 4,
		.bsn = gp->trans_b ? ldb : 4,
		.bsk = gp->trans_b ? 4 : ldb,
		.alpha = gp->alpha,
		.beta = gp->beta,
	};

	p.co = vk_bind(c, &call, 0, cm, true);
	p.bo = vk_bind(c, &call, 1, b, false);
	p.ao = vk_bind(c, &call, 2, a, false);
	p.cs0 = (uint32_t)cm->stride[0];
	return gemm_run(c, VK_KERNEL_MATMUL_GLLMK_F32, &call, &p);
}

/* ----------------------------------------------------------- matmul_id */

/* ids the host can read without waiting are checked here (vk_find_bad_index),
 * so a bad id is GLLMK_E_BOUNDS from the call itself. ids a device op is
 * still writing (moe_route's, in a model's layer) are not waited for: the
 * kernel clamps a bad id and raises it in the status buffer, and the next
 * sync returns GLLMK_E_BOUNDS naming token and slot (SPEC/VULKAN.md, "Bounds
 * checks"). The host check reads [T, k] as one run: other layouts are left
 * to the kernel. */
static gllmk_status check_ids_now(struct vk_ctx *c, gllmk_t ids, int64_t experts)
{
	const int64_t k = ids->shape[1];
	int64_t bad;
	int32_t value;

	if (ids->shape[0] > 1 && ids->stride[0] != 4 * k)
		return GLLMK_OK;
	bad = vk_find_bad_index(c, ids, (uint64_t)(ids->shape[0] * k), experts, &value);
	if (bad < 0)
		return GLLMK_OK;
	return c->host->set_error(GLLMK_E_BOUNDS,
				  "gllmk_matmul_id: ids[%lld, %lld] = %d (token %lld, slot %lld), w has %lld experts",
				  (long long)(bad / k), (long long)(bad % k), value, (long long)(bad / k),
				  (long long)(bad % k), (long long)experts);
}

/* The grouped GEMM's push constants (matmul.comp -DIDS) and moe_group.comp's. */
struct id_gemm_push {
	uint32_t T, N, K, flags;
	uint32_t xo, xs0, xs1, k;
	uint32_t wo, ws0, wse, E;
	uint32_t yo, ys0, ys1;
	uint32_t biaso, biase;
	uint32_t tiles_n, tiles_m, go;
};
struct group_push {
	uint32_t T, k, E, ido, ids0, go;
};
struct weigh_push {
	uint32_t T, N, k, yo, ys0, co, swo, sws0;
};

/* The scratch buffer of a grouped matmul_id: the grouping (start[E + 1],
 * the slot list) from word 0, then, with slot weights, each slot's row of
 * N floats from byte rows_at; its size in *bytes. */
static uint64_t grouped_scratch(uint64_t E, uint64_t slots, uint64_t N, gllmk_t sw, uint64_t *bytes)
{
	const uint64_t rows_at = (E + 1 + slots) * 4 / 256 * 256 + 256;

	*bytes = rows_at + (sw ? 4 * slots * N : 0);
	return rows_at;
}

/* Whether matmul_id takes the grouped GEMM: many tokens, experts that
 * moe_group.comp can count, and a scratch buffer one binding holds (its
 * offsets are 32-bit). */
static bool use_grouped(const struct vk_ctx *c, gllmk_t ids, gllmk_t w, gllmk_t sw)
{
	uint64_t bytes;

	grouped_scratch((uint64_t)w->shape[0], (uint64_t)(ids->shape[0] * ids->shape[1]), (uint64_t)w->shape[1], sw,
			&bytes);
	return ids->shape[0] >= VK_GROUPED_MIN_T && w->shape[0] <= VK_GROUPED_MAX_E && bytes <= c->max_range &&
	       bytes <= UINT32_MAX;
}

/* moe_group: the slots sorted by expert into the scratch buffer. */
static gllmk_status group_slots(struct vk_ctx *c, gllmk_t ids, uint32_t E)
{
	struct vk_call call = { 0 };
	struct group_push gp = { .T = (uint32_t)ids->shape[0], .k = (uint32_t)ids->shape[1], .E = E,
				 .ids0 = (uint32_t)ids->stride[0] };

	gp.ido = vk_bind(c, &call, 4, ids, false);
	vk_bind_buf(&call, 5, c->scratch, true);
	return vk_dispatch(c, VK_KERNEL_MOE_GROUP, &call, &gp, sizeof(gp), 1);
}

/* moe_weigh: y[t, :] = Σ_j sw[t, j] · the slot row (t, j) at rows_at. */
static gllmk_status weigh_slots(struct vk_ctx *c, gllmk_t y, gllmk_t sw, uint32_t k, uint32_t N, uint64_t rows_at)
{
	struct vk_call call = { 0 };
	const uint32_t T = (uint32_t)y->shape[0];
	struct weigh_push wp = { .T = T, .N = N, .k = k, .ys0 = (uint32_t)y->stride[0], .co = (uint32_t)rows_at,
				 .sws0 = (uint32_t)sw->stride[0] };

	wp.yo = vk_bind(c, &call, 0, y, true);
	vk_bind_buf(&call, 4, c->scratch, false);
	wp.swo = vk_bind(c, &call, 5, sw, false);
	return vk_dispatch(c, VK_KERNEL_MOE_WEIGH, &call, &wp, sizeof(wp), ((uint64_t)T * N + 255) / 256);
}

/* Many tokens (prefill): the slots grouped by expert on the device
 * (moe_group), one tiled GEMM over every expert's group (matmul.comp
 * -DIDS), then, with slot weights, the slots folded into y (moe_weigh):
 * each weight tile is decoded once per 64 slots, where the per-row
 * matvec decodes it once per token. */
static gllmk_status matmul_id_grouped(struct vk_ctx *c, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias,
				      gllmk_t sw)
{
	const uint32_t k = (uint32_t)ids->shape[1], E = (uint32_t)w->shape[0], N = (uint32_t)w->shape[1];
	const uint32_t slots = (uint32_t)ids->shape[0] * k;
	uint64_t bytes;
	const uint64_t rows_at = grouped_scratch(E, slots, N, sw, &bytes);
	struct vk_call gemm = { 0 };
	struct id_gemm_push p = {
		.T = (uint32_t)ids->shape[0], .N = N, .K = (uint32_t)w->shape[2], .flags = bias ? 1u : 0u,
		.xs0 = (uint32_t)x->stride[0], .xs1 = x->ndim == 3 ? (uint32_t)x->stride[1] : 0,
		.k = k, .ws0 = (uint32_t)w->stride[1], .wse = (uint32_t)w->stride[0], .E = E,
		.biase = bias ? (uint32_t)bias->stride[0] : 0,
		.tiles_n = (N + VK_TILE - 1) / VK_TILE, .tiles_m = (slots + VK_TILE - 1) / VK_TILE,
		/* with slot weights each slot's row goes to scratch, for weigh_slots */
		.yo = (uint32_t)rows_at, .ys0 = 4 * k * N, .ys1 = 4 * N,
	};
	gllmk_status s = vk_scratch(c, bytes);

	if (!s)
		s = vk_bind_codebooks(c, &gemm);
	if (!s)
		s = group_slots(c, ids, E);
	if (s)
		return s;
	if (sw) {
		vk_bind_buf(&gemm, 0, c->scratch, true);
	} else {
		p.yo = vk_bind(c, &gemm, 0, y, true);
		p.ys0 = (uint32_t)y->stride[0];
		p.ys1 = (uint32_t)y->stride[1];
	}
	p.wo = vk_bind(c, &gemm, 1, w, false);
	p.xo = vk_bind(c, &gemm, 2, x, false);
	p.biaso = bias ? vk_bind(c, &gemm, 3, bias, false) : 0;
	vk_bind_buf(&gemm, 4, c->scratch, false);
	s = vk_dispatch(c, vk_weight_kernels[w->dtype].matmul_id, &gemm, &p, sizeof(p),
			(uint64_t)E * p.tiles_m * p.tiles_n);
	return s || !sw ? s : weigh_slots(c, y, sw, k, N, rows_at);
}

/* Few tokens (decoding): one workgroup per (row n, token), matvec.comp
 * -DIDS reading the ids on the device; many: matmul_id_grouped. Strides of
 * size-1 dims are never used (index 0 only). */
gllmk_status vk_matmul_id(void *st, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t ids, gllmk_t bias, gllmk_t sw)
{
	struct vk_ctx *c = st;
	struct vk_call call = { 0 };
	const uint32_t T = (uint32_t)ids->shape[0], N = (uint32_t)w->shape[1];
	struct matvec_push p = {
		.M = T, .N = N, .K = (uint32_t)w->shape[2],
		.flags = (bias ? 1u : 0u) | (sw ? 2u : 0u),
		.xs0 = (uint32_t)x->stride[0], .xs1 = x->ndim == 3 ? (uint32_t)x->stride[1] : 0,
		.ws0 = (uint32_t)w->stride[1], .wse = (uint32_t)w->stride[0],
		.ys0 = (uint32_t)y->stride[0], .ys1 = sw ? 0 : (uint32_t)y->stride[1],
		.biase = bias ? (uint32_t)bias->stride[0] : 0,
		.ids0 = (uint32_t)ids->stride[0],
		.sws0 = sw ? (uint32_t)sw->stride[0] : 0,
		.k = (uint32_t)ids->shape[1], .E = (uint32_t)w->shape[0],
	};
	const struct vk_weight_kernels *wk = &vk_weight_kernels[w->dtype];
	gllmk_status s = check_ids_now(c, ids, w->shape[0]);

	if (!s && use_grouped(c, ids, w, sw))
		return matmul_id_grouped(c, y, x, w, ids, bias, sw);
	if (!s)
		s = vk_bind_codebooks(c, &call);
	if (s)
		return s;
	p.yo = vk_bind(c, &call, 0, y, true);
	p.wo = vk_bind(c, &call, 1, w, false);
	p.xo = vk_bind(c, &call, 2, x, false);
	p.biaso = bias ? vk_bind(c, &call, 3, bias, false) : 0;
	p.flags |= matvec_x_flag(p.xo, p.xs0, p.xs1);
	p.ido = vk_bind(c, &call, 4, ids, false);
	p.swo = sw ? vk_bind(c, &call, 5, sw, false) : 0;
	return vk_dispatch(c, vk_pick(c, wk->matvec_id, wk->matvec_id_sg), &call, &p, sizeof(p), (uint64_t)N * T);
}

/* ------------------------------------------------------ matmul_batched */

gllmk_status vk_matmul_batched(void *st, gllmk_t y, gllmk_t x, gllmk_t w)
{
	return matmul_run(st, y, x, w, NULL);
}
