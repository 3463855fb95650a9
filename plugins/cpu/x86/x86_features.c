#include "x86_features.h"

#include <stdint.h>
#include <stdio.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	r[0] = r[1] = r[2] = r[3] = 0;
	if ((uint32_t)__get_cpuid_max(leaf & 0x80000000u, NULL) >= leaf)
		__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

/* Only called once CPUID says OSXSAVE: xgetbv faults otherwise. Encoded as
 * bytes so this file needs no -mxsave. */
static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

#define BIT(r, n) (((r) >> (n)) & 1u)

void x86_features_read(struct x86_features *f)
{
	uint32_t l1[4], l7[4], l7s1[4];
	uint64_t xcr0 = 0;

	*f = (struct x86_features){ 0 };
	cpuid(1, 0, l1);
	cpuid(7, 0, l7);
	cpuid(7, 1, l7s1);
	if (BIT(l1[2], 27)) /* OSXSAVE */
		xcr0 = xgetbv0();
	f->os_avx = (xcr0 & 0x6) == 0x6;
	f->os_avx512 = f->os_avx && (xcr0 & 0xe0) == 0xe0;
	f->os_amx = f->os_avx512 && (xcr0 & 0x60000) == 0x60000;

	f->sse42 = BIT(l1[2], 20);
	f->fma = BIT(l1[2], 12);
	f->avx = BIT(l1[2], 28);
	f->f16c = BIT(l1[2], 29);
	f->avx2 = BIT(l7[1], 5);
	f->avx512f = BIT(l7[1], 16);
	f->avx512dq = BIT(l7[1], 17);
	f->avx512bw = BIT(l7[1], 30);
	f->avx512vl = BIT(l7[1], 31);
	f->avx512vnni = BIT(l7[2], 11);
	f->avx512fp16 = BIT(l7[3], 23);
	f->amx_bf16 = BIT(l7[3], 22);
	f->amx_tile = BIT(l7[3], 24);
	f->amx_int8 = BIT(l7[3], 25);
	f->avxvnni = BIT(l7s1[0], 4);
	f->avx512bf16 = BIT(l7s1[0], 5);
}

#else

void x86_features_read(struct x86_features *f)
{
	*f = (struct x86_features){ 0 };
}

#endif

bool x86_can_run_avx2(const struct x86_features *f, char *why, size_t len)
{
	if (!(f->avx2 && f->fma && f->f16c)) {
		snprintf(why, len, "the CPU lacks AVX2, FMA or F16C");
		return false;
	}
	if (!f->os_avx) {
		snprintf(why, len, "the CPU has AVX2 but the OS does not enable the AVX register state (XCR0)");
		return false;
	}
	return true;
}

bool x86_can_run_avx512(const struct x86_features *f, char *why, size_t len)
{
	if (!(f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq)) {
		snprintf(why, len, "the CPU lacks AVX-512 F/BW/VL/DQ");
		return false;
	}
	if (!f->os_avx512) {
		snprintf(why, len, "the CPU has AVX-512 but the OS does not enable the ZMM register state (XCR0)");
		return false;
	}
	if (!x86_can_run_avx2(f, why, len))
		return false;
	return true;
}
