/* cpu-neon's probe: the kernel's HWCAP/HWCAP2 words (getauxval), never an
 * instruction the CPU may lack: AdvSIMD is required; FP16, DOTPROD and I8MM
 * are reported, and DOTPROD picks the sdot kernels at open. */
#include <stdio.h>
#include <sys/auxv.h>

#include "cpu_plugin.h"
#include "neon_kernels.h"

/* The arm64 bits of <asm/hwcap.h>, named here so that the probe builds
 * against older kernel headers too. */
#define NEON_HWCAP_FPHP (1UL << 9)
#define NEON_HWCAP_ASIMD (1UL << 1)
#define NEON_HWCAP_ASIMDHP (1UL << 10)
#define NEON_HWCAP_ASIMDDP (1UL << 20)
#define NEON_HWCAP2_I8MM (1UL << 13)

gllmk_probe_result neon_probe(gllmk_probe_info *info);

void neon_features_read(struct neon_features *f)
{
	const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);

	f->asimd = !!(hw & NEON_HWCAP_ASIMD);
	f->fp16 = (hw & (NEON_HWCAP_FPHP | NEON_HWCAP_ASIMDHP)) == (NEON_HWCAP_FPHP | NEON_HWCAP_ASIMDHP);
	f->dotprod = !!(hw & NEON_HWCAP_ASIMDDP);
	f->i8mm = !!(hw2 & NEON_HWCAP2_I8MM);
}

gllmk_probe_result neon_probe(gllmk_probe_info *info)
{
	struct neon_features f;
	int cores;

	neon_features_read(&f);
	if (!f.asimd) {
		snprintf(info->reason, sizeof(info->reason), "the CPU does not report AdvSIMD (HWCAP_ASIMD)");
		return GLLMK_PROBE_NO;
	}
	cores = cpu_physical_cores();
	snprintf(info->device, sizeof(info->device), "AArch64 AdvSIMD%s%s%s, %d physical core%s",
		 f.fp16 ? "+FP16" : "", f.dotprod ? "+DOTPROD" : "", f.i8mm ? "+I8MM" : "", cores,
		 cores == 1 ? "" : "s");
	info->reason[0] = '\0';
	return GLLMK_PROBE_YES;
}
