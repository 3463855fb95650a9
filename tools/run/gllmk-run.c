/* gllmk-run: runs a GGUF model on gllmk through its public API only
 * (SPEC/RUN.md): generate from prompt ids, dump logits, or benchmark. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run.h"

static const char USAGE[] =
	"usage: gllmk-run -m FILE [options]\n"
	"Runs a GGUF model (llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, gpt-oss) with gllmk's operators.\n"
	"Text tokenization is not part of gllmk-run: prompts are token ids.\n"
	"\n"
	"  -m, --model FILE       GGUF file (version 2 or 3)\n"
	"      --prompt-ids LIST  comma-separated token ids (default: the BOS id)\n"
	"      --prompt-file F    token ids separated by spaces, newlines or commas\n"
	"  -n, --n-predict N      tokens to generate (default 16)\n"
	"      --temp T           temperature (default 0: argmax)\n"
	"      --top-k K          keep the K most likely (default 0: all)\n"
	"      --top-p P          nucleus mass (default 1: all)\n"
	"      --seed S           seed of the uniform numbers for sampling (default 42)\n"
	"      --plugin NAME      gllmk plugin(s) to use, comma-separated (default: detection)\n"
	"  -t, --threads N        CPU plugin threads (default 0: one per physical core)\n"
	"  -b, --batch B          prompt tokens per forward pass (default 512)\n"
	"  -c, --ctx C            KV cache tokens (default: prompt + n)\n"
	"      --kv-type T        KV cache dtype: f16 (default), q8_0, q4_0 (head sizes: multiples of 32)\n"
	"      --logits FILE      write every evaluated position's logits (f32 rows)\n"
	"      --mmap             CPU plugins: compute on the file's mapped pages (instant load) instead of\n"
	"                         a copy in gllmk buffers (huge pages: faster decode)\n"
	"      --no-prepare       keep every weight in the file's layout (default: matrices the plugin has a\n"
	"                         layout of its own for are copied into it once, gllmk_weights_prepare;\n"
	"                         --mmap prepares nothing)\n"
	"      --bf16-activations open with GLLMK_OPEN_BF16_ACTIVATIONS: bf16-weight matmuls may round\n"
	"                         activations to bf16 as llama.cpp does (cpu-avx512 with AVX512-BF16:\n"
	"                         vdpbf16ps prefill; ~1.5e-3 relative error per product, not 1e-7)\n"
	"      --parallel N       decode N sequences at once (prompt prefixes of different lengths) through\n"
	"                         one paged cache and gllmk_attention_varlen (argmax); with --bench: a row\n"
	"                         of aggregate decode tokens/s for 1, 8 and 64 sequences\n"
	"      --bench            pp and tg benchmark (llama-bench style), with the roofline\n"
	"      --reps R           benchmark repetitions (default 5)\n"
	"      --pp P --tg G      benchmark prompt and generated tokens (default 512, 128)\n"
	"      --depth D          benchmark with D tokens already in the cache (default 0)\n"
	"      --peer llama.cpp   run the same benchmark on llama.cpp (scripts/install-peers)\n"
	"      --info             print the model's metadata and tensors, then exit\n"
	"      --json             one JSON document on stdout\n"
	"  -q, --quiet            no progress on stderr\n"
	"  -h, --help             this text\n"
	"Exit status: 0 ok, 1 a gllmk call failed, 2 bad file or arguments, 3 model not runnable by gllmk.\n";

double run_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ arguments */

static int parse_i64(const char *arg, const char *name, int64_t lo, int64_t hi, int64_t *out, struct run_error *e)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		return run_fail(e, RUN_E_BAD_INPUT, "%s '%s': not an integer in %lld..%lld", name, arg, (long long)lo,
				(long long)hi);
	*out = v;
	return 0;
}

static int parse_float(const char *arg, const char *name, float lo, float hi, float *out, struct run_error *e)
{
	char *end;
	float v;

	errno = 0;
	v = strtof(arg, &end);
	if (errno || end == arg || *end || !(v >= lo && v <= hi))
		return run_fail(e, RUN_E_BAD_INPUT, "%s '%s': not a number in %g..%g", name, arg, lo, hi);
	*out = v;
	return 0;
}

enum { O_PROMPT_IDS = 256, O_PROMPT_FILE, O_TEMP, O_TOP_K, O_TOP_P, O_SEED, O_PLUGIN, O_LOGITS, O_BENCH, O_REPS,
       O_PP, O_TG, O_DEPTH, O_PEER, O_INFO, O_JSON, O_KV_TYPE, O_PARALLEL, O_MMAP, O_NO_PREPARE, O_BF16_ACT };

static const struct option LONG_OPTS[] = {
	{ "model", required_argument, NULL, 'm' },	   { "prompt-ids", required_argument, NULL, O_PROMPT_IDS },
	{ "prompt-file", required_argument, NULL, O_PROMPT_FILE }, { "n-predict", required_argument, NULL, 'n' },
	{ "temp", required_argument, NULL, O_TEMP },	   { "top-k", required_argument, NULL, O_TOP_K },
	{ "top-p", required_argument, NULL, O_TOP_P },	   { "seed", required_argument, NULL, O_SEED },
	{ "plugin", required_argument, NULL, O_PLUGIN },   { "threads", required_argument, NULL, 't' },
	{ "batch", required_argument, NULL, 'b' },	   { "ctx", required_argument, NULL, 'c' },
	{ "logits", required_argument, NULL, O_LOGITS },   { "bench", no_argument, NULL, O_BENCH },
	{ "reps", required_argument, NULL, O_REPS },	   { "pp", required_argument, NULL, O_PP },
	{ "tg", required_argument, NULL, O_TG },	   { "peer", required_argument, NULL, O_PEER },
	{ "depth", required_argument, NULL, O_DEPTH },
	{ "info", no_argument, NULL, O_INFO },		   { "json", no_argument, NULL, O_JSON },
	{ "kv-type", required_argument, NULL, O_KV_TYPE }, { "parallel", required_argument, NULL, O_PARALLEL },
	{ "mmap", no_argument, NULL, O_MMAP },		   { "quiet", no_argument, NULL, 'q' },
	{ "no-prepare", no_argument, NULL, O_NO_PREPARE },
	{ "bf16-activations", no_argument, NULL, O_BF16_ACT }, { "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_kv_type(const char *arg, gllmk_dtype *out, struct run_error *e)
{
	static const gllmk_dtype kv_types[] = { GLLMK_F16, GLLMK_Q8_0, GLLMK_Q4_0 };

	for (size_t i = 0; i < sizeof(kv_types) / sizeof(kv_types[0]); i++) {
		if (!strcmp(arg, gllmk_dtype_name(kv_types[i]))) {
			*out = kv_types[i];
			return 0;
		}
	}
	return run_fail(e, RUN_E_BAD_INPUT, "--kv-type '%s': not f16, q8_0 or q4_0", arg);
}

/* One option's value into o; 0, or an error (exit 2). */
static int take_option(int c, const char *arg, struct run_opts *o, struct run_error *e)
{
	int64_t v = 0;
	int r = 0;

	switch (c) {
	case 'm': o->model = arg; break;
	case O_PROMPT_IDS: o->prompt_ids = arg; break;
	case O_PROMPT_FILE: o->prompt_file = arg; break;
	case 'n': r = parse_i64(arg, "-n", 1, 1 << 24, &o->n_gen, e); break;
	case O_TEMP: r = parse_float(arg, "--temp", 0.0f, 1e6f, &o->temp, e); break;
	case O_TOP_K: r = parse_i64(arg, "--top-k", 0, INT32_MAX, &v, e), o->top_k = (int32_t)v; break;
	case O_TOP_P: r = parse_float(arg, "--top-p", 0.0f, 1.0f, &o->top_p, e); break;
	case O_SEED: r = parse_i64(arg, "--seed", 0, INT64_MAX, &v, e), o->seed = (uint64_t)v; break;
	case O_PLUGIN: o->plugin = arg; break;
	case 't': r = parse_i64(arg, "--threads", 0, 1024, &v, e), o->threads = (int)v; break;
	case 'b': r = parse_i64(arg, "--batch", 1, 1 << 20, &o->n_batch, e); break;
	case 'c': r = parse_i64(arg, "--ctx", 1, INT32_MAX, &o->n_ctx, e); break;
	case O_LOGITS: o->logits = arg; break;
	case O_BENCH: o->bench = true; break;
	case O_REPS: r = parse_i64(arg, "--reps", 1, 32, &v, e), o->reps = (int)v; break;
	case O_PP: r = parse_i64(arg, "--pp", 1, 1 << 16, &v, e), o->pp = (int)v; break;
	case O_TG: r = parse_i64(arg, "--tg", 1, 1 << 16, &v, e), o->tg = (int)v; break;
	case O_DEPTH: r = parse_i64(arg, "--depth", 0, 1 << 20, &v, e), o->depth = (int)v; break;
	case O_PEER: o->peer = arg; break;
	case O_INFO: o->info = true; break;
	case O_JSON: o->json = true; break;
	case O_KV_TYPE: r = parse_kv_type(arg, &o->kv_type, e); break;
	case O_PARALLEL: r = parse_i64(arg, "--parallel", 1, 4096, &o->parallel, e); break;
	case 'q': o->quiet = true; break;
	case O_MMAP: o->mmap = true; break;
	case O_NO_PREPARE: o->no_prepare = true; break;
	case O_BF16_ACT: o->bf16_act = true; break;
	default: r = run_fail(e, RUN_E_BAD_INPUT, "unknown option (gllmk-run --help lists them)");
	}
	return r;
}

static int parse_args(int argc, char **argv, struct run_opts *o, struct run_error *e)
{
	int c;

	*o = (struct run_opts){ .n_gen = 16, .n_batch = 512, .kv_type = GLLMK_F16, .top_p = 1.0f, .seed = 42, .reps = 5,
				.pp = 512, .tg = 128 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "m:n:t:b:c:qh", LONG_OPTS, NULL)) != -1) {
		if (c == 'h') {
			fputs(USAGE, stdout);
			exit(0);
		}
		if (c == '?' || c == ':')
			return run_fail(e, RUN_E_BAD_INPUT, "option '%s' is unknown or lacks its value (see --help)",
					argv[optind - 1]);
		if (take_option(c, optarg, o, e))
			return e->status;
	}
	if (optind < argc)
		return run_fail(e, RUN_E_BAD_INPUT, "unexpected argument '%s' (see --help)", argv[optind]);
	if (!o->model)
		return run_fail(e, RUN_E_BAD_INPUT, "-m FILE is required (see --help)");
	if (o->prompt_ids && o->prompt_file)
		return run_fail(e, RUN_E_BAD_INPUT, "--prompt-ids and --prompt-file: give one");
	if (o->peer && strcmp(o->peer, "llama.cpp"))
		return run_fail(e, RUN_E_BAD_INPUT, "--peer '%s': the only peer is llama.cpp", o->peer);
	if (o->peer && !o->bench)
		return run_fail(e, RUN_E_BAD_INPUT, "--peer needs --bench");
	if (o->depth && !o->bench)
		return run_fail(e, RUN_E_BAD_INPUT, "--depth needs --bench");
	if (o->parallel && o->temp > 0.0f)
		return run_fail(e, RUN_E_BAD_INPUT, "--parallel samples by argmax: --temp must be 0");
	return 0;
}

/* ------------------------------------------------------------ prompt */

struct ids {
	int32_t *v;
	int64_t n, cap;
};

static int ids_push(struct ids *a, int32_t id)
{
	if (a->n == a->cap) {
		int64_t cap = a->cap ? a->cap * 2 : 64;
		int32_t *v = realloc(a->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = id;
	return 0;
}

/* Ids separated by commas or white space, each in [0, n_vocab). */
static int parse_ids(const char *text, const char *what, int64_t n_vocab, struct ids *out, struct run_error *e)
{
	const char *p = text;

	for (;;) {
		char *end;
		long long v;

		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			break;
		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || errno || (*end && !strchr(", \t\r\n", *end)))
			return run_fail(e, RUN_E_BAD_INPUT, "%s: token %lld ('%.12s') is not an integer", what,
					(long long)out->n, p);
		if (v < 0 || v >= n_vocab)
			return run_fail(e, RUN_E_BAD_INPUT, "%s: token %lld = %lld is outside the vocabulary [0, %lld)", what,
					(long long)out->n, v, (long long)n_vocab);
		if (ids_push(out, (int32_t)v))
			return run_fail(e, RUN_E_GLLMK, "out of memory");
		p = end;
	}
	return out->n ? 0 : run_fail(e, RUN_E_BAD_INPUT, "%s: no token ids", what);
}

static int read_prompt_file(const char *path, char **text, struct run_error *e)
{
	FILE *fp = fopen(path, "rb");
	long n;

	if (!fp)
		return run_fail(e, RUN_E_BAD_INPUT, "--prompt-file '%s': %s", path, strerror(errno));
	if (fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 || n > (64 << 20) || fseek(fp, 0, SEEK_SET)) {
		fclose(fp);
		return run_fail(e, RUN_E_BAD_INPUT, "--prompt-file '%s': unreadable or over 64 MiB", path);
	}
	*text = calloc(1, (size_t)n + 1);
	if (!*text || fread(*text, 1, (size_t)n, fp) != (size_t)n) {
		fclose(fp);
		return run_fail(e, RUN_E_BAD_INPUT, "--prompt-file '%s': read failed", path);
	}
	fclose(fp);
	return 0;
}

static int load_prompt(const struct run_opts *o, const struct run_model *m, struct ids *prompt, struct run_error *e)
{
	char *text = NULL;
	uint32_t bos = 1;
	int r;

	if (o->prompt_ids)
		return parse_ids(o->prompt_ids, "--prompt-ids", m->hp.n_vocab, prompt, e);
	if (o->prompt_file) {
		if (read_prompt_file(o->prompt_file, &text, e))
			return e->status;
		r = parse_ids(text, "--prompt-file", m->hp.n_vocab, prompt, e);
		free(text);
		return r;
	}
	if (gguf_get_u32(m->gguf, "tokenizer.ggml.bos_token_id", &bos, e->msg, sizeof(e->msg)) < 0)
		return e->status = RUN_E_BAD_INPUT;
	if (bos >= m->hp.n_vocab)
		bos = 0;
	return ids_push(prompt, (int32_t)bos) ? run_fail(e, RUN_E_GLLMK, "out of memory") : 0;
}

/* ------------------------------------------------------------ generation */

struct gen_result {
	struct ids generated;
	double prefill_ms, decode_ms;
	int64_t n_ctx;
};

/* One uniform number in [0, 1) per sampled token, from splitmix64. */
static float next_uniform(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (float)(z >> 40) * (1.0f / 16777216.0f);
}

static int write_logits(struct run_state *s, FILE *fp, float *row_buf, int64_t rows, int64_t V, struct run_error *e)
{
	if (!fp)
		return 0;
	if (run_read_logits(s, row_buf, rows, e))
		return e->status;
	if (fwrite(row_buf, sizeof(float) * (size_t)V, (size_t)rows, fp) != (size_t)rows)
		return run_fail(e, RUN_E_BAD_INPUT, "--logits: write failed: %s", strerror(errno));
	return 0;
}

static int prefill(struct run_state *s, const struct run_opts *o, const struct ids *prompt, FILE *lf, float *buf,
		   int64_t V, struct run_error *e)
{
	for (int64_t at = 0; at < prompt->n; at += o->n_batch) {
		int64_t n = prompt->n - at < o->n_batch ? prompt->n - at : o->n_batch;

		if (run_forward(s, prompt->v + at, n, at, e) || write_logits(s, lf, buf, lf ? n : 1, V, e))
			return e->status;
	}
	return 0;
}

static int generate(struct run_state *s, const struct run_model *m, const struct run_opts *o,
		    const struct ids *prompt, FILE *lf, struct gen_result *g, struct run_error *e)
{
	gllmk_sample_params sp = { .temperature = o->temp, .top_k = o->top_k, .top_p = o->top_p };
	int64_t V = m->hp.n_vocab;
	float *buf = lf ? malloc(sizeof(float) * (size_t)(V * (prompt->n < o->n_batch ? prompt->n : o->n_batch))) : NULL;
	uint64_t rng = o->seed;
	double t0 = run_now_ms();
	int32_t id;
	int r = RUN_E_GLLMK;

	if (lf && !buf)
		return run_fail(e, RUN_E_GLLMK, "out of memory for the logits rows");
	if (prefill(s, o, prompt, lf, buf, V, e) || run_sample(s, &sp, next_uniform(&rng), &id, e) ||
	    ids_push(&g->generated, id))
		goto out;
	g->prefill_ms = run_now_ms() - t0;
	t0 = run_now_ms();
	for (int64_t i = 1; i < o->n_gen; i++) {
		/* The id fed back is the one sample left on the device. */
		if (run_forward(s, NULL, 1, prompt->n + i - 1, e) || write_logits(s, lf, buf, 1, V, e) ||
		    run_sample(s, &sp, next_uniform(&rng), &id, e) || ids_push(&g->generated, id))
			goto out;
	}
	g->decode_ms = run_now_ms() - t0;
	r = 0;
out:
	free(buf);
	return r ? (e->status ? e->status : r) : 0;
}

/* ------------------------------------------------------------ output */

static void print_ids_json(FILE *fp, const struct ids *a)
{
	fputc('[', fp);
	for (int64_t i = 0; i < a->n; i++)
		fprintf(fp, "%s%d", i ? ", " : "", a->v[i]);
	fputc(']', fp);
}

static void print_json(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o,
		       const struct ids *prompt, const struct gen_result *g)
{
	struct run_vocab v;
	char piece[256];
	bool first = true;
	double decoded = (double)(g->generated.n - 1);

	vocab_init(&v, m->gguf);
	fputc('{', stdout);
	json_key(stdout, &first, "model"), json_str(stdout, o->model, strlen(o->model));
	json_key(stdout, &first, "arch"), json_str(stdout, m->arch_name, strlen(m->arch_name));
	json_key(stdout, &first, "plugin"), json_str(stdout, gllmk_context_plugin(ctx), strlen(gllmk_context_plugin(ctx)));
	json_key(stdout, &first, "threads"), printf("%d", o->threads ? o->threads : run_default_threads());
	json_key(stdout, &first, "n_vocab"), printf("%lld", (long long)m->hp.n_vocab);
	json_key(stdout, &first, "prepared"), printf("%d", m->n_prepared);
	json_key(stdout, &first, "n_ctx"), printf("%lld", (long long)g->n_ctx);
	json_key(stdout, &first, "prompt"), print_ids_json(stdout, prompt);
	json_key(stdout, &first, "generated"), print_ids_json(stdout, &g->generated);
	json_key(stdout, &first, "pieces"), fputc('[', stdout);
	for (int64_t i = 0; i < g->generated.n; i++) {
		const char *p = vocab_piece(&v, g->generated.v[i], piece, sizeof(piece));

		fputs(i ? ", " : "", stdout);
		if (p)
			json_str(stdout, p, strlen(p));
		else
			fputs("null", stdout);
	}
	fputc(']', stdout);
	json_key(stdout, &first, "load_ms"), printf("%.3f", m->load_ms);
	json_key(stdout, &first, "prefill_ms"), printf("%.3f", g->prefill_ms);
	json_key(stdout, &first, "decode_ms"), printf("%.3f", g->decode_ms);
	json_key(stdout, &first, "prefill_tokens_per_s"), printf("%.3f", prompt->n * 1e3 / fmax(g->prefill_ms, 1e-6));
	json_key(stdout, &first, "decode_tokens_per_s"), printf("%.3f", decoded > 0 ? decoded * 1e3 / fmax(g->decode_ms, 1e-6) : 0.0);
	fputs("}\n", stdout);
}

static void print_text(const struct run_model *m, gllmk_context *ctx, const struct ids *prompt,
		       const struct gen_result *g, bool quiet)
{
	struct run_vocab v;
	char piece[256];
	double decoded = (double)(g->generated.n - 1);

	vocab_init(&v, m->gguf);
	for (int64_t i = 0; i < g->generated.n; i++) {
		const char *p = vocab_piece(&v, g->generated.v[i], piece, sizeof(piece));

		printf("%d", g->generated.v[i]);
		if (p) {
			fputs("\t", stdout);
			json_str(stdout, p, strlen(p));
		}
		fputc('\n', stdout);
	}
	if (quiet)
		return;
	fprintf(stderr, "gllmk-run: %s on %s: load %.1f ms (%s, %d prepared), prompt %lld tokens %.1f ms (%.1f t/s), %lld more in %.1f ms (%.2f t/s)\n",
		m->arch_name, gllmk_context_plugin(ctx), m->load_ms, m->wrapped ? "mapped" : "uploaded",
		m->n_prepared, (long long)prompt->n, g->prefill_ms, prompt->n * 1e3 / fmax(g->prefill_ms, 1e-6), (long long)decoded,
		g->decode_ms, decoded > 0 ? decoded * 1e3 / fmax(g->decode_ms, 1e-6) : 0.0);
}

/* ------------------------------------------------------------ --parallel */

/* The N sequences of --parallel: sequence q's prompt is the first P - q mod P
 * ids of the prompt (lengths differ), then n_gen tokens by argmax. */
struct par {
	int64_t n, V;
	int64_t *plen, *ntok, *pos, *rows; /* per sequence; rows: logits rows kept */
	int32_t **gen;                     /* per sequence, n_gen ids */
	float **logits;                    /* per sequence, (plen + n_gen - 1) rows; NULL without --logits */
	int32_t *ids, *next;               /* one step's packed ids and argmaxes */
	double prefill_ms, decode_ms;
};

static void par_free(struct par *p)
{
	for (int64_t q = 0; q < p->n; q++) {
		free(p->gen ? p->gen[q] : NULL);
		free(p->logits ? p->logits[q] : NULL);
	}
	free(p->plen), free(p->ntok), free(p->pos), free(p->rows), free(p->gen), free(p->logits);
	free(p->ids), free(p->next);
}

static int par_init(struct par *p, int64_t n, const struct ids *prompt, int64_t n_gen, int64_t V, int64_t batch,
		    bool keep_logits, struct run_error *e)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->V = V;
	p->plen = calloc((size_t)n, sizeof(int64_t)), p->ntok = calloc((size_t)n, sizeof(int64_t));
	p->pos = calloc((size_t)n, sizeof(int64_t)), p->rows = calloc((size_t)n, sizeof(int64_t));
	p->gen = calloc((size_t)n, sizeof(*p->gen)), p->logits = calloc((size_t)n, sizeof(*p->logits));
	p->ids = malloc((size_t)batch * 4), p->next = malloc((size_t)batch * 4);
	if (!p->plen || !p->ntok || !p->pos || !p->rows || !p->gen || !p->logits || !p->ids || !p->next)
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	for (int64_t q = 0; q < n; q++) {
		p->plen[q] = prompt->n - q % prompt->n;
		p->gen[q] = malloc((size_t)n_gen * 4);
		if (keep_logits)
			p->logits[q] = malloc(sizeof(float) * (size_t)((p->plen[q] + n_gen - 1) * V));
		if (!p->gen[q] || (keep_logits && !p->logits[q]))
			return run_fail(e, RUN_E_GLLMK, "out of memory for sequence %lld", (long long)q);
	}
	return 0;
}

/* One packed step; every row's logits (kept ones) into the sequences' rows. */
static int par_step(struct run_state *s, struct par *p, float *buf, struct run_error *e)
{
	int64_t T = 0, at = 0;

	for (int64_t q = 0; q < p->n; q++)
		T += p->ntok[q];
	if (run_forward_seqs(s, p->ids, p->ntok, p->pos, p->next, e) || (buf && run_read_logits(s, buf, T, e)))
		return e->status;
	for (int64_t q = 0; q < p->n; at += p->ntok[q], p->pos[q] += p->ntok[q], q++) {
		if (!buf || !p->ntok[q])
			continue;
		memcpy(p->logits[q] + p->rows[q] * p->V, buf + at * p->V, sizeof(float) * (size_t)(p->ntok[q] * p->V));
		p->rows[q] += p->ntok[q];
	}
	return 0;
}

/* Each sequence's prompt alone (in batches), its first id; then n_gen - 1
 * steps of one token per sequence. */
static int par_generate(struct run_state *s, const struct run_opts *o, const struct ids *prompt, struct par *p,
			float *buf, struct run_error *e)
{
	double t0 = run_now_ms();

	for (int64_t q = 0; q < p->n; q++) {
		for (int64_t at = 0; at < p->plen[q]; at += o->n_batch) {
			int64_t n = p->plen[q] - at < o->n_batch ? p->plen[q] - at : o->n_batch;

			memset(p->ntok, 0, sizeof(int64_t) * (size_t)p->n);
			p->ntok[q] = n;
			memcpy(p->ids, prompt->v + at, (size_t)n * 4);
			if (par_step(s, p, buf, e))
				return e->status;
		}
		p->gen[q][0] = p->next[p->plen[q] - 1 - (p->plen[q] - 1) / o->n_batch * o->n_batch];
	}
	p->prefill_ms = run_now_ms() - t0;
	t0 = run_now_ms();
	for (int64_t i = 1; i < o->n_gen; i++) {
		for (int64_t q = 0; q < p->n; q++)
			p->ntok[q] = 1, p->ids[q] = p->gen[q][i - 1];
		if (par_step(s, p, buf, e))
			return e->status;
		for (int64_t q = 0; q < p->n; q++)
			p->gen[q][i] = p->next[q];
	}
	p->decode_ms = run_now_ms() - t0;
	return 0;
}

static int par_output(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o, const struct ids *prompt,
		      const struct par *p, int64_t n_ctx, struct run_error *e)
{
	FILE *lf = o->logits ? fopen(o->logits, "wb") : NULL;
	double decoded = (double)(p->n * (o->n_gen - 1));
	bool first = true;

	if (o->logits && !lf)
		return run_fail(e, RUN_E_BAD_INPUT, "--logits '%s': %s", o->logits, strerror(errno));
	for (int64_t q = 0; lf && q < p->n; q++)
		if (fwrite(p->logits[q], sizeof(float) * (size_t)p->V, (size_t)p->rows[q], lf) != (size_t)p->rows[q]) {
			fclose(lf);
			return run_fail(e, RUN_E_BAD_INPUT, "--logits: write failed: %s", strerror(errno));
		}
	if (lf && fclose(lf))
		return run_fail(e, RUN_E_BAD_INPUT, "--logits '%s': %s", o->logits, strerror(errno));
	if (!o->json) {
		for (int64_t q = 0; q < p->n; q++) {
			printf("sequence %lld (prompt %lld):", (long long)q, (long long)p->plen[q]);
			for (int64_t i = 0; i < o->n_gen; i++)
				printf(" %d", p->gen[q][i]);
			putchar('\n');
		}
		if (!o->quiet)
			fprintf(stderr, "gllmk-run: %lld sequences on %s: prefill %.1f ms, %.0f tokens decoded in %.1f ms (%.2f t/s aggregate)\n",
				(long long)p->n, gllmk_context_plugin(ctx), p->prefill_ms, decoded, p->decode_ms,
				decoded > 0 ? decoded * 1e3 / fmax(p->decode_ms, 1e-6) : 0.0);
		return 0;
	}
	fputc('{', stdout);
	json_key(stdout, &first, "model"), json_str(stdout, o->model, strlen(o->model));
	json_key(stdout, &first, "arch"), json_str(stdout, m->arch_name, strlen(m->arch_name));
	json_key(stdout, &first, "plugin"), json_str(stdout, gllmk_context_plugin(ctx), strlen(gllmk_context_plugin(ctx)));
	json_key(stdout, &first, "n_vocab"), printf("%lld", (long long)m->hp.n_vocab);
	json_key(stdout, &first, "prepared"), printf("%d", m->n_prepared);
	json_key(stdout, &first, "n_ctx"), printf("%lld", (long long)n_ctx);
	json_key(stdout, &first, "parallel"), printf("%lld", (long long)p->n);
	json_key(stdout, &first, "sequences"), fputc('[', stdout);
	for (int64_t q = 0; q < p->n; q++) {
		struct ids pr = { .v = prompt->v, .n = p->plen[q] }, g = { .v = p->gen[q], .n = o->n_gen };

		fputs(q ? ", {\"prompt\": " : "{\"prompt\": ", stdout);
		print_ids_json(stdout, &pr);
		fputs(", \"generated\": ", stdout);
		print_ids_json(stdout, &g);
		fputc('}', stdout);
	}
	fputc(']', stdout);
	json_key(stdout, &first, "prefill_ms"), printf("%.3f", p->prefill_ms);
	json_key(stdout, &first, "decode_ms"), printf("%.3f", p->decode_ms);
	json_key(stdout, &first, "decode_tokens_per_s"), printf("%.3f", decoded > 0 ? decoded * 1e3 / fmax(p->decode_ms, 1e-6) : 0.0);
	fputs("}\n", stdout);
	return 0;
}

static int run_parallel(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o, struct run_error *e)
{
	struct ids prompt = { 0 };
	struct par p = { 0 };
	struct run_state *s = NULL;
	float *buf = NULL;
	int64_t n_ctx, batch = o->n_batch > o->parallel ? o->n_batch : o->parallel;
	int r = load_prompt(o, m, &prompt, e);

	if (r)
		goto out;
	n_ctx = o->n_ctx ? o->n_ctx : prompt.n + o->n_gen;
	if (n_ctx < prompt.n + o->n_gen - 1 || (!o->n_ctx && n_ctx > m->hp.n_ctx_train)) {
		r = run_fail(e, RUN_E_BAD_INPUT, "context %lld does not fit prompt (%lld) + -n (%lld), or exceeds the model's %lld (--ctx)",
			     (long long)n_ctx, (long long)prompt.n, (long long)o->n_gen, (long long)m->hp.n_ctx_train);
		goto out;
	}
	if ((r = par_init(&p, o->parallel, &prompt, o->n_gen, m->hp.n_vocab, batch, o->logits != NULL, e)))
		goto out;
	if (o->logits && !(buf = malloc(sizeof(float) * (size_t)(batch * m->hp.n_vocab)))) {
		r = run_fail(e, RUN_E_GLLMK, "out of memory for the logits rows");
		goto out;
	}
	r = run_state_new(m, ctx, &(struct run_state_opts){ .n_ctx = n_ctx, .n_batch = batch, .kv_type = o->kv_type,
							     .n_seq = o->parallel }, &s, e);
	if (!r)
		r = par_generate(s, o, &prompt, &p, buf, e);
	if (!r)
		r = par_output(m, ctx, o, &prompt, &p, n_ctx, e);
out:
	run_state_free(s);
	par_free(&p);
	free(buf);
	free(prompt.v);
	return r;
}

/* ------------------------------------------------------------ main */

static int open_context(const struct run_opts *o, gllmk_context **ctx, struct run_error *e)
{
	gllmk_options go = { .struct_size = sizeof(go), .plugins = o->plugin, .n_threads = o->threads,
			     .flags = o->bf16_act ? GLLMK_OPEN_BF16_ACTIVATIONS : 0 };
	gllmk_status st = gllmk_open(&go, ctx);

	return st ? run_gllmk_error(e, "gllmk_open", st) : 0;
}

static int run_generate(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o, struct run_error *e)
{
	struct ids prompt = { 0 };
	struct gen_result g = { 0 };
	struct run_state *s = NULL;
	FILE *lf = NULL;
	int r = load_prompt(o, m, &prompt, e);

	if (r)
		goto out;
	g.n_ctx = o->n_ctx ? o->n_ctx : prompt.n + o->n_gen;
	if (!o->n_ctx && g.n_ctx > m->hp.n_ctx_train) {
		r = run_fail(e, RUN_E_BAD_INPUT, "prompt (%lld) + -n (%lld) exceed the model's context length %lld (--ctx to force)",
			     (long long)prompt.n, (long long)o->n_gen, (long long)m->hp.n_ctx_train);
		goto out;
	}
	if (g.n_ctx < prompt.n + o->n_gen - 1) {
		r = run_fail(e, RUN_E_BAD_INPUT, "--ctx %lld is shorter than prompt (%lld) + -n (%lld) - 1",
			     (long long)g.n_ctx, (long long)prompt.n, (long long)o->n_gen);
		goto out;
	}
	if (o->logits && !(lf = fopen(o->logits, "wb"))) {
		r = run_fail(e, RUN_E_BAD_INPUT, "--logits '%s': %s", o->logits, strerror(errno));
		goto out;
	}
	r = run_state_new(m, ctx,
			  &(struct run_state_opts){ .n_ctx = g.n_ctx, .n_batch = o->n_batch, .kv_type = o->kv_type,
						    .all_logits = lf != NULL },
			  &s, e);
	if (!r)
		r = generate(s, m, o, &prompt, lf, &g, e);
	if (lf && fclose(lf) && !r)
		r = run_fail(e, RUN_E_BAD_INPUT, "--logits '%s': %s", o->logits, strerror(errno));
	lf = NULL;
	if (!r && o->json)
		print_json(m, ctx, o, &prompt, &g);
	else if (!r)
		print_text(m, ctx, &prompt, &g, o->quiet);
out:
	if (lf)
		fclose(lf);
	run_state_free(s);
	free(prompt.v);
	free(g.generated.v);
	return r;
}

static int run(const struct run_opts *o, struct run_error *e)
{
	struct gguf_file *f = NULL;
	struct run_model m;
	gllmk_context *ctx = NULL;
	int r;

	memset(&m, 0, sizeof(m));
	if (gguf_open(o->model, &f, e->msg, sizeof(e->msg))) {
		char why[sizeof(e->msg)];

		memcpy(why, e->msg, sizeof(why));
		return run_fail(e, RUN_E_BAD_INPUT, "%s: %s", o->model, why);
	}
	r = model_describe(f, &m, e);
	if (!r && o->info)
		info_print(&m, stdout);
	else if (!r && !(r = open_context(o, &ctx, e)) && !(r = model_bind(&m, ctx, o->mmap, !o->no_prepare, o->quiet, e)))
		r = o->bench ? bench_run(&m, ctx, o, e)
			     : o->parallel ? run_parallel(&m, ctx, o, e)
					   : run_generate(&m, ctx, o, e);
	model_release(&m);
	gllmk_close(ctx);
	gguf_close(f);
	return r;
}

int main(int argc, char **argv)
{
	struct run_opts o;
	struct run_error e = { 0 };
	int r = parse_args(argc, argv, &o, &e);

	if (!r)
		r = run(&o, &e);
	if (r)
		fprintf(stderr, "gllmk-run: %s\n", e.msg[0] ? e.msg : "failed");
	return r;
}
