/* gllmk-run: JSON helpers and --info (the model's metadata and tensors as the
 * file says them, after every check passed). */
#include <inttypes.h>
#include <string.h>

#include "run.h"

/* Bytes of a valid UTF-8 sequence at s[i], or 0 (a lone byte token such as
 * <0xE2> decodes to one): JSON must stay valid UTF-8. */
static size_t utf8_len(const unsigned char *s, size_t len, size_t i)
{
	size_t n = s[i] < 0x80 ? 1 : (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 : (s[i] & 0xf8) == 0xf0 ? 4 : 0;

	if (n == 0 || i + n > len)
		return 0;
	for (size_t k = 1; k < n; k++)
		if ((s[i + k] & 0xc0) != 0x80)
			return 0;
	return n;
}

void json_str(FILE *fp, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', fp);
	for (size_t i = 0; i < len;) {
		size_t n = utf8_len(u, len, i);

		if (n == 0)
			fputs("\ufffd", fp), n = 1;
		else if (u[i] == '"' || u[i] == '\\')
			fprintf(fp, "\\%c", u[i]);
		else if (u[i] < 0x20 || u[i] == 0x7f)
			fprintf(fp, "\\u%04x", u[i]);
		else
			fwrite(u + i, 1, n, fp);
		i += n;
	}
	fputc('"', fp);
}

void json_key(FILE *fp, bool *first, const char *key)
{
	fprintf(fp, "%s\"%s\": ", *first ? "" : ", ", key);
	*first = false;
}

/* A scalar value, or an array's type and length (vocabularies are long). */
static void print_value(const struct gguf_kv *kv, FILE *fp)
{
	const uint8_t *d = kv->data;
	int64_t i;
	uint64_t u;

	switch (kv->type) {
	case GGUF_UINT8: fprintf(fp, "%u", d[0]); break;
	case GGUF_INT8: fprintf(fp, "%d", (int8_t)d[0]); break;
	case GGUF_BOOL: fputs(d[0] ? "true" : "false", fp); break;
	case GGUF_UINT16: { uint16_t v; memcpy(&v, d, 2); fprintf(fp, "%u", v); break; }
	case GGUF_INT16: { int16_t v; memcpy(&v, d, 2); fprintf(fp, "%d", v); break; }
	case GGUF_UINT32: { uint32_t v; memcpy(&v, d, 4); fprintf(fp, "%u", v); break; }
	case GGUF_INT32: { int32_t v; memcpy(&v, d, 4); fprintf(fp, "%d", v); break; }
	case GGUF_FLOAT32: { float v; memcpy(&v, d, 4); fprintf(fp, "%g", v); break; }
	case GGUF_UINT64: memcpy(&u, d, 8); fprintf(fp, "%" PRIu64, u); break;
	case GGUF_INT64: memcpy(&i, d, 8); fprintf(fp, "%" PRId64, i); break;
	case GGUF_FLOAT64: { double v; memcpy(&v, d, 8); fprintf(fp, "%g", v); break; }
	case GGUF_STRING: {
		struct gguf_str s;

		memcpy(&s.len, d, 8);
		s.ptr = (const char *)d + 8;
		json_str(fp, s.ptr, s.len > 200 ? 200 : s.len);
		if (s.len > 200)
			fputs("...", fp);
		break;
	}
	case GGUF_ARRAY: fprintf(fp, "array of %" PRIu64 " (type %u)", kv->arr_n, kv->arr_type); break;
	default: fputs("?", fp);
	}
}

void info_print(const struct run_model *m, FILE *fp)
{
	const struct gguf_file *f = m->gguf;
	const struct run_hparams *hp = &m->hp;

	fprintf(fp, "file: %s (GGUF v%u, %" PRIu64 " bytes, data at %" PRIu64 ", alignment %" PRIu64 ")\n", f->path,
		f->version, f->size, f->data_offset, f->alignment);
	fprintf(fp, "model: %s, %lld layers, embedding %lld, ffn %lld, heads %lld/%lld kv, head %lld/%lld, rope %lld dims "
		    "base %g scale %g (%s), eps %g, vocab %lld, context %lld%s\n",
		m->arch_name, (long long)hp->n_layer, (long long)hp->n_embd, (long long)hp->n_ff, (long long)hp->n_head,
		(long long)hp->n_head_kv, (long long)hp->head_dim, (long long)hp->head_dim_v, (long long)hp->n_rot,
		hp->rope_base, hp->freq_scale, hp->rope_mode == GLLMK_ROPE_NEOX ? "neox" : "normal", hp->eps,
		(long long)hp->n_vocab, (long long)hp->n_ctx_train, m->tied ? ", tied embeddings" : "");
	if (m->moe)
		fprintf(fp, "experts: %lld of %lld per token, expert ffn %lld\n", (long long)hp->n_expert_used,
			(long long)hp->n_expert, (long long)hp->n_ff_exp);
	fprintf(fp, "decode step: %.1f MiB of weights, %.3f GFLOP per token\n",
		(double)m->weight_bytes_per_token / (1 << 20), m->matmul_flops_per_token / 1e9);
	fprintf(fp, "metadata (%" PRIu64 "):\n", f->n_kv);
	for (uint64_t k = 0; k < f->n_kv; k++) {
		fprintf(fp, "  %.*s = ", (int)f->kv[k].key.len, f->kv[k].key.ptr);
		print_value(&f->kv[k], fp);
		fputc('\n', fp);
	}
	fprintf(fp, "tensors (%" PRIu64 "):\n", f->n_tensors);
	for (uint64_t t = 0; t < f->n_tensors; t++) {
		const struct gguf_tensor *x = &f->tensors[t];
		const char *type = gguf_ggml_type_name(x->type);

		fprintf(fp, "  %-32.*s %-7s [", (int)x->name.len, x->name.ptr, type ? type : "?");
		for (uint32_t d = 0; d < x->n_dims; d++)
			fprintf(fp, "%s%lld", d ? ", " : "", (long long)x->ne[d]);
		fprintf(fp, "] %" PRIu64 " bytes at %" PRIu64 "\n", x->nbytes, x->offset);
	}
}
