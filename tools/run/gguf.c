/* gllmk-run: the GGUF reader. Everything is checked at open so that callers
 * can trust every pointer and size in struct gguf_file without checks of
 * their own; a hostile file gets one line and never an allocation or a read
 * larger than the file itself justifies. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h> /* isfinite: a macro, no libm */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf.h"

#define DEFAULT_ALIGNMENT 32
/* The fewest bytes an entry can take: what the header counts are bounded by,
 * so that a forged count is refused before anything is allocated for it. */
#define MIN_KV_BYTES 13     /* key length, value type, a 1-byte value */
#define MIN_TENSOR_BYTES 32 /* name length, n_dims, one ne, type, offset */
#define NAME_SHOWN 80       /* longest name quoted in a message */

/* The tensor types the reader takes: gllmk's dtypes (abi/gllmk_dtypes.def,
 * whose ids are ggml's), by id; only their names and block sizes are used
 * here. Ids between them (ggml types gllmk does not have, ids ggml removed)
 * stay zero: a tensor of such a type is refused at open, since its byte
 * size, and so every offset after it, could not be checked. */
struct tensor_type_info {
	const char *name;
	uint32_t block_elems;
	uint32_t block_bytes;
};

static const struct tensor_type_info tensor_types[] = {
#define GLLMK_DTYPE(e, id, name, elems, bytes, align, minor, weight, kv) [id] = { #name, elems, bytes },
#include "gllmk_dtypes.def"
#undef GLLMK_DTYPE
};

#define N_TENSOR_TYPES (sizeof(tensor_types) / sizeof(tensor_types[0]))

/* GGUF value types, by id; size 0: variable (string, array). */
static const struct {
	const char *name;
	uint32_t size;
} value_types[] = {
	[GGUF_UINT8] = { "uint8", 1 },     [GGUF_INT8] = { "int8", 1 },
	[GGUF_UINT16] = { "uint16", 2 },   [GGUF_INT16] = { "int16", 2 },
	[GGUF_UINT32] = { "uint32", 4 },   [GGUF_INT32] = { "int32", 4 },
	[GGUF_FLOAT32] = { "float32", 4 }, [GGUF_BOOL] = { "bool", 1 },
	[GGUF_STRING] = { "string", 0 },   [GGUF_ARRAY] = { "array", 0 },
	[GGUF_UINT64] = { "uint64", 8 },   [GGUF_INT64] = { "int64", 8 },
	[GGUF_FLOAT64] = { "float64", 8 },
};

#define N_VALUE_TYPES (sizeof(value_types) / sizeof(value_types[0]))

/* What gguf_open allocates: the public struct first, so a gguf_file pointer
 * is also one to its index. The sorted arrays serve both the duplicate
 * checks and O(log n) lookups. */
struct gguf_index {
	struct gguf_file file;
	void **kv_by_key;      /* struct gguf_kv *, by key */
	void **tensor_by_name; /* struct gguf_tensor *, by name */
	char path[];
};

static struct gguf_index *index_of(struct gguf_file *f)
{
	return (struct gguf_index *)f;
}

const char *gguf_ggml_type_name(uint32_t type)
{
	if (type >= N_TENSOR_TYPES || tensor_types[type].block_elems == 0)
		return NULL;
	return tensor_types[type].name;
}

int gguf_str_eq(struct gguf_str s, const char *c)
{
	size_t n = strlen(c);

	return s.len == n && memcmp(s.ptr, c, n) == 0;
}

/* ------------------------------------------------------------ messages */

static void put_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A name from the file, made safe to print on one line: control and
 * non-ASCII bytes become '?', long names are cut. */
static void quote_name(char *buf, size_t buflen, struct gguf_str s)
{
	size_t n = 0;
	uint64_t shown = s.len < NAME_SHOWN ? s.len : NAME_SHOWN;

	for (uint64_t i = 0; i < shown && n + 1 < buflen; i++) {
		unsigned char ch = (unsigned char)s.ptr[i];

		buf[n++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	buf[n] = '\0';
	if (shown < s.len && n + 4 < buflen)
		strcat(buf, "...");
}

static void format_shape(char *buf, size_t buflen, const int64_t *ne, uint32_t n_dims)
{
	size_t n = 0;

	buf[0] = '\0';
	for (uint32_t d = 0; d < n_dims && n < buflen; d++)
		n += (size_t)snprintf(buf + n, buflen - n, "%s%" PRId64, d ? ", " : "[", ne[d]);
	if (n < buflen)
		snprintf(buf + n, buflen - n, "]");
}

/* A uint64 from the file read as ggml reads it (int64), without relying
 * on implementation-defined conversion. */
static int64_t as_int64(uint64_t u)
{
	return u > INT64_MAX ? -(int64_t)(~u) - 1 : (int64_t)u;
}

/* -------------------------------------------------------------- reader */

/* A bounds-checked cursor over the mapping. Every message it writes starts
 * with `where` ("kv 7 'general.name'", "tensor 3 'blk.0.attn_q.weight'"). */
struct reader {
	const uint8_t *map;
	uint64_t size;
	uint64_t pos;
	char where[NAME_SHOWN + 48];
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct reader *r, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	put_err(r->err, r->errlen, "%s: %s", r->where, msg);
	return -1;
}

static void set_where(struct reader *r, const char *what, uint64_t index)
{
	snprintf(r->where, sizeof(r->where), "%s %" PRIu64, what, index);
}

static void add_name_to_where(struct reader *r, struct gguf_str name)
{
	char quoted[NAME_SHOWN + 4];
	size_t n = strlen(r->where);

	quote_name(quoted, sizeof(quoted), name);
	snprintf(r->where + n, sizeof(r->where) - n, " '%s'", quoted);
}

static uint64_t bytes_left(const struct reader *r)
{
	return r->size - r->pos;
}

static int need(struct reader *r, uint64_t n, const char *what)
{
	if (n <= bytes_left(r))
		return 0;
	return fail(r, "%s (%" PRIu64 " bytes at byte %" PRIu64 ") runs past the end of the file (%" PRIu64 " bytes)",
		    what, n, r->pos, r->size);
}

static uint64_t load_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int read_u32(struct reader *r, const char *what, uint32_t *v)
{
	if (need(r, 4, what))
		return -1;
	*v = (uint32_t)load_le(r->map + r->pos, 4);
	r->pos += 4;
	return 0;
}

static int read_u64(struct reader *r, const char *what, uint64_t *v)
{
	if (need(r, 8, what))
		return -1;
	*v = load_le(r->map + r->pos, 8);
	r->pos += 8;
	return 0;
}

/* A string at the cursor, or -1 (no message) when it does not fit. */
static int take_str(struct reader *r, struct gguf_str *s)
{
	uint64_t len;

	if (bytes_left(r) < 8)
		return -1;
	len = load_le(r->map + r->pos, 8);
	if (len > bytes_left(r) - 8)
		return -1;
	s->len = len;
	s->ptr = (const char *)r->map + r->pos + 8;
	r->pos += 8 + len;
	return 0;
}

/* what: "key", "string", "name", "element 5" (the message says "<what> length"). */
static int read_str(struct reader *r, const char *what, struct gguf_str *s)
{
	char field[64];
	uint64_t len;

	if (take_str(r, s) == 0)
		return 0;
	snprintf(field, sizeof(field), "%s length", what);
	if (read_u64(r, field, &len))
		return -1;
	return fail(r, "%s %" PRIu64 " runs past the end of the file at byte %" PRIu64 " (%" PRIu64 " bytes)",
		    field, len, r->pos, r->size);
}

/* --------------------------------------------------------------- header */

static int check_version(struct reader *r, uint32_t v)
{
	uint32_t swapped = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);

	if (v == 2 || v == 3)
		return 0;
	if (swapped >= 1 && swapped <= 3)
		return fail(r, "version field 0x%08" PRIx32 " is version %" PRIu32 " written big-endian: "
			    "big-endian GGUF files are not supported",
			    v, swapped);
	if (v == 1)
		return fail(r, "version 1 is not supported (GGUF v1 had 32-bit counts; versions 2 and 3 are read)");
	if (v == 0)
		return fail(r, "version 0 is not a GGUF version");
	return fail(r, "version %" PRIu32 " is newer than this reader (versions 2 and 3 are read)", v);
}

static int check_counts(struct reader *r, uint64_t n_tensors, uint64_t n_kv)
{
	uint64_t left = bytes_left(r);

	if (n_tensors > left / MIN_TENSOR_BYTES)
		return fail(r, "tensor count %" PRIu64 " is more than the file could hold "
			    "(at most %" PRIu64 " in the %" PRIu64 " bytes after the header)",
			    n_tensors, left / MIN_TENSOR_BYTES, left);
	if (n_kv > left / MIN_KV_BYTES)
		return fail(r, "kv count %" PRIu64 " is more than the file could hold "
			    "(at most %" PRIu64 " in the %" PRIu64 " bytes after the header)",
			    n_kv, left / MIN_KV_BYTES, left);
	/* Both are below 2^59 here, so the sum cannot wrap. */
	if (n_tensors * MIN_TENSOR_BYTES + n_kv * MIN_KV_BYTES > left)
		return fail(r, "kv count %" PRIu64 " and tensor count %" PRIu64 " need at least %" PRIu64 " bytes, "
			    "more than the file could hold (%" PRIu64 " bytes after the header)",
			    n_kv, n_tensors, n_tensors * MIN_TENSOR_BYTES + n_kv * MIN_KV_BYTES, left);
	return 0;
}

static int read_header(struct reader *r, struct gguf_file *f)
{
	snprintf(r->where, sizeof(r->where), "header");
	if (need(r, 4, "magic"))
		return -1;
	if (memcmp(r->map, "GGUF", 4) != 0)
		return fail(r, "magic %02x %02x %02x %02x is not \"GGUF\": not a GGUF file",
			    r->map[0], r->map[1], r->map[2], r->map[3]);
	r->pos = 4;
	if (read_u32(r, "version", &f->version) || check_version(r, f->version))
		return -1;
	if (read_u64(r, "tensor count", &f->n_tensors) || read_u64(r, "kv count", &f->n_kv))
		return -1;
	return check_counts(r, f->n_tensors, f->n_kv);
}

/* ------------------------------------------------------------------ kv */

static int read_string_array(struct reader *r, struct gguf_kv *kv)
{
	uint64_t start = r->pos;
	struct gguf_str s;
	char what[40];

	/* Every element is at least its 8-byte length: bound the count before
	 * the allocation it sizes. */
	if (kv->arr_n > bytes_left(r) / 8)
		return fail(r, "array of %" PRIu64 " strings runs past the end of the file at byte %" PRIu64
			    " (%" PRIu64 " bytes left)",
			    kv->arr_n, r->pos, bytes_left(r));
	/* Tokenizer arrays hold 10^5 strings: the message is built only on failure. */
	for (uint64_t j = 0; j < kv->arr_n; j++) {
		if (take_str(r, &s) == 0)
			continue;
		snprintf(what, sizeof(what), "element %" PRIu64, j);
		return read_str(r, what, &s);
	}
	if (kv->arr_n == 0)
		return 0;
	kv->strs = malloc((size_t)kv->arr_n * sizeof(*kv->strs));
	if (!kv->strs)
		return fail(r, "out of memory for %" PRIu64 " strings", kv->arr_n);
	/* Second walk: the first proved every length, so these reads cannot fail. */
	r->pos = start;
	for (uint64_t j = 0; j < kv->arr_n; j++)
		take_str(r, &kv->strs[j]);
	return 0;
}

static int read_array(struct reader *r, struct gguf_kv *kv)
{
	uint32_t size;

	if (read_u32(r, "array element type", &kv->arr_type))
		return -1;
	if (kv->arr_type == GGUF_ARRAY)
		return fail(r, "arrays of arrays are not supported");
	if (kv->arr_type >= N_VALUE_TYPES)
		return fail(r, "array of unknown element type %" PRIu32 " (GGUF types are 0..%zu)",
			    kv->arr_type, N_VALUE_TYPES - 1);
	if (read_u64(r, "array count", &kv->arr_n))
		return -1;
	kv->data = r->map + r->pos;
	if (kv->arr_type == GGUF_STRING)
		return read_string_array(r, kv);
	size = value_types[kv->arr_type].size;
	if (kv->arr_n > bytes_left(r) / size)
		return fail(r, "array of %" PRIu64 " %s elements runs past the end of the file at byte %" PRIu64
			    " (%" PRIu64 " bytes left)",
			    kv->arr_n, value_types[kv->arr_type].name, r->pos, bytes_left(r));
	r->pos += kv->arr_n * size;
	return 0;
}

static int read_kv(struct reader *r, uint64_t index, struct gguf_kv *kv)
{
	struct gguf_str s;

	set_where(r, "kv", index);
	if (read_str(r, "key", &kv->key))
		return -1;
	add_name_to_where(r, kv->key);
	if (read_u32(r, "value type", &kv->type))
		return -1;
	if (kv->type >= N_VALUE_TYPES)
		return fail(r, "unknown value type %" PRIu32 " (GGUF types are 0..%zu)", kv->type, N_VALUE_TYPES - 1);
	if (kv->type == GGUF_ARRAY)
		return read_array(r, kv);
	/* A string's data is its encoding: the 8-byte length, then the bytes. */
	kv->data = r->map + r->pos;
	if (kv->type == GGUF_STRING)
		return read_str(r, "string", &s);
	if (need(r, value_types[kv->type].size, value_types[kv->type].name))
		return -1;
	r->pos += value_types[kv->type].size;
	return 0;
}

/* array grown to hold at least n items of elem bytes (new ones zeroed), or
 * NULL with array untouched. The counts were bounded by the file size, so
 * doubling stays proportional to the file. */
static void *grow(void *array, uint64_t *cap, uint64_t n, size_t elem)
{
	uint64_t want = *cap ? *cap : 16;
	void *p;

	if (n <= *cap)
		return array;
	while (want < n)
		want *= 2;
	if (want > SIZE_MAX / elem)
		return NULL;
	p = realloc(array, (size_t)want * elem);
	if (!p)
		return NULL;
	memset((char *)p + (size_t)*cap * elem, 0, (size_t)(want - *cap) * elem);
	*cap = want;
	return p;
}

static int read_kvs(struct reader *r, struct gguf_file *f)
{
	uint64_t cap = 0;

	for (uint64_t i = 0; i < f->n_kv; i++) {
		struct gguf_kv *kv = grow(f->kv, &cap, i + 1, sizeof(*f->kv));

		if (!kv) {
			f->n_kv = i; /* what gguf_close may walk */
			set_where(r, "kv", i);
			return fail(r, "out of memory");
		}
		f->kv = kv;
		if (read_kv(r, i, &f->kv[i])) {
			f->n_kv = i + 1;
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ uniqueness */

static int compare_names(const struct gguf_str *a, const struct gguf_str *b)
{
	uint64_t n = a->len < b->len ? a->len : b->len;
	int c = n ? memcmp(a->ptr, b->ptr, (size_t)n) : 0;

	if (c)
		return c;
	return (a->len > b->len) - (a->len < b->len);
}

static int compare_kv_keys(const void *a, const void *b)
{
	const struct gguf_kv *x = *(void *const *)a, *y = *(void *const *)b;

	return compare_names(&x->key, &y->key);
}

static int compare_tensor_names(const void *a, const void *b)
{
	const struct gguf_tensor *x = *(void *const *)a, *y = *(void *const *)b;

	return compare_names(&x->name, &y->name);
}

static int compare_tensor_offsets(const void *a, const void *b)
{
	const struct gguf_tensor *x = *(void *const *)a, *y = *(void *const *)b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Sorting pointers keeps this O(n log n): a forged file may hold millions
 * of entries, where a pairwise check would never finish. */
static void **sorted_pointers(void *items, uint64_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	void **p = malloc((size_t)(n ? n : 1) * sizeof(*p));

	if (!p)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		p[i] = (char *)items + (size_t)i * elem;
	qsort(p, (size_t)n, sizeof(*p), cmp);
	return p;
}

static int check_unique_keys(struct reader *r, struct gguf_file *f)
{
	void **by_key = sorted_pointers(f->kv, f->n_kv, sizeof(*f->kv), compare_kv_keys);

	if (!by_key) {
		snprintf(r->where, sizeof(r->where), "kv");
		return fail(r, "out of memory");
	}
	index_of(f)->kv_by_key = by_key;
	for (uint64_t i = 1; i < f->n_kv; i++) {
		const struct gguf_kv *x = by_key[i - 1], *y = by_key[i];
		uint64_t a = (uint64_t)(x - f->kv), b = (uint64_t)(y - f->kv);

		if (compare_names(&x->key, &y->key) != 0)
			continue;
		set_where(r, "kv", a > b ? a : b);
		add_name_to_where(r, y->key);
		return fail(r, "duplicate key (also kv %" PRIu64 ")", a < b ? a : b);
	}
	return 0;
}

static int check_unique_tensor_names(struct reader *r, struct gguf_file *f)
{
	void **by_name = sorted_pointers(f->tensors, f->n_tensors, sizeof(*f->tensors), compare_tensor_names);

	if (!by_name) {
		snprintf(r->where, sizeof(r->where), "tensors");
		return fail(r, "out of memory");
	}
	index_of(f)->tensor_by_name = by_name;
	for (uint64_t i = 1; i < f->n_tensors; i++) {
		const struct gguf_tensor *x = by_name[i - 1], *y = by_name[i];
		uint64_t a = (uint64_t)(x - f->tensors), b = (uint64_t)(y - f->tensors);

		if (compare_names(&x->name, &y->name) != 0)
			continue;
		set_where(r, "tensor", a > b ? a : b);
		add_name_to_where(r, y->name);
		return fail(r, "duplicate tensor name (also tensor %" PRIu64 ")", a < b ? a : b);
	}
	return 0;
}

static int check_no_overlap(struct reader *r, struct gguf_file *f)
{
	void **by_offset = sorted_pointers(f->tensors, f->n_tensors, sizeof(*f->tensors), compare_tensor_offsets);
	int rc = 0;

	if (!by_offset) {
		snprintf(r->where, sizeof(r->where), "tensors");
		return fail(r, "out of memory");
	}
	for (uint64_t i = 1; i < f->n_tensors && rc == 0; i++) {
		const struct gguf_tensor *lo = by_offset[i - 1], *hi = by_offset[i];
		char lo_name[NAME_SHOWN + 4];

		/* Bounds were checked first, so offset + nbytes cannot wrap. */
		if (lo->offset + lo->nbytes <= hi->offset)
			continue;
		quote_name(lo_name, sizeof(lo_name), lo->name);
		set_where(r, "tensor", (uint64_t)(hi - f->tensors));
		add_name_to_where(r, hi->name);
		rc = fail(r, "offset %" PRIu64 " overlaps tensor %" PRIu64 " '%s' (offset %" PRIu64 " + %" PRIu64 " bytes)",
			  hi->offset, (uint64_t)(lo - f->tensors), lo_name, lo->offset, lo->nbytes);
	}
	free(by_offset);
	return rc;
}

/* ------------------------------------------------------------- alignment */

static int read_alignment(struct reader *r, struct gguf_file *f)
{
	const struct gguf_kv *kv = gguf_find_kv(f, "general.alignment");
	uint32_t a;

	f->alignment = DEFAULT_ALIGNMENT;
	if (!kv)
		return 0;
	set_where(r, "kv", (uint64_t)(kv - f->kv));
	add_name_to_where(r, kv->key);
	if (kv->type != GGUF_UINT32)
		return fail(r, "alignment is %s, must be uint32",
			    kv->type == GGUF_ARRAY ? "an array" : value_types[kv->type].name);
	a = (uint32_t)load_le(kv->data, 4);
	if (a == 0 || (a & (a - 1)) != 0)
		return fail(r, "alignment %" PRIu32 " is not a power of two", a);
	f->alignment = a;
	return 0;
}

/* -------------------------------------------------------------- tensors */

static int mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a)
		return -1;
	*out = a * b;
	return 0;
}

static int read_shape(struct reader *r, struct gguf_tensor *t)
{
	char what[16];

	if (read_u32(r, "n_dims", &t->n_dims))
		return -1;
	if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
		return fail(r, "n_dims %" PRIu32 " is not in 1..%d", t->n_dims, GGUF_MAX_DIMS);
	for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++)
		t->ne[d] = 1;
	for (uint32_t d = 0; d < t->n_dims; d++) {
		uint64_t u;

		snprintf(what, sizeof(what), "ne[%" PRIu32 "]", d);
		if (read_u64(r, what, &u))
			return -1;
		if (u == 0 || u > INT64_MAX)
			return fail(r, "ne[%" PRIu32 "] %" PRId64 " is not a positive length", d, as_int64(u));
		t->ne[d] = (int64_t)u;
	}
	return 0;
}

static int check_elements(struct reader *r, const struct gguf_tensor *t)
{
	char shape[128];
	int64_t n = 1;

	for (uint32_t d = 0; d < t->n_dims; d++) {
		if (t->ne[d] > INT64_MAX / n) {
			format_shape(shape, sizeof(shape), t->ne, t->n_dims);
			return fail(r, "shape %s has more than 2^63-1 elements", shape);
		}
		n *= t->ne[d];
	}
	return 0;
}

static int check_type_and_size(struct reader *r, struct gguf_tensor *t)
{
	const struct tensor_type_info *ti;
	uint64_t bytes;

	if (t->type >= N_TENSOR_TYPES || tensor_types[t->type].block_elems == 0)
		return fail(r, "type %" PRIu32 " is not a gllmk dtype: its byte size is unknown (SPEC/RUN.md, Tensor types)",
			    t->type);
	ti = &tensor_types[t->type];
	if (check_elements(r, t))
		return -1;
	if (t->ne[0] % ti->block_elems != 0)
		return fail(r, "row length ne[0] %" PRId64 " is not a multiple of %s's block of %" PRIu32 " elements",
			    t->ne[0], ti->name, ti->block_elems);
	bytes = (uint64_t)t->ne[0] / ti->block_elems;
	if (mul_u64(bytes, ti->block_bytes, &bytes))
		goto overflow;
	for (uint32_t d = 1; d < t->n_dims; d++)
		if (mul_u64(bytes, (uint64_t)t->ne[d], &bytes))
			goto overflow;
	t->nbytes = bytes;
	return 0;
overflow:
	return fail(r, "the byte size of %s data does not fit 64 bits", ti->name);
}

static int read_tensor_info(struct reader *r, uint64_t index, struct gguf_tensor *t, uint64_t alignment)
{
	set_where(r, "tensor", index);
	if (read_str(r, "name", &t->name))
		return -1;
	add_name_to_where(r, t->name);
	if (read_shape(r, t) || read_u32(r, "type", &t->type) || read_u64(r, "offset", &t->offset))
		return -1;
	if (check_type_and_size(r, t))
		return -1;
	if (t->offset % alignment != 0)
		return fail(r, "offset %" PRIu64 " is not a multiple of the alignment %" PRIu64, t->offset, alignment);
	return 0;
}

static int read_tensor_infos(struct reader *r, struct gguf_file *f)
{
	uint64_t cap = 0;

	for (uint64_t i = 0; i < f->n_tensors; i++) {
		struct gguf_tensor *t = grow(f->tensors, &cap, i + 1, sizeof(*f->tensors));

		if (!t) {
			f->n_tensors = i;
			set_where(r, "tensor", i);
			return fail(r, "out of memory");
		}
		f->tensors = t;
		if (read_tensor_info(r, i, &f->tensors[i], f->alignment)) {
			f->n_tensors = i + 1;
			return -1;
		}
	}
	return 0;
}

static int place_data(struct reader *r, struct gguf_file *f)
{
	uint64_t header_end = r->pos;
	uint64_t data_bytes;

	/* header_end <= size < 2^63 and alignment <= 2^31: no wrap. */
	f->data_offset = (header_end + f->alignment - 1) / f->alignment * f->alignment;
	if (f->n_tensors == 0) {
		/* Nothing lives there: a metadata-only file may end at its header. */
		if (f->data_offset > f->size)
			f->data_offset = f->size;
		return 0;
	}
	if (f->data_offset > f->size) {
		snprintf(r->where, sizeof(r->where), "header");
		return fail(r, "the data section starts at byte %" PRIu64 " (the header ends at %" PRIu64
			    ", aligned to %" PRIu64 "), past the end of the file (%" PRIu64 " bytes)",
			    f->data_offset, header_end, f->alignment, f->size);
	}
	data_bytes = f->size - f->data_offset;
	for (uint64_t i = 0; i < f->n_tensors; i++) {
		struct gguf_tensor *t = &f->tensors[i];

		if (t->offset > data_bytes || t->nbytes > data_bytes - t->offset) {
			set_where(r, "tensor", i);
			add_name_to_where(r, t->name);
			return fail(r, "offset %" PRIu64 " + %" PRIu64 " bytes is past the end of the file "
				    "(%" PRIu64 " bytes, data from byte %" PRIu64 ")",
				    t->offset, t->nbytes, f->size, f->data_offset);
		}
		t->data = f->map + f->data_offset + t->offset;
	}
	return 0;
}

/* ----------------------------------------------------------- open/close */

static int map_file(const char *path, struct gguf_file *f, char *err, size_t errlen)
{
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		put_err(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		put_err(err, errlen, "cannot stat: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		put_err(err, errlen, "is %s, not a GGUF file", S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX) {
		put_err(err, errlen, "%s", st.st_size <= 0 ? "the file is empty (0 bytes), not a GGUF file"
							  : "the file is too large to map");
		close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		put_err(err, errlen, "cannot map %" PRIu64 " bytes: %s", (uint64_t)st.st_size, strerror(errno));
		return -1;
	}
	f->map = map;
	f->size = (uint64_t)st.st_size;
	return 0;
}

static int parse(struct gguf_file *f, char *err, size_t errlen)
{
	struct reader r = { .map = f->map, .size = f->size, .err = err, .errlen = errlen };

	if (read_header(&r, f) || read_kvs(&r, f) || check_unique_keys(&r, f) || read_alignment(&r, f))
		return -1;
	if (read_tensor_infos(&r, f) || place_data(&r, f))
		return -1;
	return check_no_overlap(&r, f) || check_unique_tensor_names(&r, f) ? -1 : 0;
}

int gguf_open(const char *path, struct gguf_file **out, char *err, size_t errlen)
{
	size_t path_len = strlen(path);
	struct gguf_index *idx = calloc(1, sizeof(*idx) + path_len + 1);

	*out = NULL;
	put_err(err, errlen, "%s", "");
	if (!idx) {
		put_err(err, errlen, "out of memory");
		return -1;
	}
	/* The path lives in the same allocation, so it outlives the caller's. */
	memcpy(idx->path, path, path_len + 1);
	idx->file.path = idx->path;
	if (map_file(path, &idx->file, err, errlen) || parse(&idx->file, err, errlen)) {
		gguf_close(&idx->file);
		return -1;
	}
	*out = &idx->file;
	return 0;
}

void gguf_close(struct gguf_file *f)
{
	if (!f)
		return;
	if (f->kv)
		for (uint64_t i = 0; i < f->n_kv; i++)
			free(f->kv[i].strs);
	free(f->kv);
	free(f->tensors);
	free(index_of(f)->kv_by_key);
	free(index_of(f)->tensor_by_name);
	if (f->map)
		munmap((void *)f->map, (size_t)f->size);
	free(index_of(f));
}

/* -------------------------------------------------------------- lookups */

/* The item among n sorted pointers whose name (at name_offset in the
 * item) equals c, or NULL; open refused duplicates, so there is one. */
static void *search_sorted(void *const *sorted, uint64_t n, size_t name_offset, const char *c)
{
	struct gguf_str want = { .len = strlen(c), .ptr = c };
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int cmp = compare_names((const struct gguf_str *)((const char *)sorted[mid] + name_offset), &want);

		if (cmp == 0)
			return sorted[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct gguf_kv *gguf_find_kv(const struct gguf_file *f, const char *key)
{
	return search_sorted(((const struct gguf_index *)f)->kv_by_key, f->n_kv, offsetof(struct gguf_kv, key), key);
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *f, const char *name)
{
	return search_sorted(((const struct gguf_index *)f)->tensor_by_name, f->n_tensors,
			     offsetof(struct gguf_tensor, name), name);
}

static const char *kv_type_name(const struct gguf_kv *kv)
{
	return kv->type == GGUF_ARRAY ? "an array" : value_types[kv->type].name;
}

/* An integer kv as a sign and magnitude wide enough for every GGUF
 * integer type; 0 when kv is not an integer. */
static int integer_value(const struct gguf_kv *kv, int *negative, uint64_t *magnitude)
{
	static const unsigned width[N_VALUE_TYPES] = {
		[GGUF_UINT8] = 1, [GGUF_INT8] = 1, [GGUF_UINT16] = 2, [GGUF_INT16] = 2,
		[GGUF_UINT32] = 4, [GGUF_INT32] = 4, [GGUF_UINT64] = 8, [GGUF_INT64] = 8,
	};
	int is_signed = kv->type == GGUF_INT8 || kv->type == GGUF_INT16 || kv->type == GGUF_INT32 ||
			kv->type == GGUF_INT64;
	unsigned bytes = kv->type < N_VALUE_TYPES ? width[kv->type] : 0;
	uint64_t u, sign_bit;

	if (bytes == 0)
		return 0;
	u = load_le(kv->data, bytes);
	sign_bit = (uint64_t)1 << (8 * bytes - 1);
	*negative = is_signed && (u & sign_bit);
	/* Two's complement magnitude within the value's own width. */
	*magnitude = *negative ? ((~u + 1) & (sign_bit | (sign_bit - 1))) : u;
	return 1;
}

int gguf_get_u32(const struct gguf_file *f, const char *key, uint32_t *out, char *err, size_t errlen)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);
	uint64_t magnitude;
	int negative;

	if (!kv)
		return 1;
	if (!integer_value(kv, &negative, &magnitude)) {
		put_err(err, errlen, "key '%s' is %s, expected an integer", key, kv_type_name(kv));
		return -1;
	}
	if (negative || magnitude > UINT32_MAX) {
		put_err(err, errlen, "key '%s': %s value %s%" PRIu64 " does not fit uint32", key,
			value_types[kv->type].name, negative ? "-" : "", magnitude);
		return -1;
	}
	*out = (uint32_t)magnitude;
	return 0;
}

int gguf_get_f32(const struct gguf_file *f, const char *key, float *out, char *err, size_t errlen)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);
	double v;

	if (!kv)
		return 1;
	if (kv->type == GGUF_FLOAT32) {
		uint32_t bits = (uint32_t)load_le(kv->data, 4);
		float x;

		memcpy(&x, &bits, sizeof(x));
		v = x;
	} else if (kv->type == GGUF_FLOAT64) {
		uint64_t bits = load_le(kv->data, 8);

		memcpy(&v, &bits, sizeof(v));
	} else {
		put_err(err, errlen, "key '%s' is %s, expected float32 or float64", key, kv_type_name(kv));
		return -1;
	}
	if (!isfinite(v) || v > FLT_MAX || v < -FLT_MAX) {
		put_err(err, errlen, "key '%s': %s value %g is not a finite float32", key, value_types[kv->type].name, v);
		return -1;
	}
	*out = (float)v;
	return 0;
}

int gguf_get_str(const struct gguf_file *f, const char *key, struct gguf_str *out, char *err, size_t errlen)
{
	const struct gguf_kv *kv = gguf_find_kv(f, key);

	if (!kv)
		return 1;
	if (kv->type != GGUF_STRING) {
		put_err(err, errlen, "key '%s' is %s, expected a string", key, kv_type_name(kv));
		return -1;
	}
	/* open proved the length and bytes lie within the mapping. */
	out->len = load_le(kv->data, 8);
	out->ptr = (const char *)kv->data + 8;
	return 0;
}
