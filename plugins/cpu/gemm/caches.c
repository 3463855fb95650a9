/* The cache sizes the GEMM blocking derives from, read once: sysconf,
 * else sysfs, else a fallback. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gemm/sgemm.h"

struct cpu_caches {
	int64_t l2;
};

static pthread_once_t caches_once = PTHREAD_ONCE_INIT;
static struct cpu_caches caches;

/* Size of the data/unified cache of a level from sysfs ("48K"), 0 if none. */
static int64_t sysfs_cache_size(int level)
{
	for (int idx = 0; idx < 8; idx++) {
		char path[96], type[32] = "", size[32] = "";
		int lvl = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%d", &lvl) != 1)
			lvl = 0;
		fclose(f);
		if (lvl != level)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%31s", type) != 1)
				type[0] = 0;
			fclose(f);
		}
		if (strcmp(type, "Instruction") == 0)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%31s", size) != 1)
			size[0] = 0;
		fclose(f);

		char *end;
		int64_t v = strtoll(size, &end, 10);

		if (*end == 'K')
			v <<= 10;
		else if (*end == 'M')
			v <<= 20;
		return v > 0 ? v : 0;
	}
	return 0;
}

static int64_t cache_size(int sc_name, int level, int64_t fallback)
{
	long v = sysconf(sc_name);

	if (v > 0)
		return v;
	v = (long)sysfs_cache_size(level);
	return v > 0 ? v : fallback;
}

static void caches_init(void)
{
	caches.l2 = cache_size(_SC_LEVEL2_CACHE_SIZE, 2, 1 << 20);
}

int64_t cpu_l2_bytes(void)
{
	pthread_once(&caches_once, caches_init);
	return caches.l2;
}
