/* The vector vocabulary moved to plugins/cpu/simd/simd.h (one for x86 and
 * AArch64); this name stays for the files that include it. */
#ifndef GLLMK_X86_SIMD_H
#define GLLMK_X86_SIMD_H

#include "../simd/simd.h"

#endif
