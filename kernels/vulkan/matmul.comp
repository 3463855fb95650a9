/* Tiled shared-memory GEMM: c[M,N] = alpha * a[M,K] * b[N,K]^T (+ beta c)
 * (+ bias[N]), for B batches (matmul_batched: a, b, c offset by the batch
 * times their batch strides; the workgroups of batch 1 follow batch 0's). b is the weight, of dtype WTYPE, decoded while its tile is
 * loaded. Serves matmul (b = w [N,K], alpha 1, beta 0, optional bias) and
 * gemm (f32 only; transposes come as element strides ask/asm, bsk/bsn).
 * 64x64 tile, 16-deep K slices, 256 threads of 4x4 outputs each.
 * Fixed-size loops are unrolled: llvmpipe stops an invocation after 65535
 * loop iterations in all, so only the K loop may iterate.
 * flags: 1 bias given, 2 beta != 0 (c is read). Bindings: 0 c, 1 b, 2 a, 3 bias.
 *
 * -DIDS: matmul_id at many tokens, a grouped GEMM. moe_group.comp has
 * sorted the T·k slots by expert (binding 4: start[E + 1], then the slot
 * list); workgroup (e, mt, nt) multiplies rows mt·64 .. of expert e's slots
 * (each an x row: token t, slot j) by the n-tile nt of w[e], and writes each
 * slot's row of c (y[t, j], or the scratch rows that moe_group.comp -DWEIGH
 * folds with the slot weights) plus w[e]'s bias. The host dispatches the
 * most tiles an expert can have (all T·k slots): the others return at once.
 * Each slot's dot products are the same whatever its place in the list. */
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#define QB b1
#define CODEBOOK_SHARED /* the i-quants' codebook, copied when the workgroup starts */
#include "decode.glsl"

#define BM 64u
#define BN 64u
#define BK 16u
layout(local_size_x = 256) in;

#ifdef IDS
layout(push_constant) uniform Push {
	uint T, N, K, flags;        /* flags: 1 bias */
	uint xo, xs0, xs1, k;       /* x: token and slot byte strides (xs1 0: x is [T, K]) */
	uint wo, ws0, wse, E;       /* w [E, N, K]: row and expert strides */
	uint yo, ys0, ys1;          /* c: token and slot strides */
	uint biaso, biase;          /* bias [E, N] */
	uint tiles_n, tiles_m, go;  /* go: the grouping's first word in binding 4 */
} p;
#define BSN p.ws0
#define BSK 4u
shared uint xrow[BM], crow[BM]; /* the tile's slots: byte offsets of their x and c rows, ~0u past the end */
#else
layout(push_constant) uniform Push {
	uint M, N, K, flags;
	uint ao, asm_, ask;
	uint bo, bsn, bsk;
	uint co, cs0;
	uint biaso;
	float alpha, beta;
	uint tiles_n;
	uint abs_, bbs, cbs, B; /* matmul_batched: byte strides of a batch of a, b, c; B batches (1 otherwise) */
} p;
#define BSN p.bsn
#define BSK p.bsk
#endif

shared float As[BK][BM + 1u];
shared float Bs[BK][BN + 1u];

uint bbase; /* byte address of this batch's b */

float load_b(uint n, uint k)
{
#if WTYPE == DT_F32
	return LDF(b1, bbase + n * BSN + k * BSK);
#else
	return dq(bbase + n * BSN, k);
#endif
}

#ifdef IDS
uint expert; /* this workgroup's */

/* The tile's slots into xrow/crow; false: expert e has no rows here. */
bool ids_rows(out uint n0)
{
	uint per_e = p.tiles_m * p.tiles_n, g = wg_linear();
	uint mt = g % per_e / p.tiles_n;
	expert = g / per_e;
	n0 = g % p.tiles_n * BN;
	if (expert >= p.E)
		return false;
	uint first = LD32(b4, 4u * (p.go + expert)), rows = LD32(b4, 4u * (p.go + expert + 1u)) - first;
	if (mt * BM >= rows)
		return false;
	uint t = gl_LocalInvocationID.x, m = mt * BM + t;
	if (t < BM) {
		uint s = m < rows ? LD32(b4, 4u * (p.go + p.E + 1u + first + m)) : ~0u;
		uint tok = s / p.k, j = s % p.k;
		xrow[t] = m < rows ? p.xo + tok * p.xs0 + j * p.xs1 : ~0u;
		crow[t] = m < rows ? p.yo + tok * p.ys0 + j * p.ys1 : ~0u;
	}
	bbase = p.wo + expert * p.wse;
	return true;
}

float load_a(uint mm, uint k)
{
	return xrow[mm] != ~0u && k < p.K ? LDF(b2, xrow[mm] + 4u * k) : 0.0;
}

void store_c(uint mm, uint n, float v)
{
	if (crow[mm] == ~0u || n >= p.N)
		return;
	if ((p.flags & 1u) != 0u)
		v += LDF(b3, p.biaso + expert * p.biase + 4u * n);
	STF(b0, crow[mm] + 4u * n, v);
}
#else
uint ao, co, m0;

/* This workgroup's tile; false: past the last batch. */
bool tile_of(out uint n0)
{
	uint tiles = ((p.M + BM - 1u) / BM) * p.tiles_n; /* a batch's tiles */
	uint tile = wg_linear() % tiles, batch = wg_linear() / tiles;
	m0 = (tile / p.tiles_n) * BM;
	n0 = (tile % p.tiles_n) * BN;
	if (batch >= p.B)
		return false;
	ao = p.ao + batch * p.abs_;
	co = p.co + batch * p.cbs;
	bbase = p.bo + batch * p.bbs;
	return true;
}

float load_a(uint mm, uint k)
{
	uint m = m0 + mm;
	return m < p.M && k < p.K ? LDF(b2, ao + m * p.asm_ + k * p.ask) : 0.0;
}

void store_c(uint mm, uint n, float v)
{
	uint m = m0 + mm;
	if (m >= p.M || n >= p.N)
		return;
	uint ca = co + m * p.cs0 + 4u * n;
	v *= p.alpha;
	if ((p.flags & 2u) != 0u)
		v += p.beta * LDF(b0, ca);
	if ((p.flags & 1u) != 0u)
		v += LDF(b3, p.biaso + 4u * n);
	STF(b0, ca, v);
}
#endif

void main()
{
	uint n0;
#ifdef IDS
	/* before any barrier: the whole workgroup returns or none */
	if (!ids_rows(n0))
		return;
#else
	if (!tile_of(n0))
		return;
#endif
	codebook_load(gl_LocalInvocationID.x, 256u);
#ifdef IDS
	barrier(); /* xrow, crow */
#endif
	uint t = gl_LocalInvocationID.x;
	uint tx = t % 16u, ty = t / 16u;
	float acc[4][4];
	[[unroll]] for (uint i = 0u; i < 4u; i++)
		[[unroll]] for (uint j = 0u; j < 4u; j++)
			acc[i][j] = 0.0;

	for (uint k0 = 0u; k0 < p.K; k0 += BK) {
		[[unroll]] for (uint q = 0u; q < 4u; q++) {
			uint idx = t + 256u * q;
			uint mm = idx / BK, kk = idx % BK;
			uint n = n0 + mm, k = k0 + kk;
			As[kk][mm] = load_a(mm, k);
			Bs[kk][mm] = (n < p.N && k < p.K) ? load_b(n, k) : 0.0;
		}
		barrier();
		[[unroll]] for (uint kk = 0u; kk < BK; kk++) {
			float av[4], bv[4];
			[[unroll]] for (uint i = 0u; i < 4u; i++) {
				av[i] = As[kk][ty + 16u * i];
				bv[i] = Bs[kk][tx + 16u * i];
			}
			[[unroll]] for (uint i = 0u; i < 4u; i++)
				[[unroll]] for (uint j = 0u; j < 4u; j++)
					acc[i][j] += av[i] * bv[j];
		}
		barrier();
	}

	[[unroll]] for (uint i = 0u; i < 4u; i++)
		[[unroll]] for (uint j = 0u; j < 4u; j++)
			store_c(ty + 16u * i, n0 + tx + 16u * j, acc[i][j]);
}
