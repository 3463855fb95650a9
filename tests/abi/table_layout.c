/* The plugin table of the current abi/gllmk_plugin.h against ABI 1.0's,
 * frozen in abi/baseline/plugin_table_v1_0.def: every 1.0 slot keeps its
 * offset and its slot type, and the table only grows. This file fails to
 * compile when a slot was inserted, removed, moved or retyped; that is a
 * new major (SPEC/ABI.md, "Bumping the ABI and updating the baseline"). */
#include <stddef.h>

#include "gllmk_plugin.h"

_Static_assert(offsetof(struct gllmk_plugin_table, size) == 0, "baseline 1.0: size at 0");
_Static_assert(offsetof(struct gllmk_plugin_table, abi_major) == 4, "baseline 1.0: abi_major at 4");
_Static_assert(offsetof(struct gllmk_plugin_table, abi_minor) == 6, "baseline 1.0: abi_minor at 6");
_Static_assert(offsetof(struct gllmk_plugin_table, name) == 8, "baseline 1.0: name at 8");

#define BASELINE_OFFSET(n) (8 + sizeof(void *) * (1 + (n)))
#define BASELINE_SLOT(n, slot, type)                                                           \
	_Static_assert(offsetof(struct gllmk_plugin_table, slot) == BASELINE_OFFSET(n),          \
		       "baseline 1.0: slot " #n " (" #slot ") moved");                           \
	_Static_assert(__builtin_types_compatible_p(__typeof__(((struct gllmk_plugin_table *)0)->slot), \
						    type),                                       \
		       "baseline 1.0: slot " #n " (" #slot ") is no longer a " #type);
#include "plugin_table_v1_0.def"
#undef BASELINE_SLOT

_Static_assert(sizeof(struct gllmk_plugin_table) >= BASELINE_OFFSET(BASELINE_SLOT_COUNT),
	       "baseline 1.0: the table only grows");
_Static_assert(GLLMK_ABI_MAJOR == 1, "a new major needs a new baseline (SPEC/ABI.md)");

/* Something for the test program to call, so the checks are linked in. */
int abi_table_layout_slots(void)
{
	return BASELINE_SLOT_COUNT;
}
