/* libFuzzer target for the GGUF reader: every input must open cleanly or
 * fail with one line, and whatever opens must be safe to walk.
 * Build: clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined
 *        -Itools/run tests/run/fuzz_gguf.c tools/run/gguf.c -o fuzz_gguf */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gguf.h"

/* The reader takes a path: a memfd gives it one without touching the disk. */
static int input_fd = -1;
static char input_path[64];

static void write_input(const uint8_t *data, size_t size)
{
	if (input_fd < 0) {
		input_fd = memfd_create("gguf-fuzz", MFD_CLOEXEC);
		if (input_fd < 0)
			abort();
		snprintf(input_path, sizeof(input_path), "/proc/self/fd/%d", input_fd);
	}
	if (ftruncate(input_fd, 0) != 0 || pwrite(input_fd, data, size, 0) != (ssize_t)size)
		abort();
}

/* Touches the first and last byte of everything open() vouched for, so
 * that ASan sees any pointer it got wrong. */
static unsigned walk(const struct gguf_file *f)
{
	unsigned sum = 0;
	char err[256], key[96];
	uint32_t u;
	float x;
	struct gguf_str s;

	for (uint64_t i = 0; i < f->n_kv; i++) {
		const struct gguf_kv *kv = &f->kv[i];

		snprintf(key, sizeof(key), "%.*s", (int)(kv->key.len < 80 ? kv->key.len : 80), kv->key.ptr);
		sum += (unsigned)(gguf_get_u32(f, key, &u, err, sizeof(err)) + gguf_get_f32(f, key, &x, err, sizeof(err)));
		if (gguf_get_str(f, key, &s, err, sizeof(err)) == 0 && s.len)
			sum += (unsigned char)s.ptr[s.len - 1];
		for (uint64_t j = 0; kv->strs && j < kv->arr_n; j++)
			if (kv->strs[j].len)
				sum += (unsigned char)kv->strs[j].ptr[kv->strs[j].len - 1];
	}
	for (uint64_t i = 0; i < f->n_tensors; i++) {
		const struct gguf_tensor *t = &f->tensors[i];
		const uint8_t *p = t->data;

		sum += p[0] + p[t->nbytes - 1] + (gguf_ggml_type_name(t->type) != NULL);
		sum += gguf_find_tensor(f, "output.weight") == t;
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gguf_file *f;
	char err[512];

	write_input(data, size);
	if (gguf_open(input_path, &f, err, sizeof(err)) != 0) {
		if (err[0] == '\0' || strchr(err, '\n'))
			abort(); /* every failure is one non-empty line */
		return 0;
	}
	volatile unsigned sink = walk(f);
	(void)sink;
	gguf_close(f);
	return 0;
}
