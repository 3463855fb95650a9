/* The kernels that measure the machine's limits: an FMA chain (peak) and a
 * streaming read (bandwidth), once per x86 ISA from one macro, each function
 * compiled for its ISA with a target attribute and called only after
 * __builtin_cpu_supports (which checks CPUID and the OS-enabled register
 * state) says the CPU runs it (SSE4.1 for the portable set's non-temporal
 * read). The rest of the tool is built for the
 * baseline ISA. A portable version serves other machines.
 */
#include "bench.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_X86 1
#endif

/* Independent accumulators: more than FMA latency × FMA ports (4 × 2 on
 * current cores), few enough to stay in 16 AVX2 registers with the operands. */
#define FMA_CHAINS 12
/* Vectors in flight per read iteration (256 bytes per round for AVX-512). */
#define READ_WAYS 4
/* How far ahead of the loads the prefetching read kernel asks for lines. */
#define PREFETCH_BYTES 2048

/* The FMA chain and the read kernels for one vector ISA: vf/vi are the
 * float and integer vector types, lanes the floats and bits the bits per
 * vector, P the intrinsic prefix (_mm256, _mm512). The read kernels:
 * plain loads; the same with a software prefetch PREFETCH_BYTES ahead of
 * every line; two streams at once over the two halves of the share;
 * non-temporal loads (vmovntdqa). */
#ifdef BENCH_X86
#define SIMD_READ_BODY(vi, bits, P, LOAD, PREFETCH)                                      \
	const vi *v = p;                                                                  \
	size_t n = bytes / sizeof(vi);                                                    \
	vi acc[READ_WAYS];                                                                \
	uint64_t out[sizeof(vi) / 8], sum = 0;                                            \
	for (int j = 0; j < READ_WAYS; j++)                                               \
		acc[j] = P##_setzero_si##bits();                                          \
	for (size_t i = 0; i + READ_WAYS <= n; i += READ_WAYS) {                          \
		PREFETCH;                                                                 \
		for (int j = 0; j < READ_WAYS; j++)                                       \
			acc[j] = P##_add_epi64(acc[j], LOAD(&v[i + j]));                  \
	}                                                                                 \
	for (int j = 1; j < READ_WAYS; j++)                                               \
		acc[0] = P##_add_epi64(acc[0], acc[j]);                                   \
	P##_storeu_si##bits((vi *)out, acc[0]);                                           \
	for (size_t j = 0; j < sizeof(vi) / 8; j++)                                       \
		sum += out[j];                                                            \
	return sum;

#define SIMD_KERNELS(isa, target_s, vf, vi, lanes, bits, P, NT_LOAD)                     \
	__attribute__((target(target_s))) static double fma_chain_##isa(uint64_t iters) \
	{                                                                                 \
		const vf a = P##_set1_ps(0.999999f), c = P##_set1_ps(1e-7f);             \
		vf acc[FMA_CHAINS];                                                       \
		float out[lanes];                                                         \
		for (int j = 0; j < FMA_CHAINS; j++)                                      \
			acc[j] = P##_set1_ps((float)j);                                   \
		for (uint64_t i = 0; i < iters; i++)                                      \
			for (int j = 0; j < FMA_CHAINS; j++)                              \
				acc[j] = P##_fmadd_ps(acc[j], a, c);                      \
		for (int j = 1; j < FMA_CHAINS; j++)                                      \
			acc[0] = P##_add_ps(acc[0], acc[j]);                              \
		P##_storeu_ps(out, acc[0]);                                               \
		__asm__ volatile("" : : "r"(out) : "memory");                             \
		return 2.0 * FMA_CHAINS * (lanes) * (double)iters;                        \
	}                                                                                 \
	__attribute__((target(target_s))) static uint64_t read_sum_##isa(const void *p,  \
									 size_t bytes)    \
	{                                                                                 \
		SIMD_READ_BODY(vi, bits, P, P##_load_si##bits, (void)0)                   \
	}                                                                                 \
	__attribute__((target(target_s))) static uint64_t read_prefetch_##isa(           \
		const void *p, size_t bytes)                                              \
	{                                                                                 \
		SIMD_READ_BODY(vi, bits, P, P##_load_si##bits,                            \
			       for (size_t l = 0; l < READ_WAYS * sizeof(vi); l += 64)    \
				       _mm_prefetch((const char *)&v[i] + PREFETCH_BYTES + l, \
						    _MM_HINT_T0))                         \
	}                                                                                 \
	__attribute__((target(target_s))) static uint64_t read_nt_##isa(const void *p,   \
									size_t bytes)     \
	{                                                                                 \
		SIMD_READ_BODY(vi, bits, P, NT_LOAD, (void)0)                             \
	}                                                                                 \
	__attribute__((target(target_s))) static uint64_t read_two_##isa(const void *p,  \
									 size_t bytes)    \
	{                                                                                 \
		const vi *v = p, *w;                                                      \
		size_t n = bytes / sizeof(vi) / 2 / READ_WAYS * READ_WAYS;                \
		vi acc[2 * READ_WAYS];                                                    \
		uint64_t out[sizeof(vi) / 8], sum = 0;                                    \
		w = v + n;                                                                \
		for (int j = 0; j < 2 * READ_WAYS; j++)                                   \
			acc[j] = P##_setzero_si##bits();                                  \
		for (size_t i = 0; i < n; i += READ_WAYS)                                 \
			for (int j = 0; j < READ_WAYS; j++) {                             \
				acc[j] = P##_add_epi64(acc[j], P##_load_si##bits(&v[i + j])); \
				acc[READ_WAYS + j] =                                      \
					P##_add_epi64(acc[READ_WAYS + j], P##_load_si##bits(&w[i + j])); \
			}                                                                 \
		for (int j = 1; j < 2 * READ_WAYS; j++)                                   \
			acc[0] = P##_add_epi64(acc[0], acc[j]);                           \
		P##_storeu_si##bits((vi *)out, acc[0]);                                   \
		for (size_t j = 0; j < sizeof(vi) / 8; j++)                               \
			sum += out[j];                                                    \
		return sum;                                                               \
	}

/* gcc's stream-load intrinsics take a non-const pointer. */
#define NT512(q) _mm512_stream_load_si512((void *)(q))
#define NT256(q) _mm256_stream_load_si256((__m256i *)(q))

SIMD_KERNELS(avx512, "avx512f", __m512, __m512i, 16, 512, _mm512, NT512)
SIMD_KERNELS(avx2, "avx2,fma", __m256, __m256i, 8, 256, _mm256, NT256)

#define SIMD_READS(isa)                                                                   \
	{                                                                                 \
		{ "plain", read_sum_##isa }, { "prefetch", read_prefetch_##isa },         \
			{ "two-stream", read_two_##isa }, { "non-temporal", read_nt_##isa }, \
	}

static const struct bench_simd simd_avx512 = {
	.isa = "avx512",
	.fma_chain = fma_chain_avx512,
	.read_sum = read_sum_avx512,
	.reads = SIMD_READS(avx512),
	.n_reads = 4,
};

static const struct bench_simd simd_avx2 = {
	.isa = "avx2",
	.fma_chain = fma_chain_avx2,
	.read_sum = read_sum_avx2,
	.reads = SIMD_READS(avx2),
	.n_reads = 4,
};

/* The portable set's non-temporal read: SSE4.1, used only after CPUID says so. */
__attribute__((target("sse4.1"))) static uint64_t read_nt_sse41(const void *p, size_t bytes)
{
	const __m128i *v = p;
	size_t n = bytes / sizeof(__m128i);
	__m128i acc[READ_WAYS];
	uint64_t out[2];

	for (int j = 0; j < READ_WAYS; j++)
		acc[j] = _mm_setzero_si128();
	for (size_t i = 0; i + READ_WAYS <= n; i += READ_WAYS)
		for (int j = 0; j < READ_WAYS; j++)
			acc[j] = _mm_add_epi64(acc[j], _mm_stream_load_si128((__m128i *)&v[i + j]));
	for (int j = 1; j < READ_WAYS; j++)
		acc[0] = _mm_add_epi64(acc[0], acc[j]);
	_mm_storeu_si128((__m128i *)out, acc[0]);
	return out[0] + out[1];
}
#endif /* BENCH_X86 */

/* Portable: gcc vector extensions, built for the baseline ISA. Its peak is
 * that ISA's, which the plugins may exceed. */
typedef float portable_vf __attribute__((vector_size(16)));
typedef uint64_t portable_vi __attribute__((vector_size(16)));

static double fma_chain_portable(uint64_t iters)
{
	const portable_vf a = { 0.999999f, 0.999999f, 0.999999f, 0.999999f };
	const portable_vf c = { 1e-7f, 1e-7f, 1e-7f, 1e-7f };
	portable_vf acc[FMA_CHAINS];

	for (int j = 0; j < FMA_CHAINS; j++)
		acc[j] = (portable_vf){ (float)j, (float)j, (float)j, (float)j };
	for (uint64_t i = 0; i < iters; i++)
		for (int j = 0; j < FMA_CHAINS; j++)
			acc[j] = acc[j] * a + c;
	for (int j = 1; j < FMA_CHAINS; j++)
		acc[0] += acc[j];
	__asm__ volatile("" : : "r"(&acc[0]) : "memory");
	return 2.0 * FMA_CHAINS * 4 * (double)iters;
}

static uint64_t read_sum_portable(const void *p, size_t bytes)
{
	const portable_vi *v = p;
	size_t n = bytes / sizeof(portable_vi);
	portable_vi acc[READ_WAYS] = { { 0 } };

	for (size_t i = 0; i + READ_WAYS <= n; i += READ_WAYS)
		for (int j = 0; j < READ_WAYS; j++)
			acc[j] += v[i + j];
	for (int j = 1; j < READ_WAYS; j++)
		acc[0] += acc[j];
	return acc[0][0] + acc[0][1];
}

static uint64_t read_prefetch_portable(const void *p, size_t bytes)
{
	const portable_vi *v = p;
	size_t n = bytes / sizeof(portable_vi);
	portable_vi acc[READ_WAYS] = { { 0 } };

	for (size_t i = 0; i + READ_WAYS <= n; i += READ_WAYS) {
		if (i % (64 / sizeof(portable_vi)) == 0)
			__builtin_prefetch((const char *)&v[i] + PREFETCH_BYTES);
		for (int j = 0; j < READ_WAYS; j++)
			acc[j] += v[i + j];
	}
	for (int j = 1; j < READ_WAYS; j++)
		acc[0] += acc[j];
	return acc[0][0] + acc[0][1];
}

static uint64_t read_two_portable(const void *p, size_t bytes)
{
	const portable_vi *v = p, *w;
	size_t n = bytes / sizeof(portable_vi) / 2 / READ_WAYS * READ_WAYS;
	portable_vi acc[2 * READ_WAYS] = { { 0 } };

	w = v + n;
	for (size_t i = 0; i < n; i += READ_WAYS)
		for (int j = 0; j < READ_WAYS; j++) {
			acc[j] += v[i + j];
			acc[READ_WAYS + j] += w[i + j];
		}
	for (int j = 1; j < 2 * READ_WAYS; j++)
		acc[0] += acc[j];
	return acc[0][0] + acc[0][1];
}

/* Not const: the non-temporal kernel joins at run time, when the CPU has SSE4.1. */
static struct bench_simd simd_portable = {
	.isa = "portable",
	.fma_chain = fma_chain_portable,
	.read_sum = read_sum_portable,
	.reads = { { "plain", read_sum_portable }, { "prefetch", read_prefetch_portable },
		   { "two-stream", read_two_portable } },
	.n_reads = 3,
};

const struct bench_simd *bench_simd_select(void)
{
#ifdef BENCH_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return &simd_avx512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return &simd_avx2;
	if (__builtin_cpu_supports("sse4.1") && simd_portable.n_reads == 3)
		simd_portable.reads[simd_portable.n_reads++] =
			(struct bench_read_kernel){ "non-temporal", read_nt_sse41 };
#endif
	return &simd_portable;
}
