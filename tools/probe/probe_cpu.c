/* gllmk-probe: the CPU — vendor, model, cores, caches and the ISA features
 * the CPU plugins choose by.
 *
 * x86 features come from CPUID, and those that need register state the OS
 * must save (AVX, AVX-512, AMX) also from XCR0 through XGETBV, read only when
 * CPUID says OSXSAVE is on: a CPU can have AVX-512 while the kernel or a VM
 * leaves its state disabled. aarch64 features come from the kernel's HWCAPs.
 * This file is compiled for the baseline ISA and runs under any emulator.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "probe_report.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

static void add_feature(struct probe_cpu *cpu, const char *name, bool has, bool os)
{
	if (cpu->n_features == PROBE_MAX_FEATURES)
		return;
	cpu->features[cpu->n_features++] = (struct probe_feature){ .name = name, .cpu = has, .os = os };
}

static void trim(char *s)
{
	size_t n = strlen(s), b = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[b]))
		b++;
	memmove(s, s + b, n - b + 1);
}

static bool read_sys(const char *path, char *out, size_t len);

/* The value of the first "key : value" line of /proc/cpuinfo, or "". */
static void cpuinfo_field(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	size_t klen = strlen(key);

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon || strncmp(line, key, klen) != 0 || (line[klen] != ':' && !isspace((unsigned char)line[klen])))
			continue;
		snprintf(out, len, "%s", colon + 1);
		trim(out);
		break;
	}
	fclose(f);
}

/* ------------------------------------------------------------------ x86 */
#if defined(__x86_64__) || defined(__i386__)

enum cpuid_reg { EAX, EBX, ECX, EDX };

/* XCR0 bits each kind of register state needs enabled by the OS. */
#define XCR0_AVX ((1u << 1) | (1u << 2))                  /* SSE, AVX */
#define XCR0_AVX512 (XCR0_AVX | (1u << 5) | (1u << 6) | (1u << 7)) /* opmask, ZMM_Hi256, Hi16_ZMM */
#define XCR0_AMX ((1u << 17) | (1u << 18))                /* XTILECFG, XTILEDATA */

struct x86_feature {
	const char *name;
	uint32_t leaf, subleaf;
	enum cpuid_reg reg;
	int bit;
	uint64_t xcr0; /* state the OS must enable; 0: none */
};

static const struct x86_feature x86_features[] = {
	{ "sse4_2",      1, 0, ECX, 20, 0 },
	{ "avx",         1, 0, ECX, 28, XCR0_AVX },
	{ "fma",         1, 0, ECX, 12, XCR0_AVX },
	{ "f16c",        1, 0, ECX, 29, XCR0_AVX },
	{ "avx2",        7, 0, EBX,  5, XCR0_AVX },
	{ "avx512f",     7, 0, EBX, 16, XCR0_AVX512 },
	{ "avx512bw",    7, 0, EBX, 30, XCR0_AVX512 },
	{ "avx512vl",    7, 0, EBX, 31, XCR0_AVX512 },
	{ "avx512_vnni", 7, 0, ECX, 11, XCR0_AVX512 },
	{ "avx512_bf16", 7, 1, EAX,  5, XCR0_AVX512 },
	{ "avx512_fp16", 7, 0, EDX, 23, XCR0_AVX512 },
	{ "avx_vnni",    7, 1, EAX,  4, XCR0_AVX },
	{ "amx_tile",    7, 0, EDX, 24, XCR0_AMX },
	{ "amx_int8",    7, 0, EDX, 25, XCR0_AMX },
	{ "amx_bf16",    7, 0, EDX, 22, XCR0_AMX },
};

static bool cpuid_bit(uint32_t max_leaf, uint32_t max_sub7, const struct x86_feature *f)
{
	uint32_t r[4] = { 0 };

	if (f->leaf > max_leaf || (f->leaf == 7 && f->subleaf > max_sub7))
		return false;
	__cpuid_count(f->leaf, f->subleaf, r[EAX], r[EBX], r[ECX], r[EDX]);
	return (r[f->reg] >> f->bit) & 1;
}

static uint64_t read_xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static void probe_isa(struct probe_cpu *cpu)
{
	uint32_t a, b, c, d, max_leaf, max_sub7 = 0, ext[12];
	size_t i;

	__cpuid(0, max_leaf, b, c, d);
	memcpy(cpu->vendor + 0, &b, 4);
	memcpy(cpu->vendor + 4, &d, 4);
	memcpy(cpu->vendor + 8, &c, 4);
	cpu->vendor[12] = '\0';
	if (max_leaf >= 7)
		__cpuid_count(7, 0, max_sub7, b, c, d);
	if (max_leaf >= 1) {
		__cpuid(1, a, b, c, d);
		if ((c >> 27) & 1) { /* OSXSAVE: XGETBV may run */
			cpu->has_xcr0 = true;
			cpu->xcr0 = read_xcr0();
		}
	}
	for (i = 0; i < sizeof(x86_features) / sizeof(x86_features[0]); i++) {
		const struct x86_feature *f = &x86_features[i];
		bool os = !f->xcr0 || (cpu->has_xcr0 && (cpu->xcr0 & f->xcr0) == f->xcr0);

		add_feature(cpu, f->name, cpuid_bit(max_leaf, max_sub7, f), os);
	}

	__cpuid(0x80000000, a, b, c, d);
	if (a >= 0x80000004) {
		for (i = 0; i < 3; i++)
			__cpuid(0x80000002 + i, ext[4 * i], ext[4 * i + 1], ext[4 * i + 2], ext[4 * i + 3]);
		memcpy(cpu->model, ext, sizeof(ext));
		cpu->model[sizeof(ext)] = '\0';
		trim(cpu->model);
	}
}

/* --------------------------------------------------------------- aarch64 */
#elif defined(__aarch64__)

/* Values from the kernel's uapi asm/hwcap.h, for older headers. */
#define AA_HWCAP_FP (1ul << 0)
#define AA_HWCAP_ASIMD (1ul << 1)
#define AA_HWCAP_FPHP (1ul << 9)
#define AA_HWCAP_ASIMDHP (1ul << 10)
#define AA_HWCAP_ASIMDDP (1ul << 20)
#define AA_HWCAP_SVE (1ul << 22)
#define AA_HWCAP2_SVE2 (1ul << 1)
#define AA_HWCAP2_I8MM (1ul << 13)
#define AA_HWCAP2_BF16 (1ul << 14)

struct arm_feature {
	const char *name;
	int hwcap2;           /* 0: AT_HWCAP, 1: AT_HWCAP2 */
	unsigned long bits;   /* all of them must be set */
};

static const struct arm_feature arm_features[] = {
	{ "asimd",   0, AA_HWCAP_FP | AA_HWCAP_ASIMD },
	{ "fp16",    0, AA_HWCAP_FPHP | AA_HWCAP_ASIMDHP },
	{ "dotprod", 0, AA_HWCAP_ASIMDDP },
	{ "sve",     0, AA_HWCAP_SVE },
	{ "sve2",    1, AA_HWCAP2_SVE2 },
	{ "i8mm",    1, AA_HWCAP2_I8MM },
	{ "bf16",    1, AA_HWCAP2_BF16 },
};

/* The implementer codes of the Arm ARM (MIDR_EL1). */
static const char *arm_implementer(unsigned long code)
{
	switch (code) {
	case 0x41: return "ARM";
	case 0x42: return "Broadcom";
	case 0x43: return "Cavium";
	case 0x46: return "Fujitsu";
	case 0x48: return "HiSilicon";
	case 0x4e: return "NVIDIA";
	case 0x50: return "Applied Micro";
	case 0x51: return "Qualcomm";
	case 0x61: return "Apple";
	case 0xc0: return "Ampere";
	default: return NULL;
	}
}

static void probe_isa(struct probe_cpu *cpu)
{
	unsigned long caps[2] = { getauxval(AT_HWCAP), getauxval(AT_HWCAP2) };
	char impl[32], part[32];
	const char *who;
	size_t i;

	for (i = 0; i < sizeof(arm_features) / sizeof(arm_features[0]); i++) {
		const struct arm_feature *f = &arm_features[i];

		add_feature(cpu, f->name, (caps[f->hwcap2] & f->bits) == f->bits, true);
	}
	cpuinfo_field("CPU implementer", impl, sizeof(impl));
	cpuinfo_field("CPU part", part, sizeof(part));
	if (!impl[0] && read_sys("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", impl, sizeof(impl))) {
		unsigned long midr = strtoul(impl, NULL, 0);

		snprintf(impl, sizeof(impl), "0x%02lx", (midr >> 24) & 0xff);
		snprintf(part, sizeof(part), "0x%03lx", (midr >> 4) & 0xfff);
	}
	who = arm_implementer(strtoul(impl, NULL, 0));
	probe_copy(cpu->vendor, who ? who : impl);
	if (part[0])
		probe_set(cpu->model, "part %s", part);
}

#else
static void probe_isa(struct probe_cpu *cpu)
{
	(void)cpu;
}
#endif

/* ------------------------------------------------- cores and caches */

static bool read_sys(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(out, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		trim(out);
	return ok;
}

static long read_sys_long(const char *fmt, int a, int b)
{
	char path[256], val[64];

	snprintf(path, sizeof(path), fmt, a, b);
	return read_sys(path, val, sizeof(val)) ? strtol(val, NULL, 10) : -1;
}

/* Is (pkg, core) among the first n pairs? core < 0 matches any core. */
static bool seen_pair(const long *pairs, int n, long pkg, long core)
{
	for (int j = 0; j < n; j++)
		if (pairs[2 * j] == pkg && (core < 0 || pairs[2 * j + 1] == core))
			return true;
	return false;
}

/* Physical cores: distinct (package, core) pairs among the CPUs. */
static void probe_cores(struct probe_cpu *cpu)
{
	enum { MAX_CPUS = 4096 };
	static const char topo[] = "/sys/devices/system/cpu/cpu%d/topology/%s";
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	long *pairs = calloc(2 * MAX_CPUS, sizeof(*pairs));
	int n = 0, packages = 0;

	cpu->logical_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 0; pairs && i < conf && i < MAX_CPUS; i++) {
		char path[256], val[32];
		long pkg, core;

		snprintf(path, sizeof(path), topo, i, "physical_package_id");
		if (!read_sys(path, val, sizeof(val)))
			continue; /* offline, or no topology in this environment */
		pkg = strtol(val, NULL, 10);
		snprintf(path, sizeof(path), topo, i, "core_id");
		core = read_sys(path, val, sizeof(val)) ? strtol(val, NULL, 10) : i;
		if (seen_pair(pairs, n, pkg, core))
			continue;
		packages += !seen_pair(pairs, n, pkg, -1);
		pairs[2 * n] = pkg;
		pairs[2 * n + 1] = core;
		n++;
	}
	free(pairs);
	cpu->physical_cores = n ? n : cpu->logical_cpus;
	cpu->packages = packages ? packages : 1;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (toupper((unsigned char)*end)) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	default: return v;
	}
}

/* "0-3,8-11" → 8 */
static int count_cpu_list(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		n += (int)(b - a + 1);
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

static void add_cache(struct probe_cpu *cpu, int level, const char *type, uint64_t size, int shared_by)
{
	struct probe_cache *c;

	if (cpu->n_caches == PROBE_MAX_CACHES || !size)
		return;
	c = &cpu->caches[cpu->n_caches++];
	*c = (struct probe_cache){ .level = level, .size = size, .shared_by = shared_by };
	probe_copy(c->type, type);
}

static uint64_t sysconf_size(int name)
{
	long v = sysconf(name);

	return v > 0 ? (uint64_t)v : 0;
}

static void probe_caches(struct probe_cpu *cpu)
{
	static const char dir[] = "/sys/devices/system/cpu/cpu0/cache/index%d/%s";
	int i;

	for (i = 0; i < PROBE_MAX_CACHES; i++) {
		char path[256], type[32], size[32], shared[256];
		long level = read_sys_long("/sys/devices/system/cpu/cpu0/cache/index%d/level", i, 0);

		if (level < 0)
			break;
		snprintf(path, sizeof(path), dir, i, "type");
		if (!read_sys(path, type, sizeof(type)))
			break;
		snprintf(path, sizeof(path), dir, i, "size");
		if (!read_sys(path, size, sizeof(size)))
			continue;
		snprintf(path, sizeof(path), dir, i, "shared_cpu_list");
		if (!read_sys(path, shared, sizeof(shared)))
			shared[0] = '\0';
		for (char *p = type; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		add_cache(cpu, (int)level, type, parse_size(size), count_cpu_list(shared));
	}
	if (cpu->n_caches)
		return;
	/* No sysfs (containers, emulators): glibc's own view. */
	add_cache(cpu, 1, "data", sysconf_size(_SC_LEVEL1_DCACHE_SIZE), 0);
	add_cache(cpu, 2, "unified", sysconf_size(_SC_LEVEL2_CACHE_SIZE), 0);
	add_cache(cpu, 3, "unified", sysconf_size(_SC_LEVEL3_CACHE_SIZE), 0);
}

void probe_cpu(struct probe_cpu *cpu)
{
	struct utsname u;

	*cpu = (struct probe_cpu){ 0 };
	if (uname(&u) == 0)
		probe_copy(cpu->arch, u.machine);
	probe_isa(cpu);
	if (!cpu->model[0]) /* x86 without the brand string; other architectures */
		cpuinfo_field("model name", cpu->model, sizeof(cpu->model));
	probe_cores(cpu);
	probe_caches(cpu);
}
