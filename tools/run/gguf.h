/* A GGUF reader for gllmk-run (versions 2 and 3), over a read-only mmap.
 *
 * gguf_open() checks the whole file before it returns: every count, string
 * length, array size, tensor shape, type, offset and byte size is checked
 * against the mapping and for 64-bit overflow, so nothing a caller reads
 * through this header can point past the mapping. A bad file gets one line
 * naming the field ("tensor 3 'blk.0.attn_q.weight': offset 4096 + 8192
 * bytes is past the end of the file (10000 bytes)").
 *
 * Strings are not NUL-terminated: they point into the mapping.
 */
#ifndef GLLMK_RUN_GGUF_H
#define GLLMK_RUN_GGUF_H

#include <stddef.h>
#include <stdint.h>

enum gguf_type {
	GGUF_UINT8 = 0, GGUF_INT8 = 1, GGUF_UINT16 = 2, GGUF_INT16 = 3,
	GGUF_UINT32 = 4, GGUF_INT32 = 5, GGUF_FLOAT32 = 6, GGUF_BOOL = 7,
	GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_UINT64 = 10, GGUF_INT64 = 11,
	GGUF_FLOAT64 = 12,
};

struct gguf_str {
	uint64_t len;
	const char *ptr; /* into the mapping, not NUL-terminated */
};

struct gguf_kv {
	struct gguf_str key;
	uint32_t type;     /* enum gguf_type */
	uint32_t arr_type; /* element type when type == GGUF_ARRAY */
	uint64_t arr_n;    /* element count when type == GGUF_ARRAY */
	const uint8_t *data; /* the value (scalar), or the first element (array) */
	struct gguf_str *strs; /* arrays of strings: every element, found at open; else NULL */
};

#define GGUF_MAX_DIMS 4

struct gguf_tensor {
	struct gguf_str name;
	uint32_t n_dims;
	int64_t ne[GGUF_MAX_DIMS]; /* ggml order: ne[0] is the innermost (row) length; 1 past n_dims */
	uint32_t type;             /* ggml type id, always a gllmk_dtype (others are refused) */
	uint64_t offset;           /* from the start of the data section */
	uint64_t nbytes;
	const void *data;          /* into the mapping */
};

struct gguf_file {
	const char *path;
	const uint8_t *map;   /* the whole file */
	uint64_t size;
	uint32_t version;
	uint64_t alignment;   /* general.alignment, or 32 */
	uint64_t data_offset; /* where the tensor data section starts */
	uint64_t n_kv;
	struct gguf_kv *kv;
	uint64_t n_tensors;
	struct gguf_tensor *tensors;
};

/* Maps and checks path. Returns 0, or -1 with one line in err (no newline). */
int gguf_open(const char *path, struct gguf_file **out, char *err, size_t errlen);
void gguf_close(struct gguf_file *f);

/* Lookups: NULL when absent. */
const struct gguf_kv *gguf_find_kv(const struct gguf_file *f, const char *key);
const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *f, const char *name);

/* Typed getters of a scalar key. Return 0 when the key exists and its value
 * converts exactly (any integer type whose value fits; f32 from f32 or f64),
 * 1 when the key is absent (out untouched), -1 with a message in err when
 * it has another type or does not fit. */
int gguf_get_u32(const struct gguf_file *f, const char *key, uint32_t *out, char *err, size_t errlen);
int gguf_get_f32(const struct gguf_file *f, const char *key, float *out, char *err, size_t errlen);
int gguf_get_str(const struct gguf_file *f, const char *key, struct gguf_str *out, char *err, size_t errlen);

/* The name of a tensor type id ("q4_K", "iq2_xxs"): gllmk's dtype names
 * (abi/gllmk_dtypes.def), which are ggml's; NULL for an id gguf_open refuses. */
const char *gguf_ggml_type_name(uint32_t type);

/* 1 if s equals the NUL-terminated c. */
int gguf_str_eq(struct gguf_str s, const char *c);

#endif
