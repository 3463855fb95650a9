#!/usr/bin/env python3
"""Writes a tiny random GGUF model (llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3 or gpt-oss) for gllmk-run.

Run it with build-venv/bin/python (scripts/install-deps makes that venv with numpy and
gguf). The weights are random but shaped like a real model's: matrices normal with
std 1/sqrt(fan_in), so the residual stream stays O(1) through the layers, norms near 1,
qwen2 biases small. Float and 32-element block types of ABI 1.0 are encoded with the
gguf package's own quantizers; the K-quants, IQ4_NL/IQ4_XS and the ten formats of ABI
1.1 (i-quants, ternary, MXFP4), most of which the package can only decode, get random
block bytes whose scales are set to sane values (SPEC/QUANT.md gives where they sit),
then checked with the package's decoder. Random bytes reach every code of a format
(every grid entry, sign pattern and sub-scale), which a quantizer of normal weights
would not. The vocabulary is SentencePiece-like (the metadata a runtime prints), never
used to tokenize.

Mixtures of experts: --arch qwen3moe, or --arch llama --experts E (Mixtral's layout):
a router ffn_gate_inp [E, dim] (kept in F32, as llama.cpp's quantizer keeps it) and
expert stacks ffn_{gate,up}_exps [E, expert_ffn, dim], ffn_down_exps [E, dim, expert_ffn]
in the matrices' type. The router's weights are large (std 4/sqrt(dim)) so that a
token's k-th and (k+1)-th experts are far apart in probability: a runtime whose
activations differ from the reference's by a quantization step still picks the
same experts (a near tie would make the two disagree by O(1) for that token).

Gemma 2 (--arch gemma2): post-attention and post-FFN norms, the soft-caps and the
sliding window in the metadata (--attn-softcap, --final-softcap, --swa; small values
make them bite at a tiny model's scale), norm weights near 1 as llama.cpp's converter
writes them (HF's 1 + w already added), embeddings of std 1/sqrt(dim), which the
runtime scales by sqrt(dim). Gemma 3 (--arch gemma3): the same without the score
soft-cap, with q/k norms; --swa 0 writes no window (all layers global), and the final
soft-cap only when --final-softcap is given.

Phi-3 (--arch phi3): attn_qkv [q + k + v, dim] and ffn_up [2·ffn, dim] (gate rows
first) fused as llama.cpp's converter writes them; --longrope ORIG writes LongRoPE's
rope_factors_long / rope_factors_short (random, long ones large), the original
context length ORIG and the converter's rope.scaling.attn_factor,
sqrt(1 + ln(ctx / ORIG) / ln(ORIG)) (1 when ctx <= ORIG).

gpt-oss (--arch gpt-oss): q/k/v/output biases, per-head attention sinks
(attn_sinks.weight, F32, std 1 so they weigh against a tiny model's scores), the
window (--swa, default 128) on even layers, post_attention_norm as the FFN's norm,
a router with a bias, and experts (default 8, 2 a token, --expert-ffn default ffn)
in --expert-dtype (default MXFP4, as the released models ship them) with F32
biases [E, rows]. The experts' gate and up rows are large (std 3/sqrt(dim), down
1/(4·sqrt(ffn))) so that SwiGLU-OAI's clamps at 7 bite on some elements.

--dtype mixed cycles through the ABI 1.0 types, --dtype mixed-1.1 through the ten
of ABI 1.1 (one model that meets each of them in the matmuls, the experts and the
embeddings).

Usage: make_model.py --arch llama --dtype Q4_K --out m.gguf [--verbose]
"""
import argparse
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as Q
from gguf import quants

DTYPES_1_0 = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K",
              "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"]
DTYPES_1_1 = ["IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M",
              "TQ1_0", "TQ2_0", "MXFP4"]
DTYPES = DTYPES_1_0 + DTYPES_1_1
MIXED = {"mixed": DTYPES_1_0, "mixed-1.1": DTYPES_1_1}  # what --dtype mixed* cycles through
ARCHS = ("llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3", "gpt-oss")
GEMMA = ("gemma2", "gemma3")
QK_NORM = ("qwen3", "qwen3moe", "gemma3")
ROUTER_STD = 4.0  # times 1/sqrt(dim): see the module's doc
OAI_GATE_STD, OAI_DOWN_STD = 3.0, 0.25  # gpt-oss experts: times 1/sqrt(fan_in), see the module's doc


def set_f16(blocks, offset, values):
    """Writes one f16 per block at byte `offset` (little-endian, as GGUF is)."""
    h = np.asarray(values, dtype="<f2").reshape(-1, 1).view(np.uint8)
    blocks[:, offset:offset + 2] = h


def f16_at(offset):
    return lambda blocks, values: set_f16(blocks, offset, values)


def set_iq1_m_d(blocks, values):
    """IQ1_M has no d field: its f16 d is split over the top 4 bits of the four u16
    scale words at bytes 48..55 (bits 0-3 of d in word 0, ..., bits 12-15 in word 3)."""
    d = np.asarray(values, dtype="<f2").view("<u2").astype(np.uint16).reshape(-1, 1)
    words = blocks[:, 48:56].copy().view("<u2")
    nibbles = (d >> np.array([0, 4, 8, 12], dtype=np.uint16)) & 0xF
    words[:] = (words & 0x0FFF) | (nibbles << 12)
    blocks[:, 48:56] = words.view(np.uint8)


def set_mxfp4_e(blocks, values):
    """MXFP4's scale: an E8M0 byte at offset 0, 2^(e - 128) times ggml's doubled E2M1
    codes (gguf's e8m0_to_fp32_half). A wanted factor is rounded to the nearest power
    of two: e = 128 + round(log2(value)), near 122 for this script's weights."""
    e = 128 + np.rint(np.log2(np.asarray(values, dtype=np.float64)))
    blocks[:, 0] = np.clip(e, 1, 254).astype(np.uint8)


# Where a block's scale `d` and its min scale `dmin` (None: the format has no min) are
# written, SPEC/QUANT.md's layouts: the fields random bytes must not fill, or a block
# could hold inf/NaN or a scale of 1e4. f16 fields by byte offset (TQ1_0/TQ2_0's at
# the block's end); IQ1_M's and MXFP4's by the setters above.
SCALE_FIELDS = {
    Q.Q2_K: (f16_at(80), f16_at(82)), Q.Q3_K: (f16_at(108), None), Q.Q4_K: (f16_at(0), f16_at(2)),
    Q.Q5_K: (f16_at(0), f16_at(2)), Q.Q6_K: (f16_at(208), None), Q.IQ4_NL: (f16_at(0), None),
    Q.IQ4_XS: (f16_at(0), None),
    **{Q[n]: (f16_at(0), None) for n in ("IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S")},
    Q.IQ1_M: (set_iq1_m_d, None), Q.TQ1_0: (f16_at(52), None), Q.TQ2_0: (f16_at(64), None),
    Q.MXFP4: (set_mxfp4_e, None),
}


def block_elems(qtype):
    return gguf.GGML_QUANT_SIZES[qtype][0]


def rms(a):
    return float(np.sqrt(np.mean(np.square(a, dtype=np.float64))))


def random_blocks(rows, k, qtype, std, rng):
    """Random block bytes of a SCALE_FIELDS format, scaled to rms `std`.

    Every quant, sub-scale and min is random; only the super-scales are chosen.
    Decoding is linear in (d, dmin), so one decode at unit scales tells the factor
    that gives the wanted rms (MXFP4's power-of-two scales round it: within sqrt(2)).
    Formats with a min get, per block, the dmin that makes the block's mean zero:
    random mins alone would give every weight row a large common offset, a rank-one
    part that makes activations drift.
    """
    n_blocks = rows * k // block_elems(qtype)
    raw = rng.integers(0, 256, (n_blocks, gguf.GGML_QUANT_SIZES[qtype][1]), dtype=np.uint8)
    set_d, set_dmin = SCALE_FIELDS[qtype]

    def encode(d, dmin):
        b = raw.copy()
        set_d(b, d)
        if set_dmin is not None:
            set_dmin(b, dmin)
        return b

    def decode(b):
        return quants.dequantize(b, qtype).astype(np.float64)

    d = rng.uniform(0.5, 1.5, n_blocks)
    dmin = np.zeros(n_blocks)
    if set_dmin is not None:
        scaled = decode(encode(d, 0.0)).sum(axis=1)  # Σ d·sc·q per block
        mins = -decode(encode(0.0, 1.0)).sum(axis=1)  # Σ m per block (dmin = 1)
        dmin = np.divide(scaled, mins, out=np.zeros(n_blocks), where=mins > 0)
    factor = std / rms(decode(encode(d, dmin)))
    blocks = encode(d * factor, dmin * factor)
    check_decoded(blocks, qtype, std)
    return blocks.reshape(rows, -1)


def check_decoded(blocks, qtype, std):
    y = quants.dequantize(blocks, qtype)
    if not np.all(np.isfinite(y)) or not 0.5 * std < rms(y) < 2 * std:
        raise SystemExit(f"make_model: {qtype.name} blocks decode badly (rms {rms(y)}, want {std})")


def encode_matrix(w, qtype, rng):
    """`w` [rows, k] float32 to what GGUFWriter.add_tensor takes, and its raw dtype."""
    if qtype == Q.F32:
        return w, None
    if qtype == Q.F16:
        return w.astype(np.float16), None
    if qtype in SCALE_FIELDS:
        return random_blocks(*w.shape, qtype, rms(w), rng), qtype
    return quants.quantize(w, qtype), qtype


class DtypeChooser:
    """The weight type of each matrix: one type, or `mixed` / `mixed-1.1`: the next
    type of MIXED[name] that divides the row length, cycling, so every format meets
    every role."""

    def __init__(self, name):
        self.cycle = MIXED.get(name)
        self.fixed = None if self.cycle else Q[name]
        self.next = 0

    def __call__(self, k):
        if not self.cycle:
            if k % block_elems(self.fixed):
                raise SystemExit(f"make_model: {self.fixed.name} needs rows of a multiple of "
                                 f"{block_elems(self.fixed)}, a matrix has {k}")
            return self.fixed
        for _ in self.cycle:
            qtype = Q[self.cycle[self.next % len(self.cycle)]]
            self.next += 1
            if k % block_elems(qtype) == 0:
                return qtype
        raise SystemExit(f"make_model: no type fits rows of {k}")


def vocabulary(n):
    """SentencePiece-like pieces: <unk> <s> </s>, the 256 byte tokens, then words."""
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    words = ["the", "of", "and", "to", "a", "in", "is", "that", "it", "for", "was", "on"]
    i = 0
    while len(pieces) < n:
        pieces.append("\u2581" + (words[i] if i < len(words) else f"w{i}"))
        types.append(gguf.TokenType.NORMAL)
        i += 1
    scores = [0.0] * 259 + [-float(j) for j in range(n - 259)]
    return pieces[:n], scores[:n], types[:n]


def add_metadata(w, a):
    w.add_name(f"gllmk tiny {a.arch} {a.dtype}")
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.dim)
    w.add_feed_forward_length(a.ffn)
    w.add_block_count(a.layers)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_key_length(a.head_dim)
    w.add_value_length(a.head_dim)
    w.add_layer_norm_rms_eps(a.eps)
    w.add_rope_freq_base(a.rope_base)
    w.add_rope_dimension_count(a.head_dim)
    if a.experts:
        w.add_expert_count(a.experts)
        w.add_expert_used_count(a.experts_used)
        if a.arch in ("qwen3moe", "gpt-oss"):
            w.add_expert_feed_forward_length(a.expert_ffn)
    if a.yarn:
        # YaRN as llama.cpp reads it (SPEC/RUN.md): factor, training context, yarn_* keys
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(a.yarn)
        w.add_rope_scaling_orig_ctx_len(a.yarn_orig_ctx)
        if a.yarn_attn_factor is not None:
            w.add_rope_scaling_yarn_attn_factor(a.yarn_attn_factor)
        if a.yarn_beta_fast is not None:
            w.add_rope_scaling_yarn_beta_fast(a.yarn_beta_fast)
    elif a.longrope:  # as convert_hf_to_gguf.py's Phi-3: no type, the original context and attn_factor
        w.add_rope_scaling_orig_ctx_len(a.longrope)
        scale = a.ctx / a.longrope
        w.add_rope_scaling_attn_factors(float(np.sqrt(1 + np.log(scale) / np.log(a.longrope))) if scale > 1 else 1.0)
    elif a.rope_scale:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(a.rope_scale)
    else:
        w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    if a.arch == "gemma2":
        w.add_sliding_window(a.swa)
        w.add_attn_logit_softcapping(a.attn_softcap)
        w.add_final_logit_softcapping(30.0 if a.final_softcap is None else a.final_softcap)
    if a.arch == "gpt-oss":
        w.add_sliding_window(a.swa)
    if a.arch == "gemma3":
        if a.swa:
            w.add_sliding_window(a.swa)
        if a.final_softcap is not None:
            w.add_final_logit_softcapping(a.final_softcap)
    pieces, scores, types = vocabulary(a.vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(pieces)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def llama3_rope_freqs(base, n_rot, factor=8.0, low=1.0, high=4.0, orig=8192):
    """Llama 3.1's rope_freqs.weight, as convert_hf_to_gguf.py writes it."""
    freqs = base ** (-np.arange(0, n_rot, 2, dtype=np.float64) / n_rot)
    wavelen = 2 * np.pi / freqs
    smooth = (orig / wavelen - low) / (high - low)
    ff = np.where(wavelen < orig / high, 1.0,
                  np.where(wavelen > orig / low, factor, 1.0 / ((1 - smooth) / factor + smooth)))
    return ff.astype(np.float32)


def rope_freqs(a, rng):
    """llama3: the formula (at a tiny model's positions it barely moves the angles);
    random: any positive factor per pair (LongRoPE-like), which moves them all."""
    if a.rope_freqs == "llama3":
        return llama3_rope_freqs(a.rope_base, a.head_dim)
    return rng.uniform(0.25, 4.0, a.head_dim // 2).astype(np.float32)


def add_tensors(w, a, rng):
    choose = DtypeChooser(a.dtype)
    embd_choose = choose if a.embd_dtype == a.dtype else DtypeChooser(a.embd_dtype)
    exp_choose = choose if a.expert_dtype == a.dtype else DtypeChooser(a.expert_dtype)

    def matrix(name, rows, k, std=None, chooser=choose, planes=0):
        m = rng.standard_normal((max(planes, 1) * rows, k), dtype=np.float32)
        m *= std if std is not None else 1.0 / np.sqrt(k)
        data, raw = encode_matrix(m, chooser(k), rng)
        if planes:  # a stack of experts' matrices, [E, rows, ...]
            data = data.reshape(planes, rows, -1)
        w.add_tensor(name, data, raw_dtype=raw)

    def ffn(p):
        if a.arch == "phi3":
            matrix(p + "ffn_up.weight", 2 * a.ffn, a.dim)
            matrix(p + "ffn_down.weight", a.dim, a.ffn)
            return
        if not a.experts:
            matrix(p + "ffn_gate.weight", a.ffn, a.dim)
            matrix(p + "ffn_up.weight", a.ffn, a.dim)
            matrix(p + "ffn_down.weight", a.dim, a.ffn)
            return
        f = a.expert_ffn
        matrix(p + "ffn_gate_inp.weight", a.experts, a.dim, std=ROUTER_STD / np.sqrt(a.dim),
               chooser=lambda k: Q.F32)
        if a.arch != "gpt-oss":
            matrix(p + "ffn_gate_exps.weight", f, a.dim, planes=a.experts, chooser=exp_choose)
            matrix(p + "ffn_up_exps.weight", f, a.dim, planes=a.experts, chooser=exp_choose)
            matrix(p + "ffn_down_exps.weight", a.dim, f, planes=a.experts, chooser=exp_choose)
            return
        vector(p + "ffn_gate_inp.bias", a.experts, 0.0, 0.5)
        big, small = OAI_GATE_STD / np.sqrt(a.dim), OAI_DOWN_STD / np.sqrt(f)
        matrix(p + "ffn_gate_exps.weight", f, a.dim, std=big, planes=a.experts, chooser=exp_choose)
        matrix(p + "ffn_up_exps.weight", f, a.dim, std=big, planes=a.experts, chooser=exp_choose)
        matrix(p + "ffn_down_exps.weight", a.dim, f, std=small, planes=a.experts, chooser=exp_choose)
        for n, rows in (("gate", f), ("up", f), ("down", a.dim)):
            w.add_tensor(p + f"ffn_{n}_exps.bias", (0.2 * rng.standard_normal((a.experts, rows))).astype(np.float32))

    def vector(name, n, mean, std):
        w.add_tensor(name, (mean + std * rng.standard_normal(n)).astype(np.float32))

    q_dim, kv_dim = a.heads * a.head_dim, a.kv_heads * a.head_dim
    # Embedding rows are the residual stream's start: O(1), like a layer's output.
    # (Gemma's are scaled by sqrt(dim) on the way in: std 1/sqrt(dim) here.)
    matrix("token_embd.weight", a.vocab, a.dim, std=1.0 / np.sqrt(a.dim) if a.arch in GEMMA else 1.0,
           chooser=embd_choose)
    for i in range(a.layers):
        p = f"blk.{i}."
        vector(p + "attn_norm.weight", a.dim, 1.0, 0.1)
        if a.arch == "phi3":
            matrix(p + "attn_qkv.weight", q_dim + 2 * kv_dim, a.dim)
        else:
            matrix(p + "attn_q.weight", q_dim, a.dim)
            matrix(p + "attn_k.weight", kv_dim, a.dim)
            matrix(p + "attn_v.weight", kv_dim, a.dim)
        if a.arch in ("qwen2", "gpt-oss"):
            for n, rows in (("q", q_dim), ("k", kv_dim), ("v", kv_dim)):
                vector(p + f"attn_{n}.bias", rows, 0.0, 0.2)
        if a.arch in QK_NORM:
            vector(p + "attn_q_norm.weight", a.head_dim, 1.0, 0.1)
            vector(p + "attn_k_norm.weight", a.head_dim, 1.0, 0.1)
        matrix(p + "attn_output.weight", a.dim, q_dim)
        if a.arch == "gpt-oss":
            vector(p + "attn_output.bias", a.dim, 0.0, 0.2)
            vector(p + "attn_sinks.weight", a.heads, 0.0, 1.0)
        if a.arch in GEMMA + ("gpt-oss",):  # gpt-oss: the FFN's norm, no ffn_norm
            vector(p + "post_attention_norm.weight", a.dim, 1.0, 0.1)
        if a.arch != "gpt-oss":
            vector(p + "ffn_norm.weight", a.dim, 1.0, 0.1)
        ffn(p)
        if a.arch in GEMMA:
            vector(p + "post_ffw_norm.weight", a.dim, 1.0, 0.1)
    vector("output_norm.weight", a.dim, 1.0, 0.1)
    if a.rope_freqs:
        w.add_tensor("rope_freqs.weight", rope_freqs(a, rng))
    if a.longrope:  # long factors stretch the low frequencies, short ones barely move
        w.add_tensor("rope_factors_long.weight", rng.uniform(1.0, 16.0, a.head_dim // 2).astype(np.float32))
        w.add_tensor("rope_factors_short.weight", rng.uniform(0.5, 2.0, a.head_dim // 2).astype(np.float32))
    if not a.tied:
        matrix("output.weight", a.vocab, a.dim)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--arch", choices=ARCHS, default="llama")
    p.add_argument("--dtype", choices=DTYPES + list(MIXED), default="F32",
                   help="type of the 2-D weight matrices")
    p.add_argument("--embd-dtype", choices=DTYPES + list(MIXED), help="default: --dtype")
    p.add_argument("--expert-dtype", choices=DTYPES + list(MIXED),
                   help="type of the expert stacks (default: MXFP4 for gpt-oss, else --dtype)")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--ffn", type=int, default=512)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2, help="1 = MQA")
    p.add_argument("--head-dim", type=int, help="default: dim / heads")
    p.add_argument("--vocab", type=int, default=300)
    p.add_argument("--ctx", type=int, default=2048)
    p.add_argument("--eps", type=float, help="rms_norm epsilon (llama 1e-5, qwen 1e-6)")
    p.add_argument("--rope-base", type=float, help="llama 10000, qwen 1e6")
    p.add_argument("--rope-scale", type=float, default=0,
                   help="linear rope scaling factor (0: none); freq_scale = 1/factor")
    p.add_argument("--rope-freqs", choices=["llama3", "random"],
                   help="write rope_freqs.weight (Llama 3.1+ frequency factors)")
    p.add_argument("--yarn", type=float, default=0,
                   help="YaRN rope scaling factor (0: none); freq_scale = 1/factor")
    p.add_argument("--yarn-orig-ctx", type=int, default=256,
                   help="YaRN: rope.scaling.original_context_length")
    p.add_argument("--yarn-attn-factor", type=float, help="YaRN: rope.scaling.yarn_attn_factor")
    p.add_argument("--yarn-beta-fast", type=float, help="YaRN: rope.scaling.yarn_beta_fast")
    p.add_argument("--tied", action="store_true", help="no output.weight")
    p.add_argument("--longrope", type=int, default=0,
                   help="phi3: LongRoPE factors with this original context length (0: none)")
    p.add_argument("--experts", type=int, help="experts per layer (llama: 0 = dense; qwen3moe: default 8)")
    p.add_argument("--experts-used", type=int, default=2, help="experts a token uses")
    p.add_argument("--expert-ffn", type=int, help="an expert's ffn width (default: ffn / 2 for qwen3moe, ffn for llama)")
    p.add_argument("--swa", type=int, help="gemma2/3, gpt-oss: attention.sliding_window "
                   "(default 4096, gpt-oss 128; gemma3: 0 = none)")
    p.add_argument("--attn-softcap", type=float, default=50.0, help="gemma2: attn_logit_softcapping")
    p.add_argument("--final-softcap", type=float,
                   help="gemma2 (default 30) / gemma3 (default: no key): final_logit_softcapping")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args(argv)
    a.embd_dtype = a.embd_dtype or a.dtype
    a.expert_dtype = a.expert_dtype or ("MXFP4" if a.arch == "gpt-oss" else a.dtype)
    if a.swa is None:
        a.swa = 128 if a.arch == "gpt-oss" else 4096
    a.head_dim = a.head_dim or a.dim // a.heads
    a.eps = a.eps if a.eps is not None else (1e-5 if a.arch in ("llama", "phi3", "gpt-oss") else 1e-6)
    a.rope_base = a.rope_base or (1e4 if a.arch in ("llama", "gemma2", "phi3") else 1.5e5 if a.arch == "gpt-oss"
                                  else 1e6)  # gemma3: global layers
    moe_only = ("qwen3moe", "gpt-oss")
    if a.experts is None:
        a.experts = 8 if a.arch in moe_only else 0
    if a.arch in ("qwen2", "qwen3", "phi3") + GEMMA and a.experts or a.arch in moe_only and not a.experts:
        p.error(f"{a.arch}: --experts must be {'0' if a.arch not in moe_only else '> 0'}")
    a.expert_ffn = a.expert_ffn or (a.ffn // 2 if a.arch == "qwen3moe" else a.ffn)
    if a.experts and not 1 <= a.experts_used <= a.experts:
        p.error("--experts-used must be in 1..--experts")
    if a.heads % a.kv_heads or a.head_dim % 2 or a.vocab < 16:
        p.error("heads must be a multiple of kv-heads, head-dim even, vocab >= 16")
    return a


def make_model(argv):
    a = parse_args(argv)
    rng = np.random.default_rng(a.seed)
    w = gguf.GGUFWriter(a.out, a.arch)
    add_metadata(w, a)
    add_tensors(w, a, rng)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    if a.verbose:
        print(f"make_model: wrote {a.out}: {a.arch}, {a.dtype} weights, {a.embd_dtype} "
              f"embeddings, {a.layers} layers, dim {a.dim}, vocab {a.vocab}")


if __name__ == "__main__":
    make_model(sys.argv[1:])
