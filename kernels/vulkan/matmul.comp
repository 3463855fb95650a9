/* Tiled shared-memory GEMM: c[M,N] = alpha * a[M,K] * b[N,K]^T (+ beta c)
 * (+ bias[N]), for B batches (matmul_batched: a, b, c offset by the batch
 * times their batch strides; the workgroups of batch 1 follow batch 0's). b is the weight, of dtype WTYPE, decoded while its tile is
 * loaded. Serves matmul (b = w [N,K], alpha 1, beta 0, optional bias) and
 * gemm (f32 only; transposes come as element strides ask/asm, bsk/bsn).
 * 64x64 tile, 16-deep K slices, 256 threads of 4x4 outputs each.
 * Fixed-size loops are unrolled: llvmpipe stops an invocation after 65535
 * loop iterations in all, so only the K loop may iterate.
 * flags: 1 bias given, 2 beta != 0 (c is read). Bindings: 0 c, 1 b, 2 a, 3 bias. */
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

shared float As[BK][BM + 1u];
shared float Bs[BK][BN + 1u];

uint bbase; /* byte address of this batch's b */

float load_b(uint n, uint k)
{
#if WTYPE == DT_F32
	return LDF(b1, bbase + n * p.bsn + k * p.bsk);
#else
	return dq(bbase + n * p.bsn, k);
#endif
}

void main()
{
	codebook_load(gl_LocalInvocationID.x, 256u);
	uint tiles = ((p.M + BM - 1u) / BM) * p.tiles_n; /* a batch's tiles */
	uint tile = wg_linear() % tiles, batch = wg_linear() / tiles;
	uint m0 = (tile / p.tiles_n) * BM;
	uint n0 = (tile % p.tiles_n) * BN;
	if (batch >= p.B)
		return;
	uint ao = p.ao + batch * p.abs_, co = p.co + batch * p.cbs;
	bbase = p.bo + batch * p.bbs;
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
			uint m = m0 + mm, n = n0 + mm, k = k0 + kk;
			As[kk][mm] = (m < p.M && k < p.K) ? LDF(b2, ao + m * p.asm_ + k * p.ask) : 0.0;
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

	[[unroll]] for (uint i = 0u; i < 4u; i++) {
		uint m = m0 + ty + 16u * i;
		if (m >= p.M)
			continue;
		[[unroll]] for (uint j = 0u; j < 4u; j++) {
			uint n = n0 + tx + 16u * j;
			if (n >= p.N)
				continue;
			uint ca = co + m * p.cs0 + 4u * n;
			float v = p.alpha * acc[i][j];
			if ((p.flags & 2u) != 0u)
				v += p.beta * LDF(b0, ca);
			if ((p.flags & 1u) != 0u)
				v += LDF(b3, p.biaso + 4u * n);
			STF(b0, ca, v);
		}
	}
}
