/* gllmk_weights_prepare on the CPU plugins, and what reads the prepared
 * layouts (prepared.h): the copies, their decoding back to plain rows
 * (get_rows, dequantize and the GEMMs' packing call it), the portable
 * group kernels, and matmul at small M on the ISA's group kernel.
 *
 * Why layouts of their own: at M = 1 the plain q4_0 and q4_K dots spend
 * most of their uops on one row at a time (the nibbles, the activation's
 * offset or the mins' Σx, a horizontal sum per row, q4_K's 6-bit scales),
 * and on Zen 3 that, not DRAM, bounded a Q4_0 or Q4_K_M decode. A group
 * kernel shares each activation load, scale conversion and Σx term among
 * 8 rows, and its sums land one row per lane with no horizontal sum
 * (SPEC/CPU.md, "Prepared weights").
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_view.h"
#include "fp16.h"
#include "prepared.h"
#include "quant_blocks.h"

static const char *const dtype_names[GLLMK_DTYPE_LIMIT] = {
#define GLLMK_DTYPE(e, id, name, ...) [id] = #name,
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

/* Row r's nc 4-byte chunks of the plain bytes in at chunks[c][r], and
 * back: how every layout lays out its quant bytes. */
static void chunks_pack(const uint8_t *in, int nc, int r, uint8_t (*chunks)[CPU_GROUP_ROWS][4])
{
	for (int c = 0; c < nc; c++)
		memcpy(chunks[c][r], in + 4 * c, 4);
}

static void chunks_unpack(const uint8_t (*chunks)[CPU_GROUP_ROWS][4], int nc, int r, uint8_t *out)
{
	for (int c = 0; c < nc; c++)
		memcpy(out + 4 * c, chunks[c][r], 4);
}

/* ----------------------------------------------------------- q4_0x8 */

/* Lanes [l0, l1) of nb units as plain rows at out, row_bytes apart. */
static void unpack_q4_0x8(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes)
{
	const struct cpu_q4_0x8 *u = units;

	for (int64_t b = 0; b < nb; b++)
		for (int l = l0; l < l1; l++) {
			struct block_q4_0 *blk = (struct block_q4_0 *)(out + (l - l0) * row_bytes) + b;

			blk->d = u[b].d[l];
			chunks_unpack(u[b].qs, 4, l, blk->qs);
		}
}

/* Rows [8g, 8g + 8) of the plain q4_0 tensor at src into group g of dst. */
static void pack_q4_0x8(const void *rows, int64_t nb, void *units)
{
	const struct block_q4_0 *src = rows;
	struct cpu_q4_0x8 *dst = units;

	for (int64_t b = 0; b < nb; b++)
		for (int r = 0; r < CPU_GROUP_ROWS; r++) {
			const struct block_q4_0 *blk = &src[r * nb + b];

			dst[b].d[r] = blk->d;
			chunks_pack(blk->qs, 4, r, dst[b].qs);
		}
}

/* --------------------------------------------------- q4_Kx8, q5_Kx8 */

/* A list of 64 6-bit fields as prepared.h stores it, and back. */
static void fields6_store(const uint8_t v[64], uint8_t lo[32], uint8_t hi[16])
{
	for (int i = 0; i < 32; i++)
		lo[i] = (uint8_t)((v[i] & 15) | (v[32 + i] & 15) << 4);
	for (int i = 0; i < 16; i++)
		hi[i] = (uint8_t)(v[i] >> 4 | (v[16 + i] >> 4) << 2 | (v[32 + i] >> 4) << 4 | (v[48 + i] >> 4) << 6);
}

static void fields6_load(const uint8_t lo[32], const uint8_t hi[16], uint8_t v[64])
{
	for (int i = 0; i < 16; i++) {
		v[i] = (uint8_t)((lo[i] & 15) | (hi[i] & 3) << 4);
		v[16 + i] = (uint8_t)((lo[16 + i] & 15) | (hi[i] >> 2 & 3) << 4);
		v[32 + i] = (uint8_t)(lo[i] >> 4 | (hi[i] >> 4 & 3) << 4);
		v[48 + i] = (uint8_t)(lo[16 + i] >> 4 | (hi[i] >> 6) << 4);
	}
}

/* Row r's scale of sub-block s at vs[8s + r], its min at
 * vm[16(s / 2) + 2r + s % 2] (prepared.h). */
static void kx8_fields(const struct cpu_kx8_head *h, uint8_t vs[64], uint8_t vm[64])
{
	fields6_load(h->scales_lo, h->scales_hi, vs);
	fields6_load(h->mins_lo, h->mins_hi, vm);
}

/* Where row r's field of sub-block (or group) sb is in a list of pairs
 * (prepared.h: q4_Kx8's mins, q2_Kx8's and q3_Kx8's scales). */
static int pair_at(int r, int sb)
{
	return 16 * (sb / 2) + 2 * r + sb % 2;
}

/* q4_K's and q5_K's d, dmin and 12 scale bytes of lane l of a unit
 * (k4_scales_mins' inverse, quant_blocks.h), at blk. */
_Static_assert(offsetof(struct block_q5_K, scales) == offsetof(struct block_q4_K, scales) &&
	       offsetof(struct block_q5_K, dmin) == offsetof(struct block_q4_K, dmin), "q5_K head");

static void kx8_head_unpack(const struct cpu_kx8_head *h, const uint8_t vs[64], const uint8_t vm[64], int l,
			    struct block_q4_K *blk)
{
	blk->d = h->d[l];
	blk->dmin = h->dmin[l];
	for (int j = 0; j < 4; j++) {
		const uint8_t sc = vs[8 * j + l], sc4 = vs[8 * (j + 4) + l];
		const uint8_t mn = vm[pair_at(l, j)], mn4 = vm[pair_at(l, j + 4)];

		blk->scales[j] = (uint8_t)(sc | (sc4 >> 4) << 6);
		blk->scales[j + 4] = (uint8_t)(mn | (mn4 >> 4) << 6);
		blk->scales[j + 8] = (uint8_t)((sc4 & 15) | (mn4 & 15) << 4);
	}
}

/* Row r's d, dmin, scales and mins into a unit's head and its fields
 * vs, vm (stored once all 8 rows are in: kx8_head_store). */
static void kx8_head_pack(const struct block_q4_K *blk, int r, struct cpu_kx8_head *h, uint8_t vs[64],
			  uint8_t vm[64])
{
	uint32_t sm[4];
	uint8_t sc[8], mn[8];

	k4_scales_mins(blk->scales, sm);
	memcpy(sc, sm, 8);
	memcpy(mn, sm + 2, 8);
	for (int sb = 0; sb < 8; sb++) {
		vs[8 * sb + r] = sc[sb];
		vm[pair_at(r, sb)] = mn[sb];
	}
	h->d[r] = blk->d;
	h->dmin[r] = blk->dmin;
}

static void kx8_head_store(const uint8_t vs[64], const uint8_t vm[64], struct cpu_kx8_head *h)
{
	fields6_store(vs, h->scales_lo, h->scales_hi);
	fields6_store(vm, h->mins_lo, h->mins_hi);
}

/* The 4-bit fields of lane l of qs[4][8][8][4] as q4_K's qs[128], and back. */
static void kx8_qs_unpack(const uint8_t (*qs)[8][CPU_GROUP_ROWS][4], int l, uint8_t out[128])
{
	chunks_unpack(qs[0], 32, l, out);
}

static void kx8_qs_pack(const uint8_t in[128], int r, uint8_t (*qs)[8][CPU_GROUP_ROWS][4])
{
	chunks_pack(in, 32, r, qs[0]);
}

/* Lanes [l0, l1) of nb q4_Kx8 (five 0) or q5_Kx8 (five 1) units as
 * plain rows at out, row_bytes apart. */
static void kx8_unpack(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes, int five)
{
	const size_t unit = five ? sizeof(struct cpu_q5_Kx8) : sizeof(struct cpu_q4_Kx8);
	const size_t block = five ? sizeof(struct block_q5_K) : sizeof(struct block_q4_K);

	for (int64_t b = 0; b < nb; b++) {
		const char *ub = (const char *)units + b * unit;
		const struct cpu_q5_Kx8 *u5 = (const struct cpu_q5_Kx8 *)ub;
		uint8_t vs[64], vm[64];

		kx8_fields((const struct cpu_kx8_head *)ub, vs, vm);
		for (int l = l0; l < l1; l++) {
			char *blk = out + (l - l0) * row_bytes + b * (int64_t)block;

			kx8_head_unpack((const struct cpu_kx8_head *)ub, vs, vm, l, (struct block_q4_K *)blk);
			if (!five) {
				kx8_qs_unpack(((const struct cpu_q4_Kx8 *)ub)->qs, l, ((struct block_q4_K *)blk)->qs);
				continue;
			}
			kx8_qs_unpack(u5->qs, l, ((struct block_q5_K *)blk)->qs);
			chunks_unpack(u5->qh, 8, l, ((struct block_q5_K *)blk)->qh);
		}
	}
}

/* Rows 8g..8g+7 of nb q4_K (five 0) or q5_K (five 1) blocks into group
 * g's units. */
static void kx8_pack(const void *rows, int64_t nb, void *units, int five)
{
	const size_t unit = five ? sizeof(struct cpu_q5_Kx8) : sizeof(struct cpu_q4_Kx8);
	const size_t block = five ? sizeof(struct block_q5_K) : sizeof(struct block_q4_K);

	for (int64_t b = 0; b < nb; b++) {
		char *ub = (char *)units + b * unit;
		struct cpu_q5_Kx8 *u5 = (struct cpu_q5_Kx8 *)ub;
		uint8_t vs[64], vm[64];

		for (int r = 0; r < CPU_GROUP_ROWS; r++) {
			const char *blk = (const char *)rows + (r * nb + b) * (int64_t)block;

			kx8_head_pack((const struct block_q4_K *)blk, r, (struct cpu_kx8_head *)ub, vs, vm);
			if (!five) {
				kx8_qs_pack(((const struct block_q4_K *)blk)->qs, r, ((struct cpu_q4_Kx8 *)ub)->qs);
				continue;
			}
			kx8_qs_pack(((const struct block_q5_K *)blk)->qs, r, u5->qs);
			chunks_pack(((const struct block_q5_K *)blk)->qh, 8, r, u5->qh);
		}
		kx8_head_store(vs, vm, (struct cpu_kx8_head *)ub);
	}
}

static void unpack_q4_Kx8(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes)
{
	kx8_unpack(units, l0, l1, nb, out, row_bytes, 0);
}

static void unpack_q5_Kx8(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes)
{
	kx8_unpack(units, l0, l1, nb, out, row_bytes, 1);
}

static void pack_q4_Kx8(const void *rows, int64_t nb, void *units)
{
	kx8_pack(rows, nb, units, 0);
}

static void pack_q5_Kx8(const void *rows, int64_t nb, void *units)
{
	kx8_pack(rows, nb, units, 1);
}

/* --------------------------------------------------------- iq4_xsx8 */

static void unpack_iq4_xsx8(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes)
{
	const struct cpu_iq4_xsx8 *u = units;

	for (int64_t b = 0; b < nb; b++) {
		uint8_t vs[64];

		fields6_load(u[b].scales_lo, u[b].scales_hi, vs);
		for (int l = l0; l < l1; l++) {
			struct block_iq4_xs *blk = (struct block_iq4_xs *)(out + (l - l0) * row_bytes) + b;

			blk->d = u[b].d[l];
			blk->scales_h = 0;
			for (int sb = 0; sb < 8; sb++) {
				if (sb % 2 == 0)
					blk->scales_l[sb / 2] = 0;
				blk->scales_l[sb / 2] |= (uint8_t)((vs[8 * sb + l] & 15) << 4 * (sb % 2));
				blk->scales_h |= (uint16_t)((vs[8 * sb + l] >> 4) << 2 * sb);
			}
			chunks_unpack(u[b].qs[0], 32, l, blk->qs);
		}
	}
}

static void pack_iq4_xsx8(const void *rows, int64_t nb, void *units)
{
	const struct block_iq4_xs *src = rows;
	struct cpu_iq4_xsx8 *dst = units;

	for (int64_t b = 0; b < nb; b++) {
		uint8_t vs[64];

		for (int r = 0; r < CPU_GROUP_ROWS; r++) {
			const struct block_iq4_xs *blk = &src[r * nb + b];

			dst[b].d[r] = blk->d;
			for (int sb = 0; sb < 8; sb++)
				vs[8 * sb + r] = (uint8_t)iq4_xs_ls(blk, sb);
			chunks_pack(blk->qs, 32, r, dst[b].qs[0]);
		}
		fields6_store(vs, dst[b].scales_lo, dst[b].scales_hi);
	}
}

/* --------------------------------------------------- q2_Kx8, q3_Kx8 */

static void unpack_q2_Kx8(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes)
{
	const struct cpu_q2_Kx8 *u = units;

	for (int64_t b = 0; b < nb; b++)
		for (int l = l0; l < l1; l++) {
			struct block_q2_K *blk = (struct block_q2_K *)(out + (l - l0) * row_bytes) + b;

			blk->d = u[b].d[l];
			blk->dmin = u[b].dmin[l];
			for (int p = 0; p < 8; p++)
				memcpy(blk->scales + 2 * p, u[b].scales[p][l], 2);
			chunks_unpack(u[b].qs, 16, l, blk->qs);
		}
}

static void pack_q2_Kx8(const void *rows, int64_t nb, void *units)
{
	const struct block_q2_K *src = rows;
	struct cpu_q2_Kx8 *dst = units;

	for (int64_t b = 0; b < nb; b++)
		for (int r = 0; r < CPU_GROUP_ROWS; r++) {
			const struct block_q2_K *blk = &src[r * nb + b];

			dst[b].d[r] = blk->d;
			dst[b].dmin[r] = blk->dmin;
			for (int p = 0; p < 8; p++)
				memcpy(dst[b].scales[p][r], blk->scales + 2 * p, 2);
			chunks_pack(blk->qs, 16, r, dst[b].qs);
		}
}

/* The 128 scale fields of a q3_Kx8 unit (v[pair_at(r, g)], + 32), and back. */
static void q3_Kx8_fields(const struct cpu_q3_Kx8 *u, uint8_t v[128])
{
	fields6_load(u->scales_lo[0], u->scales_hi[0], v);
	fields6_load(u->scales_lo[1], u->scales_hi[1], v + 64);
}

static void q3_Kx8_fields_store(const uint8_t v[128], struct cpu_q3_Kx8 *u)
{
	fields6_store(v, u->scales_lo[0], u->scales_hi[0]);
	fields6_store(v + 64, u->scales_lo[1], u->scales_hi[1]);
}

/* Row l's 16 scales (+ 32) of v as q3_K's 12 bytes (q3_K_scale's inverse). */
static void q3_K_scales_store(const uint8_t v[128], int l, uint8_t s[12])
{
	memset(s, 0, 12);
	for (int j = 0; j < 16; j++) {
		const uint8_t sc = v[pair_at(l, j)];

		s[j % 8] |= (uint8_t)((sc & 15) << 4 * (j / 8));
		s[8 + j % 4] |= (uint8_t)((sc >> 4) << 2 * (j / 4));
	}
}

static void unpack_q3_Kx8(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes)
{
	const struct cpu_q3_Kx8 *u = units;

	for (int64_t b = 0; b < nb; b++) {
		uint8_t v[128];

		q3_Kx8_fields(&u[b], v);
		for (int l = l0; l < l1; l++) {
			struct block_q3_K *blk = (struct block_q3_K *)(out + (l - l0) * row_bytes) + b;

			blk->d = u[b].d[l];
			q3_K_scales_store(v, l, blk->scales);
			chunks_unpack(u[b].hmask, 8, l, blk->hmask);
			chunks_unpack(u[b].qs, 16, l, blk->qs);
		}
	}
}

static void pack_q3_Kx8(const void *rows, int64_t nb, void *units)
{
	const struct block_q3_K *src = rows;
	struct cpu_q3_Kx8 *dst = units;

	for (int64_t b = 0; b < nb; b++) {
		uint8_t v[128];

		for (int r = 0; r < CPU_GROUP_ROWS; r++) {
			const struct block_q3_K *blk = &src[r * nb + b];

			dst[b].d[r] = blk->d;
			for (int j = 0; j < 16; j++)
				v[pair_at(r, j)] = (uint8_t)(q3_K_scale(blk->scales, j) + 32);
			chunks_pack(blk->hmask, 8, r, dst[b].hmask);
			chunks_pack(blk->qs, 16, r, dst[b].qs);
		}
		q3_Kx8_fields_store(v, &dst[b]);
	}
}

/* ------------------------------------------------------------ either */

/* What each layout is for: the weights' dtype, the activations' encoding
 * (q8_0 with each block's Σ, or q8_K), the largest M kept on the group
 * kernel (cpu_prepared_small_m), and its copy and decoder: pack, rows
 * 8g..8g+7 of nb blocks into group g's units; unpack, lanes [l0, l1) of nb
 * units as plain rows row_bytes apart. */
static const struct cpu_layout_info {
	int32_t dtype, act;
	int64_t small_m;
	void (*pack)(const void *rows, int64_t nb, void *units);
	void (*unpack)(const void *units, int l0, int l1, int64_t nb, char *out, int64_t row_bytes);
} layouts[CPU_LAYOUTS] = {
	/* 8 matrices of 8192 × 2048, 2 threads, Zen 3 (cpu-avx2), ms a
	 * matrix, group kernel / GEMM on the prepared weights / the plain
	 * weights' best path: M = 8 0.99 / – / 1.63, 16 2.10 / – / 2.40, 24
	 * 2.87 / 3.40 / 3.06-3.12, 32 3.80 / 4.16 / 3.82, 40 4.81 / 4.90 /
	 * 4.55, 48 5.68 / 5.54 / 5.19, 128 15.35 / 13.22 / 12.69-12.96. */
	[CPU_LAYOUT_Q4_0X8] = { GLLMK_Q4_0, GLLMK_Q8_0, 40, pack_q4_0x8, unpack_q4_0x8 },
	/* The same (session 23, medians of 11), the group kernel / the plain
	 * weights' best path: q4_K M = 16 2.71-2.77 / 3.87-3.92, 32 5.62 /
	 * 6.25, 40 7.30-7.49 / 7.71-7.85; q5_K 4 1.11 / 2.72, 16 5.10 /
	 * 5.11, 24 7.38 / 6.17, 32 8.97 / 6.82; iq4_xs 16 4.99 / 6.02, 32
	 * 7.01 / 9.19, 40 7.55 / 10.98, and 48 on the GEMM 13.48 / 12.66. */
	[CPU_LAYOUT_Q4_KX8] = { GLLMK_Q4_K, GLLMK_Q8_K, 40, pack_q4_Kx8, unpack_q4_Kx8 },
	[CPU_LAYOUT_Q5_KX8] = { GLLMK_Q5_K, GLLMK_Q8_K, 16, pack_q5_Kx8, unpack_q5_Kx8 },
	[CPU_LAYOUT_IQ4_XSX8] = { GLLMK_IQ4_XS, GLLMK_Q8_K, 40, pack_iq4_xsx8, unpack_iq4_xsx8 },
	[CPU_LAYOUT_Q2_KX8] = { GLLMK_Q2_K, GLLMK_Q8_K, 8, pack_q2_Kx8, unpack_q2_Kx8 },
	[CPU_LAYOUT_Q3_KX8] = { GLLMK_Q3_K, GLLMK_Q8_K, 16, pack_q3_Kx8, unpack_q3_Kx8 },
};

int64_t cpu_prepared_small_m(uint32_t layout)
{
	return layouts[layout].small_m;
}

void cpu_prepared_unpack(uint32_t layout, const void *w, int64_t row_bytes, int64_t r0, int64_t rows, int64_t k0,
			 int64_t kc, void *dst)
{
	const int64_t block_elems = cpu_block_elems(layouts[layout].dtype);
	const int64_t b0 = k0 / block_elems, nb = kc / block_elems, out_bytes = cpu_row_bytes(layouts[layout].dtype, kc);

	for (int64_t r = r0; r < r0 + rows;) { /* the rows' part of each group they touch */
		const int64_t g0 = r / CPU_GROUP_ROWS * CPU_GROUP_ROWS;
		const int l0 = (int)(r - g0), l1 = (int)(r0 + rows - g0 < CPU_GROUP_ROWS ? r0 + rows - g0 : CPU_GROUP_ROWS);
		const char *group = (const char *)w + g0 * row_bytes;
		char *out = (char *)dst + (r - r0) * out_bytes;

		layouts[layout].unpack(group + b0 * CPU_GROUP_ROWS * cpu_block_bytes(layouts[layout].dtype), l0, l1, nb,
				       out, out_bytes);
		r = g0 + l1;
	}
}

struct prepare_job {
	const char *src;
	char *dst;
	uint32_t layout;
	int64_t nb, group_bytes; /* blocks per row, bytes per group of 8 rows */
};

static void prepare_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct prepare_job *j = arg;

	(void)tid;
	for (int64_t g = begin; g < end; g++) {
		const void *src = j->src + g * j->group_bytes;
		void *dst = j->dst + g * j->group_bytes;

		layouts[j->layout].pack(src, j->nb, dst);
	}
}

/* Groups a thread copies at a time: ~2.4 MB of a 1B model's matrices, so
 * that each thread's first writes fault in whole huge pages of its own. An
 * 8B Q4_0 model's 225 matrices: 0.63-0.65 s on 2 threads, 1.0 s on one,
 * the upload of the same bytes 0.7-1.7 s (Zen 3 VM, memory already
 * touched once; the first run of a process that needs fresh memory pays
 * the hypervisor's page faults: 4-21 s, upload or copy alike). */
#define PREPARE_GRAIN 256

/* The layout for dtype t, CPU_LAYOUT_PLAIN if none. */
static uint32_t layout_of(int32_t t)
{
	for (uint32_t l = CPU_LAYOUT_PLAIN + 1; l < CPU_LAYOUTS; l++)
		if (layouts[l].dtype == t)
			return l;
	return CPU_LAYOUT_PLAIN;
}

gllmk_status cpu_weights_prepare(void *st, gllmk_t w, void **impl, uint64_t *size, uint32_t *layout)
{
	struct cpu_state *s = st;
	const int64_t n = w->shape[w->ndim - 2], rows = cpu_rows(w), row_bytes = cpu_row_bytes(w->dtype, cpu_row_len(w));
	const uint32_t l = layout_of(w->dtype);
	struct prepare_job j = {
		.src = gllmk_tensor_host(w),
		.layout = l,
		.nb = cpu_row_len(w) / cpu_block_elems(w->dtype),
		.group_bytes = CPU_GROUP_ROWS * row_bytes,
	};
	gllmk_status st_alloc;

	if (l == CPU_LAYOUT_PLAIN || !s->k->dot_group[l])
		return s->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_weights_prepare: cpu-%s has no prepared layout for "
					  "%s weights (SPEC/CPU.md, \"Prepared weights\"): keep w", s->k->isa,
					  dtype_names[w->dtype]);
	if (n % CPU_GROUP_ROWS)
		return s->host->set_error(GLLMK_E_UNSUPPORTED, "gllmk_weights_prepare: cpu-%s prepares %s matrices "
					  "of rows in groups of %d (w.shape[%d] = %lld): keep w", s->k->isa,
					  dtype_names[w->dtype], CPU_GROUP_ROWS, w->ndim - 2, (long long)n);
	st_alloc = cpu_buffer_alloc(st, (uint64_t)(rows * row_bytes), impl);
	if (st_alloc)
		return st_alloc;
	j.dst = *impl;
	cpu_pool_run(s->pool, rows / CPU_GROUP_ROWS, PREPARE_GRAIN, prepare_task, &j);
	*size = (uint64_t)(rows * row_bytes);
	*layout = l;
	return GLLMK_OK;
}

/* ------------------------------------------------------ the group kernels */

void cpu_ref_dot_q4_0x8(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out)
{
	const struct cpu_q4_0x8 *u = w;
	const int64_t nb = n / QK4_0;

	for (int t = 0; t < xrows; t++) {
		const struct block_q8_0 *x = (const struct block_q8_0 *)xq + t * nb;
		float acc[CPU_GROUP_ROWS] = { 0 };

		for (int64_t b = 0; b < nb; b++) {
			const float dx = f16_to_f32(x[b].d);

			for (int r = 0; r < CPU_GROUP_ROWS; r++) {
				int32_t sum = -8 * xsum[t * nb + b];

				for (int c = 0; c < 4; c++)
					for (int e = 0; e < 4; e++) {
						const uint8_t q = u[b].qs[c][r][e];

						sum += (q & 0x0f) * x[b].qs[4 * c + e] + (q >> 4) * x[b].qs[16 + 4 * c + e];
					}
				acc[r] += f16_to_f32(u[b].d[r]) * dx * (float)sum;
			}
		}
		memcpy(out + t * CPU_GROUP_ROWS, acc, sizeof(acc));
	}
}

/* Row r's Σ sc·Σ u·x and Σ mn·Σ x of one q4_Kx8 or q5_Kx8 unit (head h,
 * its fields vs, vm; qh NULL for q4_K) against one q8_K block. */
static void ref_kx8_row(const struct cpu_kx8_head *h, const uint8_t (*qs)[8][CPU_GROUP_ROWS][4],
			const uint8_t (*qh)[CPU_GROUP_ROWS][4], int r, const struct block_q8_K *x, int32_t *dot,
			int32_t *mins)
{
	uint8_t vs[64], vm[64];

	kx8_fields(h, vs, vm);
	*dot = *mins = 0;
	for (int j = 0; j < 4; j++) {
		int32_t lo = 0, hi = 0;

		for (int c = 0; c < 8; c++)
			for (int e = 0; e < 4; e++) {
				const uint8_t q = qs[j][c][r][e];
				const int hb0 = qh ? (qh[c][r][e] >> (2 * j) & 1) << 4 : 0;
				const int hb1 = qh ? (qh[c][r][e] >> (2 * j + 1) & 1) << 4 : 0;

				lo += ((q & 0x0f) + hb0) * x->qs[64 * j + 4 * c + e];
				hi += ((q >> 4) + hb1) * x->qs[64 * j + 32 + 4 * c + e];
			}
		*dot += vs[8 * (2 * j) + r] * lo + vs[8 * (2 * j + 1) + r] * hi;
	}
	for (int sb = 0; sb < 8; sb++)
		*mins += vm[pair_at(r, sb)] * (x->bsums[2 * sb] + x->bsums[2 * sb + 1]);
}

/* The 8 rows' dots of one unit against q8_K block x, added to acc. */
static void ref_kx8_unit(const struct cpu_kx8_head *h, const uint8_t (*qs)[8][CPU_GROUP_ROWS][4],
			 const uint8_t (*qh)[CPU_GROUP_ROWS][4], const struct block_q8_K *x, float acc[8])
{
	for (int r = 0; r < CPU_GROUP_ROWS; r++) {
		int32_t dot, mins;

		ref_kx8_row(h, qs, qh, r, x, &dot, &mins);
		acc[r] += x->d * (f16_to_f32(h->d[r]) * (float)dot - f16_to_f32(h->dmin[r]) * (float)mins);
	}
}

static void ref_dot_kx8(int64_t n, const void *w, const void *xq, int xrows, float *out, int five)
{
	const size_t unit = five ? sizeof(struct cpu_q5_Kx8) : sizeof(struct cpu_q4_Kx8);
	const int64_t nb = n / QK_K;

	for (int t = 0; t < xrows; t++) {
		float acc[CPU_GROUP_ROWS] = { 0 };

		for (int64_t b = 0; b < nb; b++) {
			const char *ub = (const char *)w + b * unit;
			const struct cpu_q5_Kx8 *u5 = (const struct cpu_q5_Kx8 *)ub;

			ref_kx8_unit((const struct cpu_kx8_head *)ub, five ? u5->qs : ((const struct cpu_q4_Kx8 *)ub)->qs,
				     five ? u5->qh : NULL, (const struct block_q8_K *)xq + t * nb + b, acc);
		}
		memcpy(out + t * CPU_GROUP_ROWS, acc, sizeof(acc));
	}
}

void cpu_ref_dot_q4_Kx8(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out)
{
	(void)xsum;
	ref_dot_kx8(n, w, xq, xrows, out, 0);
}

void cpu_ref_dot_q5_Kx8(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out)
{
	(void)xsum;
	ref_dot_kx8(n, w, xq, xrows, out, 1);
}

/* Row r's Σ_s (scale − 32)·Σ v·x of one iq4_xsx8 unit (scales vs)
 * against one q8_K block, v the code book's values. */
static int32_t ref_iq4_xsx8_row(const struct cpu_iq4_xsx8 *u, const uint8_t vs[64], int r, const struct block_q8_K *x)
{
	int32_t dot = 0;

	for (int sb = 0; sb < 8; sb++) {
		int32_t sum = 0;

		for (int c = 0; c < 4; c++)
			for (int e = 0; e < 4; e++) {
				const uint8_t q = u->qs[sb][c][r][e];

				sum += iq4nl_values[q & 0x0f] * x->qs[32 * sb + 4 * c + e] +
				       iq4nl_values[q >> 4] * x->qs[32 * sb + 16 + 4 * c + e];
			}
		dot += (vs[8 * sb + r] - 32) * sum;
	}
	return dot;
}

void cpu_ref_dot_iq4_xsx8(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out)
{
	const struct cpu_iq4_xsx8 *u = w;
	const int64_t nb = n / QK_K;

	(void)xsum;
	for (int t = 0; t < xrows; t++) {
		const struct block_q8_K *x = (const struct block_q8_K *)xq + t * nb;
		float acc[CPU_GROUP_ROWS] = { 0 };

		for (int64_t b = 0; b < nb; b++) {
			uint8_t vs[64];

			fields6_load(u[b].scales_lo, u[b].scales_hi, vs);
			for (int r = 0; r < CPU_GROUP_ROWS; r++)
				acc[r] += x[b].d * f16_to_f32(u[b].d[r]) * (float)ref_iq4_xsx8_row(&u[b], vs, r, &x[b]);
		}
		memcpy(out + t * CPU_GROUP_ROWS, acc, sizeof(acc));
	}
}

/* Row r's 2-bit field of element el in q2_Kx8's or q3_Kx8's chunks
 * (prepared.h), and q3_Kx8's high bit of it. */
static int k16x8_field(const uint8_t (*qs)[CPU_GROUP_ROWS][4], int r, int el)
{
	const int l = el % 32;

	return qs[8 * (el / 128) + l / 4][r][l % 4] >> (2 * (el / 32 % 4)) & 3;
}

static int q3_Kx8_high(const struct cpu_q3_Kx8 *u, int r, int el)
{
	const int l = el % 32;

	return u->hmask[l / 4][r][l % 4] >> (el / 32) & 1;
}

/* Row r's Σ_g scale_g·Σ_g y·x of one q2_Kx8 unit (y the 2-bit value; its
 * dmin term Σ_g min_g·Σ_g x at *mins) or q3_Kx8 unit (y = the 3-bit value
 * − 4, scale the stored one − 32) against one q8_K block; v the unit's
 * scale bytes or fields. */
static int32_t ref_k16x8_row(const void *unit, const uint8_t v[128], int three, int r, const struct block_q8_K *x,
			     int32_t *mins)
{
	const struct cpu_q2_Kx8 *u2 = unit;
	const struct cpu_q3_Kx8 *u3 = unit;
	int32_t dot = 0;

	*mins = 0;
	for (int g = 0; g < 16; g++) {
		const int sv = v[pair_at(r, g)];
		int32_t sum = 0;

		for (int i = 16 * g; i < 16 * g + 16; i++)
			sum += (three ? k16x8_field(u3->qs, r, i) + 4 * q3_Kx8_high(u3, r, i) - 4 : k16x8_field(u2->qs, r, i)) *
			       x->qs[i];
		dot += (three ? sv - 32 : sv & 15) * sum;
		*mins += (sv >> 4) * x->bsums[g];
	}
	return dot;
}

static void ref_dot_k16x8(int64_t n, const void *w, const void *xq, int xrows, float *out, int three)
{
	const size_t unit = three ? sizeof(struct cpu_q3_Kx8) : sizeof(struct cpu_q2_Kx8);
	const int64_t nb = n / QK_K;

	for (int t = 0; t < xrows; t++) {
		float acc[CPU_GROUP_ROWS] = { 0 };

		for (int64_t b = 0; b < nb; b++) {
			const void *ub = (const char *)w + b * unit;
			const struct block_q8_K *x = (const struct block_q8_K *)xq + t * nb + b;
			/* d (and q2_K's dmin): the units' first fields */
			const uint16_t *d = ub, *dmin = (const uint16_t *)ub + CPU_GROUP_ROWS;
			uint8_t v[128];

			if (three)
				q3_Kx8_fields(ub, v);
			else
				memcpy(v, ((const struct cpu_q2_Kx8 *)ub)->scales, sizeof(v));
			for (int r = 0; r < CPU_GROUP_ROWS; r++) {
				int32_t mins;
				const int32_t dot = ref_k16x8_row(ub, v, three, r, x, &mins);

				acc[r] += x->d * (f16_to_f32(d[r]) * (float)dot -
						  (three ? 0.0f : f16_to_f32(dmin[r]) * (float)mins));
			}
		}
		memcpy(out + t * CPU_GROUP_ROWS, acc, sizeof(acc));
	}
}

void cpu_ref_dot_q2_Kx8(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out)
{
	(void)xsum;
	ref_dot_k16x8(n, w, xq, xrows, out, 0);
}

void cpu_ref_dot_q3_Kx8(int64_t n, const void *w, const void *xq, const int32_t *xsum, int xrows, float *out)
{
	(void)xsum;
	ref_dot_k16x8(n, w, xq, xrows, out, 1);
}

/* ------------------------------------------------------ matmul, small M */

/* Activation rows encoded for a layout's group kernel: q8_0 rows and
 * their blocks' Σ, or q8_K rows (their blocks carry their sums). */
struct encoded_x {
	char *q;
	int32_t *sum;       /* q8_0 only */
	int64_t row_bytes;  /* of a row at q */
	int64_t row_sums;   /* Σ entries a row */
};

static gllmk_status encoded_x_alloc(struct cpu_state *s, uint32_t layout, int64_t kdim, int64_t rows,
				    struct encoded_x *e)
{
	const int32_t act = layouts[layout].act;

	e->row_bytes = cpu_row_bytes(act, kdim);
	e->row_sums = act == GLLMK_Q8_0 ? kdim / QK8_0 : 0;
	e->q = malloc((size_t)(rows * e->row_bytes));
	e->sum = e->row_sums ? malloc(sizeof(*e->sum) * (size_t)(rows * e->row_sums)) : NULL;
	if (e->q && (e->sum || !e->row_sums))
		return GLLMK_OK;
	free(e->q);
	free(e->sum);
	return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_matmul: %lld encoded activation rows", (long long)rows);
}

static void encoded_x_free(struct encoded_x *e)
{
	free(e->q);
	free(e->sum);
}

/* Row i of the encoded rows from the f32 row x. */
static void encode_row(const struct cpu_cntx *k, uint32_t layout, const float *x, int64_t kdim, struct encoded_x *e,
		       int64_t i)
{
	struct block_q8_0 *xq = (struct block_q8_0 *)(e->q + i * e->row_bytes);

	k->quant_row[layouts[layout].act](x, xq, kdim);
	for (int64_t b = 0; b < e->row_sums; b++) {
		int32_t sum = 0;

		for (int el = 0; el < QK8_0; el++)
			sum += xq[b].qs[el];
		e->sum[i * e->row_sums + b] = sum;
	}
}

static const int32_t *encoded_sums(const struct encoded_x *e, int64_t i)
{
	return e->sum ? e->sum + i * e->row_sums : NULL;
}

struct prepared_job {
	cpu_dot_group_fn *dot;
	const gllmk_tensor *y;
	const char *w;
	int64_t row_bytes, kdim, m;
	const float *bias;
	const struct encoded_x *x;
};

/* Each group of 8 weight rows against the activation rows, up to
 * CPU_GROUP_X_ROWS a kernel call (the group's nibbles decoded once for
 * them), while the group stays in L1. */
static void prepared_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct prepared_job *j = arg;
	float out[CPU_GROUP_X_ROWS * CPU_GROUP_ROWS];

	(void)tid;
	for (int64_t g = begin; g < end; g++) {
		const char *wg = j->w + g * CPU_GROUP_ROWS * j->row_bytes;

		for (int64_t m = 0; m < j->m; m += CPU_GROUP_X_ROWS) {
			const int xrows = (int)(j->m - m < CPU_GROUP_X_ROWS ? j->m - m : CPU_GROUP_X_ROWS);

			j->dot(j->kdim, wg, j->x->q + m * j->x->row_bytes, encoded_sums(j->x, m), xrows, out);
			for (int t = 0; t < xrows; t++) {
				float *y = (float *)cpu_row(j->y, m + t) + g * CPU_GROUP_ROWS;

				for (int r = 0; r < CPU_GROUP_ROWS; r++)
					y[r] = out[t * CPU_GROUP_ROWS + r] +
					       (j->bias ? j->bias[g * CPU_GROUP_ROWS + r] : 0.0f);
			}
		}
	}
}

gllmk_status cpu_matmul_prepared(struct cpu_state *s, gllmk_t y, gllmk_t x, gllmk_t w, gllmk_t bias)
{
	const uint32_t layout = w->buf->layout;
	struct encoded_x ex;
	struct prepared_job j = {
		.dot = s->k->dot_group[layout],
		.y = y,
		.w = gllmk_tensor_host(w),
		.row_bytes = w->stride[0],
		.kdim = cpu_row_len(x),
		.m = cpu_rows(x),
		.bias = bias ? gllmk_tensor_host(bias) : NULL,
		.x = &ex,
	};
	const int64_t groups = cpu_rows(w) / CPU_GROUP_ROWS;
	const gllmk_status st = encoded_x_alloc(s, layout, j.kdim, j.m, &ex);

	if (st)
		return st;
	for (int64_t m = 0; m < j.m; m++)
		encode_row(s->k, layout, cpu_row(x, m), j.kdim, &ex, m);
	if (j.m == 1)
		cpu_pool_run_streaming(s->pool, groups, 1, prepared_task, &j);
	else
		cpu_pool_run(s->pool, groups, 1, prepared_task, &j);
	encoded_x_free(&ex);
	return GLLMK_OK;
}

/* ---------------------------------------------- M = 1 products, one pass */

struct parts_job {
	cpu_dot_group_fn *dot;
	const struct cpu_matmul_part *part;
	int64_t kdim, groups;
	const struct encoded_x *x;
	const int64_t *of; /* part p's activation: row of[p] of x */
};

/* Items [begin, end) of the parts' groups laid end to end. */
static void parts_task(void *arg, int64_t begin, int64_t end, int tid)
{
	const struct parts_job *j = arg;

	(void)tid;
	for (int64_t i = begin; i < end; i++) {
		const struct cpu_matmul_part *p = &j->part[i / j->groups];
		const int64_t g = i % j->groups, x = j->of[i / j->groups];
		const char *w = (const char *)gllmk_tensor_host(&p->w) + g * CPU_GROUP_ROWS * p->w.stride[0];
		const float *bias = p->bias ? (const float *)gllmk_tensor_host(p->bias) : NULL;
		float *y = (float *)gllmk_tensor_host(&p->y) + g * CPU_GROUP_ROWS;

		j->dot(j->kdim, w, j->x->q + x * j->x->row_bytes, encoded_sums(j->x, x), 1, y);
		for (int r = 0; bias && r < CPU_GROUP_ROWS; r++)
			y[r] += bias[g * CPU_GROUP_ROWS + r];
	}
}

gllmk_status cpu_matmul_parts_prepared(struct cpu_state *s, const struct cpu_matmul_part *part, int64_t count)
{
	const uint32_t layout = part[0].w.buf->layout;
	const int64_t kdim = cpu_row_len(&part[0].x);
	struct encoded_x ex;
	struct parts_job j = {
		.dot = s->k->dot_group[layout],
		.part = part,
		.kdim = kdim,
		.groups = cpu_rows(&part[0].w) / CPU_GROUP_ROWS,
		.x = &ex,
	};
	int64_t *of = malloc(sizeof(*of) * (size_t)count);
	gllmk_status st = of ? encoded_x_alloc(s, layout, kdim, count, &ex) : GLLMK_E_NO_MEMORY;

	if (st) {
		free(of);
		return of ? st : s->host->set_error(st, "gllmk_matmul_id: no memory for %lld parts", (long long)count);
	}
	cpu_parts_x_rows(part, count, of);
	for (int64_t p = 0; p < count; p++)
		if (p == 0 || of[p] != of[p - 1]) /* each distinct row once */
			encode_row(s->k, layout, gllmk_tensor_host(&part[p].x), kdim, &ex, of[p]);
	j.of = of;
	cpu_pool_run(s->pool, count * j.groups, 1, parts_task, &j);
	encoded_x_free(&ex);
	free(of);
	return GLLMK_OK;
}
