/* A fake layer, as libgllmk-debug.so will be one: preloaded, found by the
 * core through gllmk_layer_entry_v1, inserted between the context and its
 * plugin. It overrides scale only (multiplying by an extra factor and
 * counting calls); every other slot is NULL and falls through to the plugin.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "gllmk_plugin.h"

#define FAKE_LAYER_EXPORT __attribute__((visibility("default")))

/* Read by the test through dlsym(RTLD_DEFAULT): the layer is preloaded. */
FAKE_LAYER_EXPORT const float fake_layer_factor = 3.0f;
FAKE_LAYER_EXPORT atomic_int fake_layer_scale_calls;

struct layer_state {
	const gllmk_plugin_table *next;
	void *next_state;
};

static gllmk_status layer_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len)
{
	struct layer_state *ls;

	if (!args->next || !args->next->scale) {
		snprintf(reason, reason_len, "fake-layer: no next table with a scale slot");
		return GLLMK_E_UNSUPPORTED;
	}
	ls = malloc(sizeof(*ls));
	if (!ls) {
		snprintf(reason, reason_len, "fake-layer: out of memory");
		return GLLMK_E_NO_MEMORY;
	}
	*ls = (struct layer_state){ .next = args->next, .next_state = args->next_state };
	*state = ls;
	return GLLMK_OK;
}

/* The core closes the plugin itself; the layer frees only its own state. */
static void layer_close(void *state)
{
	free(state);
}

static gllmk_status layer_scale(void *st, gllmk_t y, gllmk_t x, float s)
{
	const struct layer_state *ls = st;

	atomic_fetch_add(&fake_layer_scale_calls, 1);
	return ls->next->scale(ls->next_state, y, x, s * fake_layer_factor);
}

static const gllmk_plugin_table layer_table = {
	.size = sizeof(gllmk_plugin_table),
	.abi_major = GLLMK_ABI_MAJOR,
	.abi_minor = GLLMK_ABI_MINOR,
	.name = "fake-layer",
	.open = layer_open,
	.close = layer_close,
	.scale = layer_scale,
};

FAKE_LAYER_EXPORT const gllmk_plugin_table *GLLMK_LAYER_ENTRY(const gllmk_host *host, const gllmk_plugin_table *next,
							      char *reason, size_t reason_len);

FAKE_LAYER_EXPORT const gllmk_plugin_table *GLLMK_LAYER_ENTRY(const gllmk_host *host, const gllmk_plugin_table *next,
							      char *reason, size_t reason_len)
{
	(void)host;
	if (!next) {
		snprintf(reason, reason_len, "fake-layer: no next table");
		return NULL;
	}
	return &layer_table;
}
