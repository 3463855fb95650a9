/* gllmk-run: token ids to the text of their vocabulary pieces, for display.
 * SentencePiece vocabularies ("llama") write a space as U+2581 and raw bytes
 * as "<0xNN>"; byte-level BPE ones ("gpt2") map every byte to a printable
 * code point (GPT-2's bytes_to_unicode), undone here. */
#include <stdio.h>
#include <string.h>

#include "run.h"

void vocab_init(struct run_vocab *v, const struct gguf_file *f)
{
	const struct gguf_kv *tokens = gguf_find_kv(f, "tokenizer.ggml.tokens");
	struct gguf_str model = { 0, NULL };
	char err[256];

	memset(v, 0, sizeof(*v));
	if (!tokens || tokens->type != GGUF_ARRAY || tokens->arr_type != GGUF_STRING || !tokens->strs)
		return;
	v->tokens = tokens;
	if (gguf_get_str(f, "tokenizer.ggml.model", &model, err, sizeof(err)) == 0 && gguf_str_eq(model, "gpt2"))
		v->byte_level = true;
}

/* Decodes one UTF-8 code point at s[*i] (len bytes); -1 if malformed. */
static long utf8_next(const unsigned char *s, uint64_t len, uint64_t *i)
{
	unsigned char c = s[*i];
	int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
	long cp = n == 0 ? c : n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;

	if (n < 0 || *i + (uint64_t)n >= len)
		return (*i)++, -1;
	for (int k = 1; k <= n; k++) {
		if ((s[*i + k] & 0xc0) != 0x80)
			return (*i)++, -1;
		cp = (cp << 6) | (s[*i + k] & 0x3f);
	}
	*i += (uint64_t)n + 1;
	return cp;
}

/* GPT-2 kept these bytes as their own code points and numbered the rest
 * from 256 up, in byte order. */
static bool gpt2_printable(int b)
{
	return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

static int gpt2_byte(long cp)
{
	int k = 0;

	if (cp < 256)
		return gpt2_printable((int)cp) ? (int)cp : -1;
	for (int b = 0; b < 256; b++)
		if (!gpt2_printable(b) && 256 + k++ == cp)
			return b;
	return -1;
}

static size_t put(char *out, size_t n, size_t at, int byte)
{
	if (at + 1 < n)
		out[at] = (char)byte;
	return at + 1;
}

static size_t decode_spm(struct gguf_str p, char *out, size_t n)
{
	size_t at = 0;
	unsigned byte;

	if (p.len == 6 && sscanf(p.ptr, "<0x%2X>", &byte) == 1 && p.ptr[5] == '>')
		return put(out, n, 0, (int)byte);
	for (uint64_t i = 0; i < p.len;) {
		if (i + 2 < p.len && !memcmp(p.ptr + i, "\xe2\x96\x81", 3)) {
			at = put(out, n, at, ' ');
			i += 3;
		} else {
			at = put(out, n, at, (unsigned char)p.ptr[i++]);
		}
	}
	return at;
}

static size_t decode_bpe(struct gguf_str p, char *out, size_t n)
{
	size_t at = 0;

	for (uint64_t i = 0; i < p.len;) {
		uint64_t start = i;
		int b = gpt2_byte(utf8_next((const unsigned char *)p.ptr, p.len, &i));

		if (b >= 0) {
			at = put(out, n, at, b);
			continue;
		}
		while (start < i) /* not a mapped code point: keep its bytes */
			at = put(out, n, at, (unsigned char)p.ptr[start++]);
	}
	return at;
}

const char *vocab_piece(const struct run_vocab *v, int32_t id, char *out, size_t n)
{
	size_t len;

	if (!v->tokens || id < 0 || (uint64_t)id >= v->tokens->arr_n || n == 0)
		return NULL;
	len = v->byte_level ? decode_bpe(v->tokens->strs[id], out, n) : decode_spm(v->tokens->strs[id], out, n);
	out[len < n ? len : n - 1] = '\0';
	return out;
}
