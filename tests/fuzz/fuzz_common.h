/* What every gllmk fuzz target shares: a reader that turns the fuzz input
 * into values (it never fails: past the end it reads zeros), and the two
 * contexts the API and quant targets compare, cpu-generic and the CPU
 * plugin detection would pick.
 */
#ifndef GLLMK_FUZZ_COMMON_H
#define GLLMK_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gllmk.h"

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline int fuzz_more(const struct fuzz_in *in)
{
	return in->n > 0;
}

static inline void fuzz_bytes(struct fuzz_in *in, void *dst, size_t n)
{
	size_t k = n < in->n ? n : in->n;

	memcpy(dst, in->p, k);
	memset((uint8_t *)dst + k, 0, n - k);
	in->p += k;
	in->n -= k;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v;

	fuzz_bytes(in, &v, 1);
	return v;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t v;

	fuzz_bytes(in, &v, 2);
	return v;
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t v;

	fuzz_bytes(in, &v, 4);
	return v;
}

/* A finding: print it and abort, so libFuzzer saves the input. */
#define FUZZ_CHECK(cond, ...)                                                    \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "fuzz finding: " __VA_ARGS__);          \
			fprintf(stderr, "\n");                                   \
			abort();                                                 \
		}                                                                \
	} while (0)

#ifndef FUZZ_PLUGIN_DIR
#define FUZZ_PLUGIN_DIR NULL
#endif

/* Opens plugin `name` from the build's staged plugins (GLLMK_FUZZ_PLUGIN_DIR
 * overrides), two worker threads so the CPU thread pool runs; NULL if it
 * cannot run here. */
static inline gllmk_context *fuzz_open(const char *name)
{
	const char *dir = getenv("GLLMK_FUZZ_PLUGIN_DIR");
	gllmk_options o = {
		.struct_size = sizeof(o),
		.flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_NO_LAYERS,
		.plugins = name,
		.plugin_dir = dir ? dir : FUZZ_PLUGIN_DIR,
		.n_threads = 2,
	};
	gllmk_context *ctx = NULL;

	return gllmk_open(&o, &ctx) == GLLMK_OK ? ctx : NULL;
}

/* The reference and the CPU plugin this machine selects (GLLMK_FUZZ_PLUGIN
 * names another); both stay open for the process. */
static inline void fuzz_contexts(gllmk_context *ctx[2])
{
	static const char *const cpu[] = {"cpu-avx512", "cpu-avx2", "cpu-neon", "cpu-generic"};
	const char *want = getenv("GLLMK_FUZZ_PLUGIN");

	ctx[0] = fuzz_open("cpu-generic");
	ctx[1] = NULL;
	if (want)
		ctx[1] = fuzz_open(want);
	for (size_t i = 0; !ctx[1] && i < sizeof(cpu) / sizeof(cpu[0]); i++)
		ctx[1] = fuzz_open(cpu[i]);
	if (!ctx[0] || !ctx[1]) {
		fprintf(stderr, "fuzz: cannot open the plugins (%s); set GLLMK_FUZZ_PLUGIN_DIR\n", gllmk_last_error());
		abort();
	}
	fprintf(stderr, "fuzz: comparing %s with %s\n", gllmk_context_plugin(ctx[1]), gllmk_context_plugin(ctx[0]));
}

#endif
