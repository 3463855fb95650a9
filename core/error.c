/* Status strings and the thread-local last-error message.
 *
 * A failed call writes one sentence per thread; a successful call leaves it
 * alone, so the op path never touches it.
 */
#include <stdio.h>

#include "core.h"

#define ERROR_MAX 1024

static _Thread_local char last_error[ERROR_MAX];

static gllmk_status core_verror(gllmk_status st, const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	return st;
}

gllmk_status core_error(gllmk_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	core_verror(st, fmt, ap);
	va_end(ap);
	return st;
}

const gllmk_host core_host = {
	.struct_size = sizeof(gllmk_host),
	.abi_major = GLLMK_ABI_MAJOR,
	.abi_minor = GLLMK_ABI_MINOR,
	.table_size = sizeof(gllmk_plugin_table),
	.set_error = core_error, /* a plugin's message becomes the caller's */
};

GLLMK_API const char *gllmk_last_error(void)
{
	return last_error;
}

static const char *const status_strings[] = {
	[GLLMK_OK] = "success",
	[GLLMK_E_NULL] = "a required pointer is NULL",
	[GLLMK_E_INVALID] = "an argument is out of its range",
	[GLLMK_E_DTYPE] = "unknown or unsupported dtype",
	[GLLMK_E_SHAPE] = "shapes do not fit together",
	[GLLMK_E_OVERFLOW] = "size does not fit in 64 bits",
	[GLLMK_E_BOUNDS] = "out of bounds",
	[GLLMK_E_BLOCK] = "row length is not a multiple of the quant block",
	[GLLMK_E_ALIGN] = "misaligned offset or stride",
	[GLLMK_E_ALIAS] = "an output overlaps an input",
	[GLLMK_E_CONTEXT] = "buffer belongs to another context",
	[GLLMK_E_UNSUPPORTED] = "not supported by this plugin",
	[GLLMK_E_NO_MEMORY] = "out of memory",
	[GLLMK_E_NO_PLUGIN] = "no plugin could be used",
	[GLLMK_E_BACKEND] = "the device or driver failed",
};

GLLMK_API const char *gllmk_status_string(gllmk_status st)
{
	if ((unsigned)st >= sizeof(status_strings) / sizeof(status_strings[0]) || !status_strings[st])
		return "unknown status";
	return status_strings[st];
}
