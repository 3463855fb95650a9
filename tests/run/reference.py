#!/usr/bin/env python3
"""The end-to-end reference: SPEC/RUN.md's forward pass in float64 numpy.

Independent of gllmk's C code on purpose: weights come from the gguf package's
reader and decoders (gguf.GGUFReader, gguf.quants.dequantize, which llama.cpp
maintains against ggml), and every operator is written here from SPEC/RUN.md and
SPEC/OPERATORS.md. A bug shared by gllmk and this file would need the same wrong
reading of the SPEC twice.

    reference.py MODEL --ids 1,2,3 [--out logits.f32]   logits of every position
    reference.py --self-test                           checks of the reference itself
"""
import argparse
import dataclasses
import os
import sys
from dataclasses import dataclass

import numpy as np

import gguf
from gguf import quants

NEOX = {"llama": False, "qwen2": True, "qwen3": True, "qwen3moe": True, "gemma2": True, "gemma3": True, "phi3": True,
        "gpt-oss": True}  # SPEC/RUN.md's architecture table


@dataclass
class HParams:
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    head_dim: int
    head_dim_v: int
    n_rot: int
    eps: float
    rope_base: float
    freq_scale: float
    # YaRN (rope.scaling.type yarn), SPEC/RUN.md; ext_factor 0 otherwise
    ext_factor: float = 0.0
    attn_factor: float = 1.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    n_ctx_orig: int = 0
    n_expert_used: int = 0  # mixtures of experts: experts per token
    # Gemma 2 (SPEC/RUN.md): score scale, soft-caps (0: off), window on layers
    # il % swa_pattern < swa_pattern - 1 (0: none)
    attn_scale: float = 0.0
    attn_softcap: float = 0.0
    final_softcap: float = 0.0
    n_swa: int = 0
    swa_pattern: int = 0
    rope_base_swa: float = 0.0  # gemma3: local layers' rope base (unscaled); 0: as global
    n_ctx_orig_longrope: int = 0  # phi3: rope_factors_long beyond this context, short within


class Model:
    """A GGUF model's hyper-parameters and weights, decoded to float64."""

    def __init__(self, path):
        r = gguf.GGUFReader(path)
        self.fields = {name: f for name, f in r.fields.items()}
        self.arch = self.value("general.architecture")
        if self.arch not in NEOX:
            raise ValueError(f"reference: architecture {self.arch} is not in SPEC/RUN.md")
        self.neox = NEOX[self.arch]
        self.tensors = {t.name: t for t in r.tensors}
        self.hp = self.hparams()
        self.weights = {name: self.decode(t) for name, t in self.tensors.items()}
        self.encode_activations = None  # see matmul()
        self.n_ctx = 0  # gllmk-run's context (Phi-3 LongRoPE picks its factors by it), see logits()

    def value(self, key, default=None):
        f = self.fields.get(key)
        return default if f is None else f.contents()

    def hparams(self):
        a = self.arch + "."
        n_embd = int(self.value(a + "embedding_length"))
        n_head = int(self.value(a + "attention.head_count"))
        head_dim = int(self.value(a + "attention.key_length", n_embd // n_head))
        scaling = self.value(a + "rope.scaling.type", "none")
        if scaling not in ("none", "linear", "yarn"):
            raise ValueError(f"reference: rope scaling {scaling} is not in SPEC/RUN.md")
        factor = float(self.value(a + "rope.scaling.factor", 1.0)) if scaling != "none" else 1.0
        yarn = {}
        if scaling == "yarn":
            yarn = dict(
                ext_factor=float(self.value(a + "rope.scaling.yarn_ext_factor", 1.0)),
                attn_factor=float(self.value(a + "rope.scaling.yarn_attn_factor", 1.0)),
                beta_fast=float(self.value(a + "rope.scaling.yarn_beta_fast", 32.0)),
                beta_slow=float(self.value(a + "rope.scaling.yarn_beta_slow", 1.0)),
                n_ctx_orig=int(self.value(a + "rope.scaling.original_context_length",
                                          self.value(a + "context_length", 2048))),
            )
        gemma = {}
        if self.arch == "gemma2":
            n_layer = int(self.value(a + "block_count"))
            # llama.cpp: 1/sqrt(key_length), but 1/sqrt(embedding / heads) for the 27B (46 layers)
            gemma = dict(
                attn_scale=1 / np.sqrt(n_embd // n_head if n_layer == 46 else head_dim),
                attn_softcap=float(self.value(a + "attn_logit_softcapping", 50.0)),
                final_softcap=float(self.value(a + "final_logit_softcapping", 30.0)),
                n_swa=int(self.value(a + "attention.sliding_window", 4096)),
                swa_pattern=2,
            )
        if self.arch == "gemma3":
            n_layer = int(self.value(a + "block_count"))
            # llama.cpp: no score cap; the window (when the key is > 0) on 5 layers of 6,
            # whose rope is base 10000 unscaled; the final cap only when the key is there
            gemma = dict(
                attn_scale=1 / np.sqrt(n_embd // n_head if n_layer == 62 else head_dim),
                final_softcap=float(self.value(a + "final_logit_softcapping", 0.0)),
                n_swa=int(self.value(a + "attention.sliding_window", 0)),
                swa_pattern=6,
                rope_base_swa=10000.0,
            )
        if self.arch == "gpt-oss":
            # llama.cpp: the window (required key) on even layers; scores 1/sqrt(head size)
            gemma = dict(n_swa=int(self.value(a + "attention.sliding_window")), swa_pattern=2)
        # rope.scaling.attn_factor multiplies rope's magnitude (llama.cpp, every arch)
        attn = float(self.value(a + "rope.scaling.attn_factor", 1.0))
        yarn["attn_factor"] = yarn.get("attn_factor", 1.0) * attn
        if self.arch == "phi3":
            gemma["n_ctx_orig_longrope"] = int(self.value(a + "rope.scaling.original_context_length",
                                                          self.value(a + "context_length", 2048)))
        return HParams(
            **gemma,
            n_layer=int(self.value(a + "block_count")),
            n_embd=n_embd,
            n_head=n_head,
            n_head_kv=int(self.value(a + "attention.head_count_kv", n_head)),
            head_dim=head_dim,
            head_dim_v=int(self.value(a + "attention.value_length", head_dim)),
            n_rot=int(self.value(a + "rope.dimension_count", head_dim)),
            eps=float(self.value(a + "attention.layer_norm_rms_epsilon")),
            rope_base=float(self.value(a + "rope.freq_base", 10000.0)),
            freq_scale=1.0 / factor,
            **yarn,
            n_expert_used=int(self.value(a + "expert_used_count", 0)),
        )

    @staticmethod
    def decode(t):
        # GGUF shapes are ggml's ne[] (ne[0], the row length, first); numpy's order is
        # the reverse, so a matrix reads as [rows = outputs, row length = inputs].
        shape = tuple(int(n) for n in reversed(t.shape))
        return np.asarray(quants.dequantize(t.data, t.tensor_type), np.float64).reshape(shape)

    def w(self, name):
        return self.weights.get(name)

    def rope_factors(self):
        """rope_freqs, or Phi-3's LongRoPE factors as llama.cpp picks them: long when
        the context exceeds the original one."""
        if self.arch == "phi3":
            long = self.n_ctx > self.hp.n_ctx_orig_longrope
            return self.w("rope_factors_long.weight" if long else "rope_factors_short.weight")
        return self.w("rope_freqs.weight")

    @property
    def output_name(self):
        # absent output.weight: tied to the embeddings (SPEC/RUN.md)
        return "output" if "output.weight" in self.weights else "token_embd"

    @property
    def n_vocab(self):
        return self.weights["token_embd.weight"].shape[0]


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def yarn_corr_dims(hp):
    """YaRN's correction range over pairs, SPEC/OPERATORS.md "rope_ext": ggml's
    expression evaluated in float32 (it decides which pairs ramp), floor / ceil."""
    f32 = np.float32

    def corr(beta):
        return f32(hp.n_rot) * np.log(f32(hp.n_ctx_orig) / (f32(beta) * f32(2) * f32(np.pi))) \
            / (f32(2) * np.log(f32(hp.rope_base)))
    return max(0.0, float(np.floor(corr(hp.beta_fast)))), min(hp.n_rot - 1.0, float(np.ceil(corr(hp.beta_slow))))


def rope(x, pos, hp, neox, freq_factors=None):
    """SPEC/OPERATORS.md's rope_ext on x [T, H, D]: pairs (2i, 2i+1), or (i, i + n_rot/2)
    for neox; dims >= n_rot copied; freq_factors (rope_freqs.weight) divide pair i's
    angle; YaRN mixes the interpolated and extrapolated angles and scales cos and sin.
    Applied to the weights as stored: GGUF's llama Q/K are already permuted for the
    pairwise convention, so nothing is undone here."""
    half = hp.n_rot // 2
    i = np.arange(half)
    theta_e = pos[:, None] * hp.rope_base ** (-2.0 * i / hp.n_rot)
    if freq_factors is not None:
        theta_e = theta_e / freq_factors
    theta, m = hp.freq_scale * theta_e, 1.0
    if hp.ext_factor != 0.0:
        lo, hi = yarn_corr_dims(hp)
        mix = (1.0 - np.clip((i - lo) / max(0.001, hi - lo), 0.0, 1.0)) * hp.ext_factor
        theta = theta * (1.0 - mix) + theta_e * mix
        m = hp.attn_factor * (1.0 + 0.1 * np.log(1.0 / hp.freq_scale))
    elif hp.attn_factor != 1.0:
        m = hp.attn_factor
    cos, sin = m * np.cos(theta)[:, None, :], m * np.sin(theta)[:, None, :]
    ia, ib = (i, i + half) if neox else (2 * i, 2 * i + 1)
    a, b = x[..., ia], x[..., ib]
    y = x.copy()
    y[..., ia] = a * cos - b * sin
    y[..., ib] = a * sin + b * cos
    return y


def attention(q, k, v, q_pos, kv_len, scale=0.0, softcap=0.0, window=0, sinks=None):
    """Causal softmax attention: query at position p sees cache rows 0..p (with a
    window, only rows t > p - window). Scores s·scale (default 1/sqrt(D)), then
    c·tanh(s/c) with softcap c. sinks [Hq] (gpt-oss): one more logit per head in
    the softmax, with no value: the weights of the rows sum to less than 1.
    q [T, Hq, D], k [kv_len, Hkv, D], v [kv_len, Hkv, Dv] -> [T, Hq·Dv]."""
    group = q.shape[1] // k.shape[1]  # query head h reads kv head h // group
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = np.einsum("thd,shd->hts", q, k) * (scale or 1 / np.sqrt(q.shape[2]))
    if softcap:
        s = softcap * np.tanh(s / softcap)
    t = np.arange(kv_len)[None, :]
    s[:, t > q_pos[:, None]] = -np.inf
    if window:
        s[:, t <= q_pos[:, None] - window] = -np.inf
    if sinks is not None:
        sink = np.broadcast_to(np.asarray(sinks, np.float64)[:, None, None], s.shape[:2] + (1,))
        s = np.concatenate([s, sink], axis=-1)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    if sinks is not None:
        s = s[..., :-1]
    return np.einsum("hts,shd->thd", s, v).reshape(q.shape[0], -1)


def encode_q8_0(x):
    """SPEC/OPERATORS.md's q8_0 encoder, decoded: blocks of 32, d = amax/127 as f16,
    q = x/d rounded half away from zero."""
    b = x.reshape(-1, 32).astype(np.float32)
    d = np.abs(b).max(axis=1, keepdims=True) / np.float32(127)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d > 0)
    q = np.trunc(b * inv + np.copysign(np.float32(0.5), b * inv))
    return (q * d.astype(np.float16).astype(np.float64)).reshape(x.shape)


def encode_q8_K(x):
    """SPEC/OPERATORS.md's q8_K encoder, decoded: blocks of 256, v the element of
    largest |x|, iscale = -127/v, q = min(127, x·iscale rounded half to even), d = 1/iscale."""
    b = x.reshape(-1, 256).astype(np.float32)
    v = b[np.arange(len(b)), np.abs(b).argmax(axis=1)][:, None]
    iscale = np.divide(np.float32(-127), v, out=np.zeros_like(v), where=v != 0)
    q = np.minimum(np.rint(b * iscale), 127)
    d = np.divide(np.float32(1), iscale, out=np.zeros_like(iscale), where=iscale != 0)
    return (q * d.astype(np.float64)).reshape(x.shape)


def matmul(x, m, name):
    """x · Wᵀ (+ b): the weight `name.weight` [out, in], its bias if the model has one.
    With m.encode_activations, x is first encoded as a plugin may (SPEC/OPERATORS.md,
    matmul): q8_0 for 32-element block weights, q8_K for 256-element ones."""
    if m.encode_activations:
        x = m.encode_activations(x, m.tensors[name + ".weight"].tensor_type)
    y = x @ m.w(name + ".weight").T
    b = m.w(name + ".bias")
    return y if b is None else y + b


def kv_round(a, kv_type):
    """K or V [T, H, D] as gllmk-run's cache holds them (gllmk_kv_store): f16, or
    ggml's q8_0 / q4_0 blocks along D (gguf's quantize, from the f32 values gllmk
    computes), decoded back."""
    if kv_type == "F16":
        return a.astype(np.float16).astype(np.float64)
    qtype = gguf.GGMLQuantizationType[kv_type]
    rows = a.reshape(-1, a.shape[-1]).astype(np.float32)
    return np.asarray(quants.dequantize(quants.quantize(rows, qtype), qtype), np.float64).reshape(a.shape)


class Cache:
    """The K/V cache. gllmk-run keeps it in f16 by default (SPEC/RUN.md: "convert(k, v)
    to f16"), or q8_0 / q4_0 with --kv-type, so rounding K and V to
    that type is part of the computation being defined, not an approximation of it:
    the reference rounds them too, and everything else stays float64."""

    def __init__(self, hp, kv_type="F16"):
        self.kv_type = kv_type
        self.k = [np.zeros((0, hp.n_head_kv, hp.head_dim)) for _ in range(hp.n_layer)]
        self.v = [np.zeros((0, hp.n_head_kv, hp.head_dim_v)) for _ in range(hp.n_layer)]

    def append(self, layer, k, v):
        self.k[layer] = np.concatenate([self.k[layer], kv_round(k, self.kv_type)])
        self.v[layer] = np.concatenate([self.v[layer], kv_round(v, self.kv_type)])
        return self.k[layer], self.v[layer]


def silu_glu(gate, up):
    return gate / (1 + np.exp(-gate)) * up


def gelu_tanh_glu(gate, up):
    """GEGLU with ggml's gelu (the tanh form)."""
    return 0.5 * gate * (1 + np.tanh(np.sqrt(2 / np.pi) * (gate + 0.044715 * gate ** 3))) * up


def swiglu_oai(gate, up, alpha=1.702, limit=7.0):
    """gpt-oss's SwiGLU: gate clamped above at limit, up to [-limit, limit],
    g·sigmoid(alpha·g)·(u + 1)."""
    g, u = np.minimum(gate, limit), np.clip(up, -limit, limit)
    return g / (1 + np.exp(-alpha * g)) * (u + 1)


def moe_oai(m, p, h):
    """gpt-oss's mixture of experts, per token: router logits h·Wrᵀ + br, the k
    largest logits (ties to the lower index), weights the softmax over those k;
    each expert x·Wᵀ + b for gate, up and down with SwiGLU-OAI between, summed by
    the weights (the down bias inside the sum)."""
    k = m.hp.n_expert_used
    logits = matmul(h, m, p + "ffn_gate_inp")
    chosen = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
    sel = np.take_along_axis(logits, chosen, axis=-1)
    weights = np.exp(sel - sel.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    W = {n: m.w(p + f"ffn_{n}_exps.weight") for n in ("gate", "up", "down")}
    B = {n: m.w(p + f"ffn_{n}_exps.bias") for n in W}
    types = {n: m.tensors[p + f"ffn_{n}_exps.weight"].tensor_type for n in W}
    enc = m.encode_activations or (lambda v, _t: v)
    out = np.zeros_like(h)
    for t in range(h.shape[0]):
        for j in range(k):
            e = chosen[t, j]
            g = enc(h[t], types["gate"]) @ W["gate"][e].T + B["gate"][e]
            u = enc(h[t], types["up"]) @ W["up"][e].T + B["up"][e]
            a = swiglu_oai(g, u)
            out[t] += weights[t, j] * (enc(a, types["down"]) @ W["down"][e].T + B["down"][e])
    return out


def moe(m, p, h):
    """SPEC/RUN.md's mixture of experts (Mixtral, Qwen3-MoE), per token: softmax of
    the router logits over the E experts, the k most probable (ties to the lower
    index), their probabilities renormalized (sum floored at 6.103515625e-5 as
    llama.cpp does), and the weighted sum of those experts' SwiGLU FFNs."""
    k = m.hp.n_expert_used
    logits = matmul(h, m, p + "ffn_gate_inp")
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    chosen = np.argsort(-probs, axis=-1, kind="stable")[:, :k]
    weights = np.take_along_axis(probs, chosen, axis=-1)
    weights /= np.maximum(weights.sum(axis=-1, keepdims=True), 6.103515625e-5)
    experts = {n: m.w(p + f"ffn_{n}_exps.weight") for n in ("gate", "up", "down")}
    types = {n: m.tensors[p + f"ffn_{n}_exps.weight"].tensor_type for n in experts}
    enc = m.encode_activations or (lambda v, _t: v)
    out = np.zeros_like(h)
    for t in range(h.shape[0]):
        for j in range(k):
            e = chosen[t, j]
            a = silu_glu(enc(h[t], types["gate"]) @ experts["gate"][e].T, enc(h[t], types["up"]) @ experts["up"][e].T)
            out[t] += weights[t, j] * (enc(a, types["down"]) @ experts["down"][e].T)
    return out


def layer(m, i, x, pos, cache):
    hp, p, T = m.hp, f"blk.{i}.", x.shape[0]
    h = rms_norm(x, m.w(p + "attn_norm.weight"), hp.eps)
    if m.w(p + "attn_qkv.weight") is not None:  # phi3: q, k, v rows stacked
        nq, nk = hp.n_head * hp.head_dim, hp.n_head_kv * hp.head_dim
        qkv = matmul(h, m, p + "attn_qkv")
        q, k, v = qkv[:, :nq], qkv[:, nq:nq + nk], qkv[:, nq + nk:]
    else:
        q, k, v = matmul(h, m, p + "attn_q"), matmul(h, m, p + "attn_k"), matmul(h, m, p + "attn_v")
    q = q.reshape(T, hp.n_head, hp.head_dim)
    k = k.reshape(T, hp.n_head_kv, hp.head_dim)
    v = v.reshape(T, hp.n_head_kv, hp.head_dim_v)
    if m.w(p + "attn_q_norm.weight") is not None:  # qwen3: per head, before rope
        q = rms_norm(q, m.w(p + "attn_q_norm.weight"), hp.eps)
        k = rms_norm(k, m.w(p + "attn_k_norm.weight"), hp.eps)
    ff = m.rope_factors()  # Llama 3.1+ frequency factors, Phi-3's long or short ones, or None
    local = hp.n_swa and i % hp.swa_pattern < hp.swa_pattern - 1  # gemma2: even layers; gemma3: 5 of 6
    rp = dataclasses.replace(hp, rope_base=hp.rope_base_swa, freq_scale=1.0) if local and hp.rope_base_swa else hp
    q, k = rope(q, pos, rp, m.neox, ff), rope(k, pos, rp, m.neox, ff)
    K, V = cache.append(i, k, v)
    a = matmul(attention(q, K, V, pos, K.shape[0], hp.attn_scale, hp.attn_softcap, hp.n_swa if local else 0,
                         m.w(p + "attn_sinks.weight")),
               m, p + "attn_output")  # gpt-oss: + attn_output.bias
    if m.arch == "gpt-oss":  # post_attention_norm is the FFN's norm there
        x = x + a
        return x + moe_oai(m, p, rms_norm(x, m.w(p + "post_attention_norm.weight"), hp.eps))
    post = m.w(p + "post_attention_norm.weight")  # gemma2: the block's output normalized
    x = x + (a if post is None else rms_norm(a, post, hp.eps))
    h = rms_norm(x, m.w(p + "ffn_norm.weight"), hp.eps)
    if m.w(p + "ffn_gate_inp.weight") is not None:
        return x + moe(m, p, h)
    if m.w(p + "ffn_gate.weight") is None:  # phi3: gate rows then up rows in ffn_up
        gate, up = np.split(matmul(h, m, p + "ffn_up"), 2, axis=-1)
    else:
        gate, up = matmul(h, m, p + "ffn_gate"), matmul(h, m, p + "ffn_up")
    glu = gelu_tanh_glu if m.arch.startswith("gemma") else silu_glu
    f = matmul(glu(gate, up), m, p + "ffn_down")
    post = m.w(p + "post_ffw_norm.weight")
    return x + (f if post is None else rms_norm(f, post, hp.eps))


def forward(m, ids, pos0, cache):
    """Logits [T, n_vocab] of tokens `ids` at positions pos0.., appending to `cache`."""
    x = m.w("token_embd.weight")[np.asarray(ids)]
    if m.arch.startswith("gemma"):  # embeddings scaled by sqrt(n_embd)
        x = x * np.sqrt(m.hp.n_embd)
    pos = np.arange(pos0, pos0 + len(ids), dtype=np.float64)
    for i in range(m.hp.n_layer):
        x = layer(m, i, x, pos, cache)
    y = matmul(rms_norm(x, m.w("output_norm.weight"), m.hp.eps), m, m.output_name)
    c = m.hp.final_softcap  # gemma2: final logits soft-capped
    return c * np.tanh(y / c) if c else y


def encode_like_ggml(x, qtype):
    """Activations as a plugin that encodes them for every block weight sees them."""
    if qtype in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16,
                 gguf.GGMLQuantizationType.BF16):
        return x
    return encode_q8_0(x) if gguf.GGML_QUANT_SIZES[qtype][0] == 32 else encode_q8_K(x)


def round_bf16(x):
    """x rounded to bf16 (round to nearest even, as ggml's GGML_FP32_TO_BF16), in float64."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def encode_bf16_activations(x, qtype):
    """Activations as a plugin under GLLMK_OPEN_BF16_ACTIVATIONS sees them: rounded to
    bf16 before every bf16-weight product (gllmk-run --bf16-activations)."""
    return round_bf16(x) if qtype == gguf.GGMLQuantizationType.BF16 else x


def logits(m, prompt, generated, encode=None, kv_type="F16", n_ctx=0):
    """The logits gllmk-run --logits writes: one row per evaluated position, the P
    prompt tokens then the N - 1 generated tokens fed back (teacher forcing with the
    ids gllmk chose, so a near tie cannot make the two sequences diverge). One causal
    pass over all of them: the same numbers as gllmk-run's batches and decode steps.
    `encode`: None (exact), encode_like_ggml (the variant SPEC/OPERATORS.md allows) or
    encode_bf16_activations (what GLLMK_OPEN_BF16_ACTIVATIONS allows);
    `kv_type`: the cache's type, gllmk-run's --kv-type (F16, Q8_0, Q4_0); `n_ctx`:
    gllmk-run's context (its JSON's n_ctx; 0: prompt + generated), which picks
    Phi-3's LongRoPE factors."""
    ids = list(prompt) + list(generated[:-1])
    m.encode_activations = encode
    m.n_ctx = n_ctx or len(prompt) + len(generated)
    try:
        return forward(m, ids, 0, Cache(m.hp, kv_type))
    finally:
        m.encode_activations = None


# ---- self-test: checks of the reference that do not use the reference ----

def check(cond, what):
    print(f"{'ok' if cond else 'FAIL'}: {what}")
    return bool(cond)


def vectors_dir():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(os.path.dirname(root), "shared", "vectors", "ggml")


def read_vectors(name):
    """One ggml vector file (README there): weight blocks, ggml's decoding of them,
    activations x, and ggml's mul_mat y = x·Wᵀ (which encodes x to q8 on the way)."""
    buf = open(os.path.join(vectors_dir(), name + ".bin"), "rb").read()
    K, N, M, be, bb = (int(v) for v in np.frombuffer(buf, "<u4", 5, 24))
    off = 44 + 4 * N * K
    blocks = np.frombuffer(buf, np.uint8, N * K // be * bb, off).reshape(N, -1)
    off += blocks.size
    decoded = np.frombuffer(buf, "<f4", N * K, off).reshape(N, K)
    x = np.frombuffer(buf, "<f4", M * K, off + 4 * N * K).reshape(M, K)
    y = np.frombuffer(buf, "<f4", M * N, off + 4 * (N + M) * K).reshape(M, N)
    return blocks, decoded, x.astype(np.float64), y


ABI_1_1_VECTORS = ("iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m", "tq1_0", "tq2_0",
                   "mxfp4")


def check_vectors():
    """gguf's decoders against ggml's own to_float, and the q8 activation encoders
    against ggml's quantized mul_mat (../shared/vectors/ggml): the reference's weights
    and its encoded variant are ggml's."""
    if not os.path.isdir(vectors_dir()):
        print(f"skip: ggml vectors ({vectors_dir()} absent)")
        return True
    ok = True
    for name in ("f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_K", "q3_K",
                 "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs") + ABI_1_1_VECTORS:
        qtype = gguf.GGMLQuantizationType[name.upper()]
        blocks, decoded, x, y = read_vectors(name)
        w = quants.dequantize(blocks, qtype)
        ok &= check(np.array_equal(w.astype(np.float32), decoded), f"gguf decodes {name} as ggml's to_float")
        # their ggml vec_dot takes q8_0 / q8_K (the i-quants and ternary ones q8_K, mxfp4 q8_0)
        if name in ("q8_0", "q4_0", "q4_K", "q6_K") + ABI_1_1_VECTORS:
            got = encode_like_ggml(x, qtype) @ w.T.astype(np.float64)
            err = np.abs(got - y).max() / np.abs(y).max()
            ok &= check(err < 1e-5, f"{name}: encoded activations give ggml's mul_mat ({err:.1e})")
    return ok


def check_rope():
    """rope against a complex rotation: pair (a, b) as a + ib times e^{iθ}."""
    hp = HParams(1, 0, 2, 2, 8, 8, 6, 0, 500.0, 0.25)
    x = np.random.default_rng(1).standard_normal((3, 2, 8))
    pos = np.array([0.0, 7.0, 1000.0])
    theta = pos[:, None, None] * 0.25 * 500.0 ** (-np.arange(3) / 3.0)
    ok = True
    for neox, (ia, ib) in ((False, ([0, 2, 4], [1, 3, 5])), (True, ([0, 1, 2], [3, 4, 5]))):
        z = (x[..., ia] + 1j * x[..., ib]) * np.exp(1j * theta)
        want = x.copy()
        want[..., ia], want[..., ib] = z.real, z.imag
        ok &= check(np.allclose(rope(x, pos, hp, neox), want, rtol=0, atol=1e-12),
                    f"rope {'neox' if neox else 'normal'} is a complex rotation, dims >= n_rot copied")
    # rope_ext: factors divide the angle; YaRN (ext_factor 1): pairs up to lo keep the
    # trained angle, pairs from hi on the interpolated one, all scaled by m
    ff = np.array([1.0, 2.0, 8.0])
    z = (x[..., [0, 2, 4]] + 1j * x[..., [1, 3, 5]]) * np.exp(1j * theta / ff)
    want = x.copy()
    want[..., [0, 2, 4]], want[..., [1, 3, 5]] = z.real, z.imag
    ok &= check(np.allclose(rope(x, pos, hp, False, ff), want, rtol=0, atol=1e-12),
                "rope_ext: freq_factors divide pair i's angle")
    y = dataclasses.replace(hp, n_rot=64, rope_base=1e4, freq_scale=0.125, ext_factor=1.0, n_ctx_orig=512)
    lo, hi = yarn_corr_dims(y)
    # by hand: 64·ln(512 / (2π·32)) / (2·ln 1e4) = 3.25, 64·ln(512 / 2π) / (2·ln 1e4) = 15.3
    ok &= check((lo, hi) == (3.0, 16.0), f"YaRN correction dims (3, 16) for n_ctx_orig 512, base 1e4: {(lo, hi)}")
    xs = np.random.default_rng(2).standard_normal((1, 1, 64))
    got, m = rope(xs, np.array([100.0]), y, True), 1 + 0.1 * np.log(8.0)
    for i, scale in ((3, 1.0), (30, 0.125)):
        th = 100.0 * scale * 1e4 ** (-2.0 * i / 64)
        a, b = xs[0, 0, i], xs[0, 0, i + 32]
        ok &= check(np.isclose(got[0, 0, i], m * (a * np.cos(th) - b * np.sin(th)), rtol=0, atol=1e-12),
                    f"YaRN pair {i}: angle scaled by {scale}, magnitude {m:.4f}")
    return ok


def check_model(path):
    """On a model file: shapes agree with the hyper-parameters, and one causal pass
    equals prefill-then-decode with the cache (what gllmk-run does)."""
    m = Model(path)
    hp, ok = m.hp, True
    shapes = {"attn_q": (hp.n_head * hp.head_dim, hp.n_embd),
              "attn_k": (hp.n_head_kv * hp.head_dim, hp.n_embd),
              "attn_output": (hp.n_embd, hp.n_head * hp.head_dim_v)}
    if m.w("blk.0.attn_qkv.weight") is not None:  # phi3: fused
        del shapes["attn_q"], shapes["attn_k"]
        shapes["attn_qkv"] = (hp.n_head * hp.head_dim + hp.n_head_kv * (hp.head_dim + hp.head_dim_v), hp.n_embd)
    for name, shape in shapes.items():
        ok &= check(m.w(f"blk.0.{name}.weight").shape == shape, f"{name} is {shape}")
    ids = np.random.default_rng(2).integers(0, m.n_vocab, 9)
    whole = forward(m, ids, 0, Cache(hp))
    cache = Cache(hp)
    parts = [forward(m, ids[:5], 0, cache)] + [forward(m, ids[t:t + 1], t, cache) for t in range(5, 9)]
    ok &= check(np.allclose(whole, np.concatenate(parts), rtol=0, atol=1e-9 * np.abs(whole).max()),
                f"{m.arch}: one causal pass equals prefill 5 + 4 decode steps")
    ok &= check(np.all(np.isfinite(whole)) and 0.1 < np.sqrt(np.mean(whole ** 2)) < 100,
                f"{m.arch}: logits finite, rms {np.sqrt(np.mean(whole ** 2)):.3g}")
    return ok


def self_test():
    import tempfile
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools/run"))
    import make_model
    ok = check_vectors() & check_rope()
    with tempfile.TemporaryDirectory() as tmp:
        for arch, dtype, extra in (("llama", "Q4_K", []), ("qwen2", "F32", []), ("qwen3", "mixed", []),
                                   ("llama", "mixed-1.1", []),
                                   ("llama", "F32", ["--experts", "4"]), ("qwen3moe", "Q8_0", []),
                                   ("gemma2", "F32", ["--swa", "3", "--attn-softcap", "2", "--tied"]),
                                   ("gemma3", "F32", ["--swa", "3", "--layers", "7", "--tied"]),
                                   ("phi3", "F32", ["--longrope", "4"]),
                                   ("gpt-oss", "F32", ["--swa", "3", "--yarn", "4", "--yarn-orig-ctx", "64"])):
            path = os.path.join(tmp, arch + dtype + ".gguf")
            make_model.make_model(["--arch", arch, "--dtype", dtype, "--out", path] + extra)
            ok &= check_model(path)
    print("reference self-test:", "passed" if ok else "FAILED")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", nargs="?")
    p.add_argument("--ids", help="prompt ids, comma-separated")
    p.add_argument("--generated", default="", help="generated ids (fed back but the last)")
    p.add_argument("--out", help="write float32 logits rows here (as gllmk-run --logits)")
    p.add_argument("--kv-type", default="f16", choices=["f16", "q8_0", "q4_0"], help="as gllmk-run's")
    p.add_argument("--self-test", action="store_true")
    a = p.parse_args()
    if a.self_test:
        return self_test()
    if not a.model or not a.ids:
        p.error("MODEL and --ids are needed")
    ids = lambda s: [int(t) for t in s.split(",") if t]  # noqa: E731
    out = logits(Model(a.model), ids(a.ids), ids(a.generated) or [0], kv_type=a.kv_type.upper())
    if a.out:
        out.astype("<f4").tofile(a.out)
    else:
        print(np.argmax(out, axis=-1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
