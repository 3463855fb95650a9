/* gllmk-run --bench: llama-bench's two tests on gllmk, beside the machine's
 * limits and (with --peer) llama.cpp on the same file in the same run.
 *
 *   pp<P>: one P-token prompt batch from an empty cache (logits of the last
 *          position only), as llama-bench's pp test.
 *   tg<G>: G single-token steps from an empty cache, each sampled by argmax
 *          on the device and fed back, as a decode loop runs.
 *   --depth D: both after D tokens already in the cache (llama-bench's -d):
 *          the D tokens are prefilled once, untimed; each pp and tg then
 *          writes the positions after them, so every rep sees the same cache.
 *   parallel (--parallel): aggregate decode tokens/s of 1, 8 and 64
 *          sequences at once (prompts of 1..128 tokens, different lengths,
 *          each prefilled alone), --tg packed steps of one token per
 *          sequence through the paged cache and gllmk_attention_varlen.
 * A warm-up of each comes first; the figures are the median, min and max of
 * --reps runs. The decode roofline is the memory bandwidth (bench_machine.c's
 * DRAM probe, or a GPU plugin's device copy where faster: bench_device.c,
 * the figures gllmk-bench reports) / bytes read per token: the weights and
 * the K/V rows the tg steps' attention reads, on average. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/bench.h"
#include "peer.h"
#include "run.h"

#define MAX_REPS 32

struct bench_figs {
	double pp[MAX_REPS], tg[MAX_REPS];
	int reps;
};

int run_default_threads(void)
{
	return bench_physical_cores();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void stats(const double *v, int n, double *med, double *min, double *max)
{
	double s[MAX_REPS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	*med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
	*min = s[0];
	*max = s[n - 1];
}

/* The median of a[i] / b[i], i < n: pairs of reps run back to back. */
static double median_ratio(const double *a, const double *b, int n)
{
	double r[MAX_REPS], med, lo, hi;

	for (int i = 0; i < n; i++)
		r[i] = a[i] / b[i];
	stats(r, n, &med, &lo, &hi);
	return med;
}

/* One prompt batch at position pos; returns tokens/s or a negative status. */
static double time_pp(struct run_state *s, const int32_t *ids, int pp, int64_t pos, gllmk_context *ctx,
		      struct run_error *e)
{
	double t0 = run_now_ms();
	gllmk_status st;

	if (run_forward(s, ids, pp, pos, e))
		return -1;
	st = gllmk_sync(ctx);
	if (st) {
		run_gllmk_error(e, "gllmk_sync", st);
		return -1;
	}
	return pp * 1e3 / (run_now_ms() - t0);
}

static double time_tg(struct run_state *s, int32_t first, int tg, int64_t pos, struct run_error *e)
{
	gllmk_sample_params argmax = { .temperature = 0.0f };
	double t0 = run_now_ms();
	int32_t id;

	for (int i = 0; i < tg; i++) {
		if (run_forward(s, i ? NULL : &first, 1, pos + i, e) || run_sample(s, &argmax, 0.0f, &id, e))
			return -1;
	}
	return tg * 1e3 / (run_now_ms() - t0);
}

/* ------------------------------------------------------------ the peer */

struct peer_figs {
	bool ran;
	char why[256];
	struct gllmk_peer_result r; /* one entry per rep, appended rep by rep */
};

static struct gllmk_peer *open_peer(const struct run_opts *o, struct peer_figs *p)
{
	struct gllmk_peer *peer;

	memset(p, 0, sizeof(*p));
	if (!o->peer)
		return NULL;
	peer = gllmk_peer_open(o->peer, NULL, p->why, sizeof(p->why));
	p->ran = peer != NULL;
	return peer;
}

/* One peer rep (its own load and warm-up, then one timed pp and tg),
 * appended to p; a failure ends the peer's part of the run with its reason. */
static void peer_rep(struct gllmk_peer *peer, const struct run_opts *o, int threads, struct peer_figs *p)
{
	struct gllmk_peer_result one;

	if (!p->ran)
		return;
	if (gllmk_peer_bench(peer, o->model, threads, o->pp, o->tg, o->depth, 1, &one, p->why, sizeof(p->why))) {
		p->ran = false;
		return;
	}
	memcpy(p->r.name, one.name, sizeof(p->r.name));
	memcpy(p->r.version, one.version, sizeof(p->r.version));
	p->r.pp_tokens_per_s[p->r.reps] = one.pp_tokens_per_s[0];
	p->r.tg_tokens_per_s[p->r.reps] = one.tg_tokens_per_s[0];
	p->r.reps++;
}

/* The --depth tokens, in batches of at most n_batch, untimed. */
static int fill_depth(struct run_state *s, const int32_t *ids, const struct run_opts *o, int64_t n_batch,
		      struct run_error *e)
{
	if (o->depth && !o->quiet)
		fprintf(stderr, "gllmk-run: %d tokens of context first...\n", o->depth);
	for (int64_t t = 0; t < o->depth; t += n_batch) {
		const int64_t n = o->depth - t < n_batch ? o->depth - t : n_batch;

		if (run_forward(s, ids + t, n, t, e))
			return e->status;
	}
	return 0;
}

/* gllmk's reps, each followed by one of the peer's (with --peer): both see
 * the same minutes of a machine whose memory bandwidth drifts, and the
 * ratios are taken rep by rep (summarize). ids: the depth's tokens, then
 * the prompt's. */
static int measure(struct run_state *s, gllmk_context *ctx, const struct run_opts *o, const int32_t *ids,
		   int64_t n_batch, struct bench_figs *f, int threads, struct peer_figs *p, struct run_error *e)
{
	struct gllmk_peer *peer = open_peer(o, p);
	const int32_t *prompt = ids + o->depth;
	const int64_t pos = o->depth;
	int r = fill_depth(s, ids, o, n_batch, e);

	if (!r && (time_pp(s, prompt, o->pp, pos, ctx, e) < 0 || time_tg(s, prompt[0], 1, pos, e) < 0))
		r = e->status; /* warm-up */
	if (!r && p->ran && !o->quiet)
		fprintf(stderr, "gllmk-run: each rep followed by one of %s on the same file...\n", o->peer);
	f->reps = o->reps;
	for (int i = 0; !r && i < o->reps; i++) {
		if ((f->pp[i] = time_pp(s, prompt, o->pp, pos, ctx, e)) < 0 ||
		    (f->tg[i] = time_tg(s, prompt[0], o->tg, pos, e)) < 0)
			r = e->status;
		else
			peer_rep(peer, o, threads, p);
	}
	if (peer)
		gllmk_peer_close(peer);
	return r;
}

/* ------------------------------------------------------------ output */

/* ------------------------------------------------------------ --parallel */

static int32_t *random_ids(int n, int64_t n_vocab);

static const int64_t PAR_SEQS[] = { 1, 8, 64 };
#define PAR_N (sizeof(PAR_SEQS) / sizeof(PAR_SEQS[0]))
#define PAR_PROMPT 128

struct par_figs {
	double tg[PAR_N]; /* median aggregate tokens/s */
	bool ran;
};

/* n sequences prefilled (prompt q: 1 + 37·q mod 128 tokens), then a warm-up
 * step and --reps timed runs of --tg steps; the median of the reps. */
static int par_bench(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o, int64_t n,
		     const int32_t *prompt, double *out, struct run_error *e)
{
	int64_t batch = n > PAR_PROMPT ? n : PAR_PROMPT, n_ctx = PAR_PROMPT + 1 + (int64_t)o->reps * o->tg;
	int64_t *ntok = calloc((size_t)n, sizeof(int64_t)), *pos = calloc((size_t)n, sizeof(int64_t));
	int32_t *ids = malloc((size_t)batch * 4), *next = malloc((size_t)batch * 4);
	double t[MAX_REPS], lo, hi;
	struct run_state *s = NULL;
	int r = !ntok || !pos || !ids || !next ? run_fail(e, RUN_E_GLLMK, "out of memory") : 0;

	if (!r)
		r = run_state_new(m, ctx, &(struct run_state_opts){ .n_ctx = n_ctx, .n_batch = batch, .kv_type = o->kv_type, .n_seq = n },
				  &s, e);
	for (int64_t q = 0; !r && q < n; q++) {
		memset(ntok, 0, sizeof(int64_t) * (size_t)n);
		ntok[q] = 1 + (37 * q) % PAR_PROMPT;
		r = run_forward_seqs(s, prompt, ntok, pos, next, e);
		pos[q] = ntok[q];
		ids[q] = next[ntok[q] - 1];
	}
	for (int rep = -1; !r && rep < o->reps; rep++) { /* rep -1: one warm-up step */
		double t0 = run_now_ms();

		for (int i = 0; !r && i < (rep < 0 ? 1 : o->tg); i++) {
			for (int64_t q = 0; q < n; q++)
				ntok[q] = 1;
			r = run_forward_seqs(s, ids, ntok, pos, next, e);
			for (int64_t q = 0; q < n; q++)
				pos[q]++, ids[q] = next[q];
		}
		if (rep >= 0)
			t[rep] = (double)n * o->tg * 1e3 / (run_now_ms() - t0);
	}
	if (!r)
		stats(t, o->reps, out, &lo, &hi);
	run_state_free(s);
	free(ntok), free(pos), free(ids), free(next);
	return r;
}

static int par_measure(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o, struct par_figs *p,
		       struct run_error *e)
{
	int32_t *prompt = random_ids(PAR_PROMPT, m->hp.n_vocab);
	int r = prompt ? 0 : run_fail(e, RUN_E_GLLMK, "out of memory");

	for (size_t i = 0; !r && i < PAR_N; i++) {
		if (!o->quiet)
			fprintf(stderr, "gllmk-run: parallel decode, %lld sequences...\n", (long long)PAR_SEQS[i]);
		r = par_bench(m, ctx, o, PAR_SEQS[i], prompt, &p->tg[i], e);
	}
	p->ran = !r;
	free(prompt);
	return r;
}

struct bench_report {
	const struct run_model *m;
	const char *plugin;
	int threads;
	const struct run_opts *o;
	struct bench_limits lim;
	double pp_med, pp_min, pp_max, tg_med, tg_min, tg_max;
	struct peer_figs peer;
	struct par_figs par;
	double peer_pp_med, peer_pp_min, peer_pp_max, peer_tg_med, peer_tg_min, peer_tg_max;
	double pp_ratio, tg_ratio; /* medians of the rep-by-rep ratios */
	double kv_bytes;           /* K/V bytes a tg step's attention reads, on average */
};

/* K/V bytes the attention of one decode step reads with ctx tokens in the
 * cache: every layer's K and V rows of the tokens it sees (a sliding-window
 * layer at most its window). */
static double kv_bytes_read(const struct run_model *m, gllmk_dtype kv_type, double ctx)
{
	const struct run_hparams *hp = &m->hp;
	uint64_t k = 0, v = 0;
	double bytes = 0.0;

	if (gllmk_dtype_row_bytes(kv_type, hp->head_dim, &k) || gllmk_dtype_row_bytes(kv_type, hp->head_dim_v, &v))
		return 0.0; /* a head size the cache type cannot hold: run_state_new refused it already */
	for (int64_t il = 0; il < hp->n_layer; il++) {
		const double seen = run_layer_is_local(hp, il) && ctx > (double)hp->n_swa ? (double)hp->n_swa : ctx;

		bytes += seen * (double)hp->n_head_kv * (double)(k + v);
	}
	return bytes;
}

static double roofline(const struct bench_report *b)
{
	return bench_memory_limit(&b->lim) * 1e9 / ((double)b->m->weight_bytes_per_token + b->kv_bytes);
}

static void print_table(const struct bench_report *b)
{
	const struct run_opts *o = b->o;
	double roof = roofline(b);

	printf("gllmk-run --bench: %s (%s, %.1f MiB of weights per token), plugin %s, %d threads, %d reps, "
	       "%d matrices prepared%s\n", o->model, b->m->arch_name, (double)b->m->weight_bytes_per_token / (1 << 20),
	       b->plugin, b->threads, o->reps, b->m->n_prepared, o->bf16_act ? ", --bf16-activations" : "");
	printf("machine: %s; DRAM read %.1f GB/s (%d threads), FMA peak %.0f GFLOP/s, load average %.2f\n", b->lim.cpu,
	       b->lim.dram, b->lim.threads, b->lim.peak, b->lim.loadavg);
	if (b->lim.device_mib > 0)
		printf("device: %s memory %.1f GB/s read + written (a %.0f MiB device copy)%s\n", b->plugin,
		       b->lim.device_copy, b->lim.device_mib,
		       b->lim.device_is_limit ? ": the roofline's bandwidth" : "; a CPU device: the DRAM read is the roofline's");
	printf("%-8s %28s %28s %7s  %s\n", "test", "gllmk t/s (min-max)", b->peer.ran ? "llama.cpp t/s (min-max)" : "",
	       b->peer.ran ? "ratio" : "", "limit");
	printf("%-8s %10.2f (%7.2f-%7.2f)", "pp", b->pp_med, b->pp_min, b->pp_max);
	if (b->peer.ran)
		printf(" %10.2f (%7.2f-%7.2f) %6.2fx", b->peer_pp_med, b->peer_pp_min, b->peer_pp_max, b->pp_ratio);
	printf("  %.1f GFLOP/s of matmul\n", b->pp_med * b->m->matmul_flops_per_token / 1e9);
	printf("%-8s %10.2f (%7.2f-%7.2f)", "tg", b->tg_med, b->tg_min, b->tg_max);
	if (b->peer.ran)
		printf(" %10.2f (%7.2f-%7.2f) %6.2fx", b->peer_tg_med, b->peer_tg_min, b->peer_tg_max, b->tg_ratio);
	printf("  roofline %.2f t/s: %.0f%%\n", roof, 100.0 * b->tg_med / roof);
	if (b->par.ran) {
		printf("%-8s", "parallel");
		for (size_t i = 0; i < PAR_N; i++)
			printf("  %lld seq %.2f t/s", (long long)PAR_SEQS[i], b->par.tg[i]);
		printf("  (aggregate decode)\n");
	}
	if (o->depth)
		printf("(pp = %d-token prompt, tg = %d decode steps, each after %d tokens of context; the roofline "
		       "counts %.1f MiB of K/V a step)\n",
		       o->pp, o->tg, o->depth, b->kv_bytes / (1 << 20));
	else
		printf("(pp = %d-token prompt, tg = %d decode steps)\n", o->pp, o->tg);
	if (o->peer && !b->peer.ran)
		printf("peer: %s\n", b->peer.why);
}

static void json_num(const char *key, double v, bool *first)
{
	json_key(stdout, first, key);
	if (isfinite(v))
		printf("%.4f", v);
	else
		fputs("null", stdout);
}

static void print_peer_json(const struct bench_report *b, bool *first)
{
	bool f = true;

	json_key(stdout, first, "peer");
	if (!b->peer.ran) {
		fputs("null", stdout);
		if (b->o->peer)
			json_key(stdout, first, "peer_error"), json_str(stdout, b->peer.why, strlen(b->peer.why));
		return;
	}
	fputc('{', stdout);
	json_key(stdout, &f, "name"), json_str(stdout, b->peer.r.name, strlen(b->peer.r.name));
	json_key(stdout, &f, "version"), json_str(stdout, b->peer.r.version, strlen(b->peer.r.version));
	json_num("pp_tokens_per_s", b->peer_pp_med, &f), json_num("pp_min", b->peer_pp_min, &f);
	json_num("pp_max", b->peer_pp_max, &f), json_num("tg_tokens_per_s", b->peer_tg_med, &f);
	json_num("tg_min", b->peer_tg_min, &f), json_num("tg_max", b->peer_tg_max, &f);
	json_num("pp_ratio", b->pp_ratio, &f), json_num("tg_ratio", b->tg_ratio, &f);
	fputc('}', stdout);
}

static void print_json(const struct bench_report *b)
{
	const struct run_opts *o = b->o;
	bool first = true;

	fputc('{', stdout);
	json_key(stdout, &first, "model"), json_str(stdout, o->model, strlen(o->model));
	json_key(stdout, &first, "arch"), json_str(stdout, b->m->arch_name, strlen(b->m->arch_name));
	json_key(stdout, &first, "plugin"), json_str(stdout, b->plugin, strlen(b->plugin));
	json_key(stdout, &first, "threads"), printf("%d", b->threads);
	json_key(stdout, &first, "bf16_activations"), printf("%s", o->bf16_act ? "true" : "false");
	json_key(stdout, &first, "prepared"), printf("%d", b->m->n_prepared);
	json_key(stdout, &first, "reps"), printf("%d", o->reps);
	json_key(stdout, &first, "pp_tokens"), printf("%d", o->pp);
	json_key(stdout, &first, "tg_tokens"), printf("%d", o->tg);
	json_key(stdout, &first, "depth"), printf("%d", o->depth);
	json_num("pp_tokens_per_s", b->pp_med, &first), json_num("pp_min", b->pp_min, &first);
	json_num("pp_max", b->pp_max, &first), json_num("tg_tokens_per_s", b->tg_med, &first);
	json_num("tg_min", b->tg_min, &first), json_num("tg_max", b->tg_max, &first);
	json_key(stdout, &first, "weight_bytes_per_token"), printf("%llu", (unsigned long long)b->m->weight_bytes_per_token);
	json_num("kv_bytes_per_token", b->kv_bytes, &first);
	json_num("dram_gbps", b->lim.dram, &first);
	json_num("device_copy_gbps", b->lim.device_copy, &first);
	json_num("roofline_tg_tokens_per_s", roofline(b), &first);
	json_num("pp_gflops", b->pp_med * b->m->matmul_flops_per_token / 1e9, &first);
	json_num("fma_peak_gflops", b->lim.peak, &first);
	json_num("loadavg", b->lim.loadavg, &first);
	print_peer_json(b, &first);
	json_key(stdout, &first, "parallel");
	if (b->par.ran) {
		fputc('[', stdout);
		for (size_t i = 0; i < PAR_N; i++)
			printf("%s{\"n_seq\": %lld, \"tg_tokens_per_s\": %.4f}", i ? ", " : "", (long long)PAR_SEQS[i],
			       b->par.tg[i]);
		fputc(']', stdout);
	} else {
		fputs("null", stdout);
	}
	fputs("}\n", stdout);
}

/* ------------------------------------------------------------ the run */

static void summarize(struct bench_report *b, const struct bench_figs *f)
{
	stats(f->pp, f->reps, &b->pp_med, &b->pp_min, &b->pp_max);
	stats(f->tg, f->reps, &b->tg_med, &b->tg_min, &b->tg_max);
	b->peer_pp_med = b->peer_tg_med = NAN;
	if (!b->peer.ran)
		return;
	stats(b->peer.r.pp_tokens_per_s, b->peer.r.reps, &b->peer_pp_med, &b->peer_pp_min, &b->peer_pp_max);
	stats(b->peer.r.tg_tokens_per_s, b->peer.r.reps, &b->peer_tg_med, &b->peer_tg_min, &b->peer_tg_max);
	b->pp_ratio = median_ratio(f->pp, b->peer.r.pp_tokens_per_s, b->peer.r.reps);
	b->tg_ratio = median_ratio(f->tg, b->peer.r.tg_tokens_per_s, b->peer.r.reps);
}

static int32_t *random_ids(int n, int64_t n_vocab)
{
	int32_t *ids = malloc(sizeof(*ids) * (size_t)n);
	uint64_t x = 0x853c49e6748fea9bull;

	for (int i = 0; ids && i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ids[i] = (int32_t)((x >> 33) % (uint64_t)n_vocab);
	}
	return ids;
}

int bench_run(const struct run_model *m, gllmk_context *ctx, const struct run_opts *o, struct run_error *e)
{
	struct bench_report b = { .m = m, .plugin = gllmk_context_plugin(ctx), .o = o };
	struct bench_figs f = { 0 };
	struct run_state *s = NULL;
	int32_t *ids = random_ids(o->depth + o->pp, m->hp.n_vocab);
	/* the depth goes in batches of up to 512 tokens, or of the prompt's size */
	int64_t n_batch = o->depth < 512 ? o->depth : 512;
	int r;

	n_batch = n_batch > o->pp ? n_batch : o->pp;
	b.threads = o->threads ? o->threads : run_default_threads();
	b.kv_bytes = kv_bytes_read(m, o->kv_type, o->depth + 0.5 * (o->tg + 1));
	if (!ids)
		return run_fail(e, RUN_E_GLLMK, "out of memory");
	r = run_state_new(m, ctx,
			  &(struct run_state_opts){ .n_ctx = (int64_t)o->depth + o->pp + o->tg, .n_batch = n_batch,
						    .kv_type = o->kv_type },
			  &s, e);
	if (!r && !o->quiet)
		fprintf(stderr, "gllmk-run: pp%d and tg%d%s on %s, %d reps...\n", o->pp, o->tg,
			o->depth ? " after the context" : "", b.plugin, o->reps);
	if (!r)
		r = measure(s, ctx, o, ids, n_batch, &f, b.threads, &b.peer, e);
	run_state_free(s);
	free(ids);
	if (!r && o->parallel)
		r = par_measure(m, ctx, o, &b.par, e);
	if (r)
		return r;
	/* After the runs, so the probe disturbs neither's caches or threads. */
	if (bench_measure_limits(&b.lim, b.threads, false))
		return run_fail(e, RUN_E_GLLMK, "out of memory for the DRAM probe");
	bench_measure_device(ctx, false, &b.lim);
	summarize(&b, &f);
	if (o->json)
		print_json(&b);
	else
		print_table(&b);
	return 0;
}
