/* GLLMK_DEBUG and GLLMK_DEBUG_FILE.
 *
 * GLLMK_DEBUG is a comma list of trace, check, compare, stats (or all);
 * unset or empty, the layer passes through. A word the layer does not know
 * refuses the layer, and with it gllmk_open: a typo must not look like a
 * clean run. Both are read with secure_getenv, so a setuid program ignores
 * them (GLLMK_DEBUG_FILE names a file to write).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug.h"

static const struct {
	const char *word;
	unsigned modes;
} debug_words[] = {
	{ "trace", DEBUG_TRACE },
	{ "check", DEBUG_CHECK },
	{ "compare", DEBUG_COMPARE },
	{ "stats", DEBUG_STATS },
	{ "all", DEBUG_TRACE | DEBUG_CHECK | DEBUG_COMPARE | DEBUG_STATS },
};

static int word_modes(const char *w, size_t n, unsigned *modes)
{
	size_t i;

	for (i = 0; i < sizeof(debug_words) / sizeof(debug_words[0]); i++) {
		if (strlen(debug_words[i].word) == n && !strncmp(debug_words[i].word, w, n)) {
			*modes |= debug_words[i].modes;
			return 0;
		}
	}
	return -1;
}

int debug_config_read(struct debug_config *cfg, char *reason, size_t reason_len)
{
	const char *v = secure_getenv("GLLMK_DEBUG");
	const char *file = secure_getenv("GLLMK_DEBUG_FILE");

	cfg->modes = 0;
	cfg->file[0] = '\0';
	if (file)
		snprintf(cfg->file, sizeof(cfg->file), "%s", file);
	while (v && *v) {
		size_t n = strcspn(v, ",");

		/* Empty items (",," or a trailing comma) are harmless. */
		if (n && word_modes(v, n, &cfg->modes) < 0) {
			snprintf(reason, reason_len,
				 "GLLMK_DEBUG: unknown word '%.*s' (known: trace, check, compare, stats, all)", (int)n, v);
			return -1;
		}
		v += n + (v[n] == ',');
	}
	return 0;
}
