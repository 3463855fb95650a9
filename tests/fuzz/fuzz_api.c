/* libFuzzer target: the public API with arbitrary tensor views and
 * parameters, on cpu-generic and on the CPU plugin this machine selects.
 *
 * The input is a program: a few buffers, then a sequence of calls, each an
 * operator of FUZZ_OPS or a buffer operation, with its tensors decoded from
 * the input (buffer, offset, dtype, ndim, shapes, strides; any of them may be
 * NULL, a foreign context's buffer, negative or huge) and its parameter
 * struct filled with raw input bytes. The same call runs on both contexts.
 *
 * What must hold (anything else is a finding, and ASan/UBSan watch memory):
 *   - every status is a gllmk_status, and a failure leaves a one-line
 *     message in gllmk_last_error() that begins with the function's name
 *     (SPEC/ABI.md §10; the CPU plugins' buffer messages did not);
 *   - the two plugins agree on the status (the core validates the same way
 *     for both), except E_BOUNDS, which a plugin may raise from index data
 *     that the two computed with different rounding.
 *
 * Adding an operator is one line in FUZZ_OPS.
 */
#include "fuzz_common.h"

#define N_BUFS 3                  /* per context, plus a wrapped one */
#define MAX_BUF ((size_t)16384)   /* keeps every valid call small */
#define N_TENSORS 9

struct fuzz_params {
	gllmk_gemm_params gemm;
	gllmk_softmax_params softmax;
	gllmk_rope_params rope;
	gllmk_attention_params attention;
	gllmk_sample_params sample;
	gllmk_moe_route_params moe_route;
	gllmk_glu_params glu;
	gllmk_rope_ext_params rope_ext;
	gllmk_attention_ext_params attention_ext;
	float f0, f1;
};

/* One call's arguments on one context. */
struct call {
	gllmk_context *c;
	const gllmk_tensor *t[N_TENSORS];
	const struct fuzz_params *p; /* a copy per context: plugins may not write it, but see check_params */
	const float *uniform;
};

#define T(i) (a->t[i])
#define P (a->p)

/* name, tensors it reads from the input, the call */
#define FUZZ_OPS(X)                                                                           \
	X(matmul, 4, gllmk_matmul(a->c, T(0), T(1), T(2), T(3)))                              \
	X(gemm, 3, gllmk_gemm(a->c, T(0), T(1), T(2), &P->gemm))                              \
	X(dequantize, 2, gllmk_dequantize(a->c, T(0), T(1)))                                  \
	X(quantize, 2, gllmk_quantize(a->c, T(0), T(1)))                                      \
	X(convert, 2, gllmk_convert(a->c, T(0), T(1)))                                        \
	X(add, 3, gllmk_add(a->c, T(0), T(1), T(2)))                                          \
	X(mul, 3, gllmk_mul(a->c, T(0), T(1), T(2)))                                          \
	X(scale, 2, gllmk_scale(a->c, T(0), T(1), P->f0))                                     \
	X(silu, 2, gllmk_silu(a->c, T(0), T(1)))                                              \
	X(gelu_tanh, 2, gllmk_gelu_tanh(a->c, T(0), T(1)))                                    \
	X(gelu_erf, 2, gllmk_gelu_erf(a->c, T(0), T(1)))                                      \
	X(relu, 2, gllmk_relu(a->c, T(0), T(1)))                                              \
	X(tanh, 2, gllmk_tanh(a->c, T(0), T(1)))                                              \
	X(exp, 2, gllmk_exp(a->c, T(0), T(1)))                                                \
	X(swiglu, 3, gllmk_swiglu(a->c, T(0), T(1), T(2)))                                    \
	X(rms_norm, 3, gllmk_rms_norm(a->c, T(0), T(1), T(2), P->f0))                         \
	X(layer_norm, 4, gllmk_layer_norm(a->c, T(0), T(1), T(2), T(3), P->f0))               \
	X(softmax, 3, gllmk_softmax(a->c, T(0), T(1), T(2), &P->softmax))                     \
	X(rope, 3, gllmk_rope(a->c, T(0), T(1), T(2), &P->rope))                              \
	X(get_rows, 3, gllmk_get_rows(a->c, T(0), T(1), T(2)))                                \
	X(attention, 6, gllmk_attention(a->c, T(0), T(1), T(2), T(3), T(4), T(5), &P->attention)) \
	X(argmax, 2, gllmk_argmax(a->c, T(0), T(1)))                                          \
	X(sample, 2, gllmk_sample(a->c, T(0), T(1), a->uniform, &P->sample))                  \
	/* ABI 1.1 */                                                                         \
	X(sigmoid, 2, gllmk_sigmoid(a->c, T(0), T(1)))                                        \
	X(clamp, 2, gllmk_clamp(a->c, T(0), T(1), P->f0, P->f1))                              \
	X(softcap, 2, gllmk_softcap(a->c, T(0), T(1), P->f0))                                 \
	X(glu, 3, gllmk_glu(a->c, T(0), T(1), T(2), &P->glu))                                 \
	X(top_k, 3, gllmk_top_k(a->c, T(0), T(1), T(2)))                                      \
	X(moe_route, 4, gllmk_moe_route(a->c, T(0), T(1), T(2), T(3), &P->moe_route))          \
	X(rope_ext, 4, gllmk_rope_ext(a->c, T(0), T(1), T(2), T(3), &P->rope_ext))             \
	X(attention_ext, 7,                                                                   \
	  gllmk_attention_ext(a->c, T(0), T(1), T(2), T(3), T(4), T(5), T(6), &P->attention_ext)) \
	X(attention_varlen, 9,                                                                \
	  gllmk_attention_varlen(a->c, T(0), T(1), T(2), T(3), T(4), T(5), T(6), T(7), T(8),  \
				 &P->attention_ext))                                          \
	X(kv_store, 3, gllmk_kv_store(a->c, T(0), T(1), T(2)))                                \
	X(matmul_id, 6, gllmk_matmul_id(a->c, T(0), T(1), T(2), T(3), T(4), T(5)))            \
	X(matmul_batched, 3, gllmk_matmul_batched(a->c, T(0), T(1), T(2)))
/* (a new op takes the next op byte, so the seeds' op bytes stay valid.) */

#define DEFINE_CALL(name, n, expr)                                  \
	static gllmk_status call_##name(const struct call *a)       \
	{                                                           \
		return expr;                                        \
	}
FUZZ_OPS(DEFINE_CALL)

static const struct op {
	const char *name;
	int n_tensors;
	gllmk_status (*call)(const struct call *a);
} ops[] = {
#define OP_ENTRY(name, n, expr) {"gllmk_" #name, n, call_##name},
	FUZZ_OPS(OP_ENTRY)
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

static gllmk_context *ctx[2];
static gllmk_buffer *bufs[2][N_BUFS + 1]; /* [N_BUFS]: a wrapped buffer, or NULL */
static uint8_t wrap_mem[2][MAX_BUF] __attribute__((aligned(64)));
static uint8_t host[MAX_BUF * 2] __attribute__((aligned(64)));
static float uniform[MAX_BUF];

/* Shapes: mostly small, sometimes the values validation must catch. */
static int64_t decode_dim(uint8_t b)
{
	static const int64_t special[] = {
		0, -1, INT64_MIN, INT64_MAX, (int64_t)1 << 28, (int64_t)1 << 31, (int64_t)1 << 40, (int64_t)1 << 62,
	};

	if (b < 0xf0)
		return b & 0x3f;
	if (b < 0xf8)
		return (int64_t)32 << (b & 7); /* 32 .. 4096: blocks of every dtype */
	return special[b & 7];
}

/* Outer strides: contiguous, 0 (broadcast), a fuzzed byte count, or huge. */
static int64_t decode_stride(struct fuzz_in *in, int64_t contiguous)
{
	uint8_t b = fuzz_u8(in);

	switch (b >> 6) {
	case 0: return contiguous;
	case 1: return b & 1 ? 0 : (int64_t)((uint64_t)contiguous * 2);
	case 2: return (int64_t)(fuzz_u16(in) & 0x7ffc);
	default: return b & 1 ? INT64_MIN : (int64_t)fuzz_u32(in) << (b & 31);
	}
}

static int32_t decode_dtype(uint8_t b)
{
	static const int32_t common[] = {GLLMK_F32, GLLMK_F32, GLLMK_F32, GLLMK_I32, GLLMK_F16,
					 GLLMK_BF16, GLLMK_Q8_0, GLLMK_Q4_0};

	if (b < 0xc0)
		return common[b & 7];
	return b & 1 ? (int32_t)(b & 0x3f) : (int32_t)((int8_t)b * 1000003); /* every value, and junk */
}

/* A work-bounded view: huge dims with stride 0 make valid calls of years. */
static int too_big(const gllmk_tensor *t)
{
	uint64_t elems = 1;

	if (t->ndim < 1 || t->ndim > GLLMK_MAX_DIMS)
		return 0;
	for (int d = 0; d < t->ndim; d++) {
		if (t->shape[d] <= 0)
			return 0; /* empty or invalid: cheap either way */
		if (d < t->ndim - 1 && t->stride[d] != 0)
			continue; /* the buffer bounds it, or validation rejects it */
		elems = t->shape[d] > (int64_t)MAX_BUF ? UINT64_MAX : elems * (uint64_t)t->shape[d];
		if (elems > MAX_BUF)
			return 1;
	}
	return 0;
}

/* Decodes one tensor (or NULL) for both contexts; 0 when the call should be
 * skipped for its cost. */
static int decode_tensor(struct fuzz_in *in, gllmk_tensor t[2], const gllmk_tensor *out[2])
{
	uint8_t sel = fuzz_u8(in);
	int which = sel & 7;
	uint8_t dt = fuzz_u8(in), nd = fuzz_u8(in);
	uint16_t off = fuzz_u16(in);
	int64_t shape[GLLMK_MAX_DIMS];

	if (which == 7) {
		out[0] = out[1] = NULL;
		return 1;
	}
	for (int d = 0; d < GLLMK_MAX_DIMS; d++)
		shape[d] = decode_dim(fuzz_u8(in));
	for (int c = 0; c < 2; c++) {
		/* 0..N_BUFS: own buffers (N_BUFS: the wrapped one, maybe NULL);
		 * 4, 5: the other context's buffer; 6: a NULL buffer */
		gllmk_buffer *b = which <= N_BUFS ? bufs[c][which] : which < 6 ? bufs[!c][which - 4] : NULL;
		int ndim = nd < 0xf0 ? 1 + nd % GLLMK_MAX_DIMS : (int8_t)nd; /* 0, negative, > 4 sometimes */

		t[c] = gllmk_tensor_make(b, (off & 0x8000) ? (uint64_t)off << 44 : off, (gllmk_dtype)decode_dtype(dt),
					 ndim >= 1 && ndim <= GLLMK_MAX_DIMS ? ndim : 1, shape);
		t[c].ndim = ndim;
		out[c] = &t[c];
	}
	if (sel & 0x80) /* strides of their own */
		for (int d = 0; d < GLLMK_MAX_DIMS; d++) {
			int64_t s = decode_stride(in, t[0].stride[d]);

			t[0].stride[d] = t[1].stride[d] = s;
		}
	return !too_big(&t[0]);
}

static void check_status(const char *fn, int c, gllmk_status st)
{
	const char *msg = gllmk_last_error();

	FUZZ_CHECK((unsigned)st <= GLLMK_E_BACKEND, "%s on %s: status %d is no gllmk_status", fn,
		   gllmk_context_plugin(ctx[c]), (int)st);
	/* SPEC/ABI.md §10: the plugin's messages too begin with the public name */
	if (st != GLLMK_OK)
		FUZZ_CHECK(!strncmp(msg, fn, strlen(fn)) && !strchr(msg, '\n'),
			   "%s on %s failed (%s) with the message \"%s\"", fn, gllmk_context_plugin(ctx[c]),
			   gllmk_status_string(st), msg);
}

static void check_agree(const char *fn, const gllmk_status st[2])
{
	if (st[0] == st[1] || st[0] == GLLMK_E_BOUNDS || st[1] == GLLMK_E_BOUNDS)
		return;
	FUZZ_CHECK(0, "%s: %s says %s, %s says %s", fn, gllmk_context_plugin(ctx[0]), gllmk_status_string(st[0]),
		   gllmk_context_plugin(ctx[1]), gllmk_status_string(st[1]));
}

static void run_op(struct fuzz_in *in, const struct op *op)
{
	gllmk_tensor t[N_TENSORS][2];
	struct call a[2] = {{.c = ctx[0], .uniform = uniform}, {.c = ctx[1], .uniform = uniform}};
	struct fuzz_params p[2];
	gllmk_status st[2];
	int cheap = 1;

	for (int i = 0; i < op->n_tensors; i++) {
		const gllmk_tensor *v[2];

		cheap &= decode_tensor(in, t[i], v);
		a[0].t[i] = v[0];
		a[1].t[i] = v[1];
	}
	fuzz_bytes(in, &p[0], sizeof(p[0]));
	p[1] = p[0];
	if (!cheap)
		return;
	for (int c = 0; c < 2; c++) {
		a[c].p = &p[c];
		st[c] = op->call(&a[c]);
		check_status(op->name, c, st[c]);
	}
	check_agree(op->name, st);
}

static gllmk_buffer *pick(int c, uint8_t b)
{
	return bufs[c][b % (N_BUFS + 1)];
}

/* write, read, copy, wrap: the offsets and sizes are fuzzed, the host side
 * always large enough for any size the buffer could accept. */
static void run_buffer_op(struct fuzz_in *in, uint8_t kind)
{
	uint8_t b0 = fuzz_u8(in), b1 = fuzz_u8(in);
	uint64_t off0 = fuzz_u16(in), off1 = fuzz_u16(in), size = fuzz_u16(in);
	gllmk_status st[2];
	const char *fn;

	if (b0 & 0x80)
		size = UINT64_MAX - (size & 0xff); /* offset + size wraps */
	for (int c = 0; c < 2; c++) {
		switch (kind % 4) {
		case 0: {
			size_t n = in->n < MAX_BUF ? in->n : MAX_BUF;

			fn = "gllmk_buffer_write";
			memset(host, 0, MAX_BUF);
			memcpy(host, in->p, n);
			st[c] = gllmk_buffer_write(pick(c, b0), off0, host, size);
			break;
		}
		case 1:
			fn = "gllmk_buffer_read";
			st[c] = gllmk_buffer_read(pick(c, b0), off0, host, size);
			break;
		case 2:
			fn = "gllmk_buffer_copy";
			/* b1 & 4: a source from the other context */
			st[c] = gllmk_buffer_copy(pick(c, b0), off0, pick(b1 & 4 ? !c : c, b1), off1, size);
			break;
		default:
			fn = "gllmk_buffer_wrap";
			gllmk_buffer_free(bufs[c][N_BUFS]);
			bufs[c][N_BUFS] = NULL;
			st[c] = gllmk_buffer_wrap(ctx[c], wrap_mem[c] + (off0 & 0xff),
						  size > MAX_BUF - 256 ? MAX_BUF - 256 : size, &bufs[c][N_BUFS]);
			if (st[c] == GLLMK_E_UNSUPPORTED)
				st[c] = GLLMK_OK; /* the API allows it; nothing to compare */
			break;
		}
		check_status(fn, c, st[c]);
	}
	check_agree(fn, st);
	if (kind % 4 == 0)
		in->p += in->n < 64 ? in->n : 64, in->n -= in->n < 64 ? in->n : 64;
}

/* Buffer contents: small integers (valid ids for most tables) or floats. */
static void fill(uint8_t *dst, size_t n, uint8_t how)
{
	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t h = (uint32_t)(i * 2654435761u) ^ how;
		float f = (float)((int)(h >> 8 & 0xff) - 128) / 32.0f;

		if (how & 1)
			memcpy(dst + i, &(int32_t){(int32_t)(h >> 16 & 7)}, 4);
		else
			memcpy(dst + i, &f, 4);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_contexts(ctx);
	for (size_t i = 0; i < sizeof(uniform) / sizeof(uniform[0]); i++)
		uniform[i] = (float)i / (float)(sizeof(uniform) / sizeof(uniform[0]));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	int n_calls = 0;

	for (int i = 0; i < N_BUFS; i++) {
		uint64_t bytes = 4 + ((fuzz_u16(&in) % (MAX_BUF - 4)) & ~(uint64_t)3);
		uint8_t how = fuzz_u8(&in);

		fill(host, bytes, how);
		for (int c = 0; c < 2; c++) {
			FUZZ_CHECK(gllmk_buffer_alloc(ctx[c], bytes, &bufs[c][i]) == GLLMK_OK, "buffer_alloc(%llu): %s",
				   (unsigned long long)bytes, gllmk_last_error());
			FUZZ_CHECK(gllmk_buffer_write(bufs[c][i], 0, host, bytes) == GLLMK_OK, "buffer_write: %s",
				   gllmk_last_error());
		}
	}
	while (fuzz_more(&in) && n_calls++ < 16) {
		uint8_t k = fuzz_u8(&in);

		if (k >= 0xf0)
			run_buffer_op(&in, k);
		else
			run_op(&in, &ops[k % N_OPS]);
	}
	for (int c = 0; c < 2; c++) {
		FUZZ_CHECK(gllmk_sync(ctx[c]) == GLLMK_OK, "gllmk_sync: %s", gllmk_last_error());
		for (int i = 0; i <= N_BUFS; i++) {
			gllmk_buffer_free(bufs[c][i]);
			bufs[c][i] = NULL;
		}
	}
	return 0;
}
