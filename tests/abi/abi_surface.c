/* Every type of the plugin ABI, reachable from one exported function, so
 * that abidw describes the plugin table, the host, the open arguments, the
 * probe info, the tensor and every params struct (scripts/abi-check compiles
 * this with -g against the current abi/ and compares it with
 * abi/baseline/plugin-abi.abi). Not a plugin: never loaded.
 *
 * The slot types are also parameters of gllmk_abi_slots: abi-check lets the
 * table grow at its end (compatible.suppr), and a suppressed table must not
 * hide a slot that was retyped. */
#include "gllmk_plugin.h"

__attribute__((visibility("default")))
const gllmk_plugin_table *gllmk_abi_surface(const gllmk_host *host, const gllmk_open_args *args,
					    gllmk_probe_info *info, gllmk_plugin_entry_fn entry,
					    gllmk_layer_entry_fn layer)
{
	(void)args;
	(void)info;
	(void)layer;
	return entry(host, 0, 0);
}

/* Every ABI 1.0 slot type, as parameters of their own, in the frozen order
 * of abi/baseline/plugin_table_v1_0.def (so a minor that appends slots does
 * not change this function). The last parameter ends the list. */
#define BASELINE_SLOT(n, slot, type) type slot __attribute__((unused)),
__attribute__((visibility("default")))
void gllmk_abi_slots(
#include "plugin_table_v1_0.def"
	int end __attribute__((unused)))
{
}
#undef BASELINE_SLOT

/* The slot types ABI 1.1 appended, in table order (GLLMK_OPS_V1_1), so that
 * abidw describes their params structs; a later minor adds its own function. */
#define SLOT_PARAM_V1_1(slot, type) type slot __attribute__((unused)),
__attribute__((visibility("default")))
void gllmk_abi_slots_v1_1(GLLMK_OPS_V1_1(SLOT_PARAM_V1_1) int end __attribute__((unused)))
{
}
#undef SLOT_PARAM_V1_1
