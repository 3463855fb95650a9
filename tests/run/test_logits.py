#!/usr/bin/env python3
"""End to end: gllmk-run's logits against the float64 numpy reference.

For each plugin and case: make a tiny random model (tools/run/make_model.py), run

    gllmk-run -m F --prompt-ids ... -n N --plugin P --logits L --json --quiet

and compare every row of L (P + N - 1 rows, SPEC/RUN.md) with reference.py's logits
of the same ids: the prompt, then gllmk's own generated ids fed back (teacher
forcing, so a near tie cannot make the sequences diverge). Run with build-venv/bin/python.

Tolerance (SPEC/TOLERANCES.md, "End to end"): per row, max|gllmk − ref| <= tol·rms(ref),
tol by the weights' dtype class; see TOL below for the figures and why.

    test_logits.py --run build/tools/run/gllmk-run [--plugins cpu-generic,cpu-avx2]
                   [--wrapper "qemu-aarch64 -L /usr/aarch64-linux-gnu"] [--quick]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "tools", "run")]
import make_model  # noqa: E402
import reference  # noqa: E402

PLUGINS = ["cpu-generic", "cpu-avx2", "cpu-avx512", "cpu-neon", "vulkan", "opencl"]

# Per row of logits: max|gllmk − ref| <= TOL[class] · rms(ref row), ref the exact
# computation (float64, K/V rounded to f16 as gllmk-run stores them). Classes by the
# matmul weights' types:
# - "float" (f32/f16/bf16): gllmk's f32 arithmetic, plus the odd K/V element that
#   lands on the other side of an f16 rounding (a 1e-7 difference moves it by half an
#   f16 ulp, 2.4e-4 relative), which reaches the logits at 1e-5..1e-3 of their rms.
# - "quant" (any block type): SPEC/OPERATORS.md lets a plugin encode the activations
#   to q8_0 / q8_K before the dot products, as ggml does (2e-3…5e-3 per matmul), and
#   the random layers amplify that: cpu-avx2/avx512 land at 3e-2…1.6e-1. The message
#   also gives the distance to the reference with that encoding
#   (reference.encode_like_ggml): ~1e-6 when no encoding step rounds the other way,
#   which shows the error is the encoding's, not a bug.
# Calibration (SPEC/TOLERANCES.md, "End to end", has the table): observed worst over
# cpu-generic, cpu-avx2, cpu-avx512, vulkan and opencl, with two sets of prompts,
# 3.1e-4 (float) and 1.58e-1 (quant, cpu-avx2/avx512); the bounds are ~5x and ~3.2x.
# A wrong rope mode, eps or freq_scale, a dropped bias or an off-by-one causal mask
# lands at 0.25…5, far past the float bound (the float cases carry those wiring
# checks); the quant cases check each type's decoding and the plumbing around it,
# where a mistake is O(1).
# - "bf16act" (f32/f16/bf16 weights, run with --bf16-activations): the bf16 matmuls may
#   round their activations to bf16 (GLLMK_OPEN_BF16_ACTIVATIONS), 2^-8 of each element
#   at most, ~1.5e-3 of a product's rms (SPEC/TOLERANCES.md "bf16 activations"), which
#   two random layers amplify: the reference with that rounding
#   (reference.encode_bf16_activations, in the message) lies 1.3e-2…1.5e-2 from the
#   exact one, and cpu-avx512 with AVX512-BF16 lands at 1.3e-2…1.5e-2 from the exact
#   one; against the rounded one it is no closer (9e-3…1.3e-2), because an activation
#   whose f32 value differs by 1e-7 may round to the other bf16 neighbour (2^-8 away)
#   and the random layers amplify such flips, as they do q8 flips. ~3.4x the worst;
#   the wiring mistakes above land at 0.25 or more.
TOL = {"float": 1.5e-3, "quant": 5e-1, "bf16act": 5e-2}

# Which plugins run a case: "core" every plugin (emulated ones too: every arch and
# the fast dtypes); "gpu" also vulkan (lavapipe) and opencl (PoCL), which are slow
# on a CPU; "full" the native CPU plugins only.
LEVELS = {"emulated": {"core"}, "gpu": {"core", "gpu"}, "native": {"core", "gpu", "full"}}


@dataclass(frozen=True)
class Case:
    name: str
    level: str
    model: tuple  # make_model.py arguments
    prompt: int = 7  # prompt tokens
    n: int = 4  # generated tokens
    batch: int = 0  # --batch (0: gllmk-run's default)
    kv: str = "f16"  # --kv-type
    mmap: bool = False  # --mmap: CPU plugins compute on the file's pages, not a copy
    bf16_act: bool = False  # --bf16-activations
    prepare: bool = True  # False: --no-prepare (weights in the file's layout)

    def args(self):
        return make_model.parse_args(list(self.model) + ["--out", "-"])


def llama(dtype, level, *extra, name=None, **run):
    return Case(name or f"llama-{dtype}", level, ("--arch", "llama", "--dtype", dtype) + extra, **run)


GEMMA2_SMALL = ("--tied", "--swa", "4", "--attn-softcap", "2", "--final-softcap", "3")


def gemma2(dtype, level, *extra, name=None, **run):
    return Case(name or f"gemma2-{dtype}", level, ("--arch", "gemma2", "--dtype", dtype) + GEMMA2_SMALL + extra,
                **run)


def phi3(dtype, level, *extra, name=None, **run):
    return Case(name or f"phi3-{dtype}", level, ("--arch", "phi3", "--dtype", dtype) + extra, **run)


GEMMA3_SMALL = ("--tied", "--layers", "7", "--swa", "4", "--rope-scale", "4")


def gemma3(dtype, level, *extra, name=None, **run):
    return Case(name or f"gemma3-{dtype}", level, ("--arch", "gemma3", "--dtype", dtype) + GEMMA3_SMALL + extra,
                **run)


GPTOSS = ("--arch", "gpt-oss", "--swa", "4", "--yarn", "4", "--yarn-orig-ctx", "64")

CASES = [
    Case("llama-F32", "core", ("--arch", "llama")),
    Case("qwen2-F32", "core", ("--arch", "qwen2")),
    Case("qwen3-F32", "core", ("--arch", "qwen3")),
    *(llama(d, "core") for d in ("F16", "Q8_0", "Q4_0", "Q4_K", "Q6_K")),
    llama("mixed", "gpu"),
    llama("F32", "gpu", "--kv-heads", "1", name="llama-mqa"),
    Case("qwen2-Q4_0-tied", "gpu", ("--arch", "qwen2", "--dtype", "Q4_0", "--tied")),
    llama("F32", "gpu", name="llama-F32-prompt40-batch16", prompt=40, n=5, batch=16),
    # --mmap: the weights are views of one wrapped mapping (unaligned offsets within it)
    # instead of a buffer each
    llama("Q4_K", "core", name="llama-Q4_K-mmap", mmap=True),
    llama("F32", "gpu", name="llama-F32-mmap-prompt40-batch16", prompt=40, n=5, batch=16, mmap=True),
    llama("Q4_K", "gpu", name="llama-Q4_K-prompt40-batch16", prompt=40, n=5, batch=16),
    # one batch of M > 16 rows: the large-M matmul path (the GEMMs, int8 where the
    # plugin has it) for every block dtype at once, not only the small-M dots
    llama("Q4_K", "core", name="llama-Q4_K-prompt33", prompt=33, n=2),
    llama("mixed", "gpu", name="llama-mixed-prompt40", prompt=40, n=3),
    # eps comparable to mean(x²) of the per-head q/k norms: a runtime that ignores the
    # file's eps shows; at 1e-6 no tolerance could tell
    Case("qwen3-F32-eps0.1", "gpu", ("--arch", "qwen3", "--eps", "0.1")),
    Case("qwen3-F32-hd128", "gpu", ("--arch", "qwen3", "--heads", "2", "--kv-heads", "1",
                                    "--head-dim", "128")),
    llama("F32", "gpu", "--rope-scale", "4", name="llama-rope-linear4"),
    # rope_ext: Llama 3.1's rope_freqs (the llama3 formula, and random factors, which
    # move every pair's angle), YaRN (qwen2 neox with the default keys; llama normal
    # with attn_factor and beta_fast set), on every plugin
    llama("F32", "core", "--rope-base", "500000", "--rope-freqs", "llama3", name="llama3-rope-freqs",
          prompt=40, n=3),
    llama("F32", "core", "--rope-freqs", "random", name="llama-rope-freqs-random"),
    Case("qwen2-F32-yarn4", "core", ("--arch", "qwen2", "--yarn", "4", "--yarn-orig-ctx", "64"), prompt=40, n=3),
    llama("F32", "core", "--yarn", "8", "--yarn-orig-ctx", "512", "--yarn-attn-factor", "0.9",
          "--yarn-beta-fast", "16", name="llama-yarn8-attn0.9"),
    # mixtures of experts (router, moe_route, matmul_id on the device): Mixtral's
    # layout (llama, 8 experts, 2 a token) and Qwen3-MoE's (8 of 8, 2 a token; 16, 4);
    # 40-token prompts in batches of 16 give experts several rows each, and some none
    llama("F32", "core", "--experts", "8", name="mixtral-F32"),
    Case("qwen3moe-F32", "core", ("--arch", "qwen3moe")),
    llama("Q4_K", "core", "--experts", "8", name="mixtral-Q4_K"),
    # q4_0 experts, prepared ([E, N, K] in the CPU plugins' q4_0x8 layout, gllmk_weights_prepare;
    # mixtral-Q4_K's in q4_Kx8)
    llama("Q4_0", "core", "--experts", "8", name="mixtral-Q4_0-prompt40-batch16", prompt=40, n=5, batch=16),
    Case("qwen3moe-Q8_0-e16k4", "gpu", ("--arch", "qwen3moe", "--dtype", "Q8_0", "--experts", "16",
                                        "--experts-used", "4")),
    llama("F32", "gpu", "--experts", "8", name="mixtral-F32-prompt40-batch16", prompt=40, n=5, batch=16),
    Case("qwen3moe-mixed-prompt40", "gpu", ("--arch", "qwen3moe", "--dtype", "mixed"), prompt=40, n=3),
    # Gemma 2: embedding scale, post-norms, GEGLU, soft-capped scores and logits,
    # a 4-token window on even layers. Small caps (2, 3) make tanh bite at a tiny
    # model's scale (softcap 50 → 2 moves the logits by 0.9 rms, the window 3.5);
    # the defaults case reads 50 / 30 / 4096 and an untied output.
    gemma2("F32", "core"),
    gemma2("Q4_K", "core"),
    gemma2("F32", "gpu", name="gemma2-F32-prompt40-batch16", prompt=40, n=5, batch=16),
    Case("gemma2-F32-defaults", "gpu", ("--arch", "gemma2"), prompt=12),
    gemma2("F32", "gpu", name="gemma2-F32-kv-q8_0", kv="q8_0"),
    # Gemma 3: q/k norms, no score cap, 5 local layers of 6 (7 layers: 0-4 and 6
    # local, 5 global) whose rope is base 10000 unscaled while the global one is
    # 1e6 with linear scaling 4 (using the global rope everywhere moves the logits
    # 0.6 rms); no window key: every layer global; the optional final cap
    gemma3("F32", "core"),
    gemma3("Q4_K", "core"),
    gemma3("F32", "gpu", name="gemma3-F32-prompt40-batch16", prompt=40, n=5, batch=16),
    Case("gemma3-F32-noswa-finalcap3", "gpu", ("--arch", "gemma3", "--layers", "7", "--swa", "0",
                                              "--final-softcap", "3"), prompt=12),
    gemma3("F32", "gpu", name="gemma3-F32-kv-q4_0", kv="q4_0"),
    # Phi-3: fused qkv and gate/up; LongRoPE: the long factors when the run's context
    # (prompt + n here) exceeds the original one (4: long; 4096: short; they differ
    # by 1.7 rms), rope.scaling.attn_factor sqrt(1 + ln(ctx/orig) / ln(orig))
    phi3("F32", "core", "--longrope", "4"),
    phi3("F32", "core", "--longrope", "4096", name="phi3-F32-longrope-short"),
    phi3("Q4_K", "core", "--longrope", "4"),
    phi3("F32", "gpu", "--longrope", "16", name="phi3-F32-prompt40-batch16", prompt=40, n=5, batch=16),
    phi3("Q8_0", "gpu", name="phi3-Q8_0-nolongrope-kv-q8_0", kv="q8_0"),
    *(llama(d, "full") for d in ("BF16", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q5_K",
                                 "IQ4_NL", "IQ4_XS")),
    llama("F32", "full", "--kv-heads", "4", name="llama-mha"),
    # --bf16-activations: prompts of 40 and 96 tokens (M > 32) put the bf16 matmuls,
    # and matmul_id's expert groups (4 experts, 2 a token: ~48 rows each), on
    # cpu-avx512's vdpbf16ps GEMM where the CPU has AVX512-BF16; decode steps stay
    # exact; the other plugins ignore the flag
    llama("BF16", "full", name="llama-BF16-bf16act-prompt40", prompt=40, n=3, bf16_act=True),
    Case("qwen3moe-BF16-e4-bf16act-prompt96", "full", ("--arch", "qwen3moe", "--dtype", "BF16", "--experts", "4"),
         prompt=96, n=3, bf16_act=True),
    # --kv-type: the cache in ggml's q8_0 / q4_0 (gllmk_kv_store, gllmk_attention_ext);
    # the reference rounds K/V the same way. GPU plugins too (their attention decodes
    # the blocks in the kernel)
    llama("F32", "gpu", name="llama-kv-q8_0", kv="q8_0"),
    llama("F32", "gpu", name="llama-kv-q4_0-prompt40-batch16", prompt=40, n=5, batch=16, kv="q4_0"),
    Case("qwen2-F32-kv-q4_0", "full", ("--arch", "qwen2"), kv="q4_0"),
    llama("Q4_0", "full", "--embd-dtype", "F16", name="llama-Q4_0-embdF16"),
    # the same q4_0 and q4_K weights in the file's layout (the plugins' plain dots); prepared
    # q4_K at M = 48, past the group kernel's limit (the GEMMs decode q4_Kx8)
    llama("Q4_0", "core", name="llama-Q4_0-no-prepare", prompt=40, n=5, batch=16, prepare=False),
    llama("Q4_K", "core", name="llama-Q4_K-no-prepare", prompt=40, n=5, batch=16, prepare=False),
    llama("IQ4_XS", "full", name="llama-IQ4_XS-no-prepare", prepare=False),
    llama("Q4_K", "core", name="llama-Q4_K-prompt48", prompt=48, n=3),
    # q2_K and q3_K: plain, and prepared past their group kernels' limits (8, 16)
    llama("Q2_K", "full", name="llama-Q2_K-no-prepare", prepare=False),
    llama("Q3_K", "full", name="llama-Q3_K-no-prepare", prepare=False),
    llama("Q2_K", "full", name="llama-Q2_K-prompt24", prompt=24, n=3),
    llama("Q3_K", "full", name="llama-Q3_K-prompt24", prompt=24, n=3),
    Case("qwen2-Q4_K", "full", ("--arch", "qwen2", "--dtype", "Q4_K")),
    Case("qwen3-Q6_K-tied", "full", ("--arch", "qwen3", "--dtype", "Q6_K", "--tied")),
    # ABI 1.1's ten formats (random blocks: every grid entry, sign pattern and scale):
    # each alone (matmul and the embeddings' get_rows) on the native CPU plugins;
    # IQ2_XXS, IQ3_S and MXFP4 (issue 16's three), all ten in one model at M = 40
    # (the large-M path) and in experts (matmul_id: mixed-1.1 puts six of the ten in
    # the expert stacks, MXFP4 as gpt-oss has it) on the GPU plugins too; IQ2_XXS on
    # the emulated and sanitizer runs as well
    llama("IQ2_XXS", "core"),
    *(llama(d, "gpu") for d in ("IQ3_S", "MXFP4")),
    *(llama(d, "full") for d in ("IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ1_S", "IQ1_M", "TQ1_0", "TQ2_0")),
    llama("mixed-1.1", "gpu", name="llama-mixed-1.1-prompt40", prompt=40, n=3),
    Case("qwen3moe-mixed-1.1", "gpu", ("--arch", "qwen3moe", "--dtype", "mixed-1.1")),
    Case("qwen3moe-MXFP4", "gpu", ("--arch", "qwen3moe", "--dtype", "MXFP4")),
    # gpt-oss: q/k/v/output biases, attention sinks, a window on even layers (4 and
    # 8 here, so that it bites), YaRN, a router with a bias, top-k then softmax over
    # the k, experts with biases and SwiGLU-OAI (clamps at 7 reached by ~1% of the
    # gate/up elements). F32 experts carry the wiring at the float bound; MXFP4
    # experts (as gpt-oss ships them) the format in matmul_id, with batches of 16
    # over a 40-token prompt (the window across batches, experts with several rows)
    Case("gpt-oss-F32", "core", GPTOSS + ("--expert-dtype", "F32")),
    Case("gpt-oss-MXFP4", "core", GPTOSS),
    Case("gpt-oss-MXFP4-prompt40-batch16", "gpu", ("--arch", "gpt-oss", "--swa", "8", "--yarn", "4",
                                                   "--yarn-orig-ctx", "64"), prompt=40, n=5, batch=16),
    Case("gpt-oss-F32-kv-q8_0", "gpu", GPTOSS + ("--expert-dtype", "F32"), kv="q8_0"),
]


class Models:
    """Each case's model file and reference model, made once and shared by plugins."""

    def __init__(self, tmp):
        self.tmp, self.files, self.refs = tmp, {}, {}

    def file(self, case):
        if case.name not in self.files:
            path = os.path.join(self.tmp, case.name + ".gguf")
            make_model.make_model(list(case.model) + ["--seed", "7", "--out", path])
            self.files[case.name] = path
        return self.files[case.name]

    def reference(self, case):
        if case.name not in self.refs:
            self.refs[case.name] = reference.Model(self.file(case))
        return self.refs[case.name]


def prompt_ids(case):
    vocab = case.args().vocab
    # a fixed prompt per case (crc32: stable across runs, unlike hash())
    return np.random.default_rng(zlib.crc32(case.name.encode())).integers(3, vocab, case.prompt)


class RunError(Exception):
    pass


def is_utf8(data):
    try:
        data.decode()
        return True
    except UnicodeDecodeError:
        return False


def run_gllmk(cmd, model, case, plugin, logits_path):
    ids = ",".join(str(i) for i in prompt_ids(case))
    argv = cmd + ["-m", model, "--prompt-ids", ids, "-n", str(case.n), "--plugin", plugin,
                  "--logits", logits_path, "--json", "--quiet"]
    if case.batch:
        argv += ["--batch", str(case.batch)]
    if case.kv != "f16":
        argv += ["--kv-type", case.kv]
    if case.mmap:
        argv += ["--mmap"]
    if case.bf16_act:
        argv += ["--bf16-activations"]
    if not case.prepare:
        argv += ["--no-prepare"]
    p = subprocess.run(argv, capture_output=True, timeout=300)
    if p.returncode != 0:
        err = p.stderr.decode(errors="replace").strip()
        raise RunError(f"exit {p.returncode}: {err[-400:]}")
    doc = json.loads(p.stdout.decode(errors="replace"))
    # JSON is UTF-8 (RFC 8259): a piece that is not valid UTF-8 (a lone byte token)
    # must come out escaped or null, not as a raw byte a strict parser rejects
    doc["utf8"] = is_utf8(p.stdout)
    rows = len(doc["prompt"]) + len(doc["generated"]) - 1
    logits = np.fromfile(logits_path, "<f4")
    if logits.size != rows * doc["n_vocab"]:
        raise RunError(f"logits file has {logits.size} floats, want {rows} rows of {doc['n_vocab']}")
    return doc, logits.reshape(rows, doc["n_vocab"]).astype(np.float64)


def row_errors(got, want):
    """max|got − want| / rms(want), per row."""
    return np.max(np.abs(got - want), axis=1) / np.sqrt(np.mean(want * want, axis=1))


FLOAT_TYPES = {"F32", "F16", "BF16"}


def tol_class(m):
    """The tolerance class of a reference model, from its matmul weights' types, the
    experts' stacks included (the embeddings are one when tied; otherwise only rows
    are read, exactly)."""
    names = [n for n, t in m.tensors.items() if len(t.shape) in (2, 3) and n != "token_embd.weight"]
    names += ["token_embd.weight"] if m.output_name == "token_embd" else []
    return "float" if {m.tensors[n].tensor_type.name for n in names} <= FLOAT_TYPES else "quant"


# The plugins that prepare q4_0, q4_K, q5_K, iq4_xs, q2_K and q3_K matrices (gllmk_weights_prepare, SPEC/CPU.md);
# cpu-neon does where the CPU has sdot, the GPU plugins never.
PREPARING = {"cpu-generic", "cpu-avx2", "cpu-avx512"}


def prepared_problem(case, doc, ref_model):
    """What is wrong with the JSON's count of prepared matrices, or None."""
    has_q4 = any(t.tensor_type.name in ("Q4_0", "Q4_K", "Q5_K", "IQ4_XS", "Q2_K", "Q3_K") and len(t.shape) in (2, 3)
                 for t in ref_model.tensors.values())
    if (not case.prepare or case.mmap) and doc["prepared"] != 0:
        return f"{doc['prepared']} matrices prepared under --no-prepare or --mmap"
    if case.prepare and not case.mmap and has_q4 and doc["plugin"] in PREPARING and doc["prepared"] == 0:
        return "no q4_0, q4_K, q5_K, iq4_xs, q2_K or q3_K matrix prepared"
    if doc["plugin"] in ("vulkan", "opencl") and doc["prepared"] != 0:
        return f"{doc['prepared']} matrices prepared on a GPU plugin"
    return None


def compare(case, doc, got, ref_model):
    """The case's verdict: (ok, class, worst error/rms, message)."""
    sent = [int(i) for i in prompt_ids(case)]
    cls = tol_class(ref_model)
    if case.bf16_act and cls == "float":
        cls = "bf16act"
    if doc["prompt"] != sent or len(doc["generated"]) != case.n or doc["n_vocab"] != ref_model.n_vocab:
        return False, cls, np.inf, (f"json prompt {doc['prompt']}, generated {doc['generated']}, "
                                    f"n_vocab {doc['n_vocab']} for {sent}, n {case.n}")
    if not np.all(np.isfinite(got)):
        return False, cls, np.inf, "non-finite logits"
    want = reference.logits(ref_model, doc["prompt"], doc["generated"], kv_type=case.kv.upper(), n_ctx=doc["n_ctx"])
    err = row_errors(got, want)
    worst, tol = float(err.max()), TOL[cls]
    # near ties may differ (so not required), but a disagreement is worth seeing
    agree = int(np.sum(np.argmax(got, axis=1) == np.argmax(want, axis=1)))
    msg = f"{cls} err {worst:.2e} / tol {tol:.2g} (row {int(err.argmax())}), argmax {agree}/{len(err)}"
    if cls == "quant":
        encoded = reference.logits(ref_model, doc["prompt"], doc["generated"], reference.encode_like_ggml,
                                   case.kv.upper(), doc["n_ctx"])
        msg += f", vs q8 acts {row_errors(got, encoded).max():.1e}"
    if cls == "bf16act":
        rounded = reference.logits(ref_model, doc["prompt"], doc["generated"], reference.encode_bf16_activations,
                                   case.kv.upper(), doc["n_ctx"])
        msg += f", vs bf16 acts {row_errors(got, rounded).max():.1e}"
    # temp 0 samples the argmax of the row gllmk wrote (ties to the lowest index)
    own = np.argmax(got[len(sent) - 1:], axis=1).tolist()
    if own != doc["generated"]:
        return False, cls, worst, msg + f"; generated {doc['generated']} != argmax of its logits {own}"
    if not doc["utf8"]:
        return False, cls, worst, msg + "; the JSON on stdout is not valid UTF-8"
    if prepared_problem(case, doc, ref_model):
        return False, cls, worst, msg + "; " + prepared_problem(case, doc, ref_model)
    return worst <= tol, cls, worst, msg + (f", {doc['prepared']} prepared" if doc["prepared"] else "")


def plugin_level(plugin, wrapper, quick):
    if wrapper or quick:
        return "emulated"
    return "gpu" if plugin in ("vulkan", "opencl") else "native"


def test_plugin(cmd, plugin, explicit, level, models, tmp, results):
    """Runs every case of `level` on `plugin`; False when the plugin did not open and
    was not named explicitly (then it is reported skipped, never passed)."""
    for i, case in enumerate(c for c in CASES if c.level in LEVELS[level]):
        logits_path = os.path.join(tmp, f"{plugin}-{case.name}.f32")
        t0 = time.monotonic()
        try:
            doc, got = run_gllmk(cmd, models.file(case), case, plugin, logits_path)
        except (RunError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
            if i == 0 and not explicit and "gllmk_open" in str(e):
                print(f"skip {plugin}: does not open here ({str(e).splitlines()[-1][:200]})")
                return False
            ok, cls, worst, msg = False, "-", np.inf, str(e)
        else:
            ok, cls, worst, msg = compare(case, doc, got, models.reference(case))
        results.append((plugin, cls, ok, worst))
        print(f"{'ok  ' if ok else 'FAIL'} {plugin:12} {case.name:30} {msg} "
              f"[{time.monotonic() - t0:.1f}s]", flush=True)
    return True


def summary(results):
    """Worst error per plugin and tolerance class (the figures SPEC/TOLERANCES.md cites)."""
    worst = {}
    for plugin, cls, ok, err in results:
        if cls in TOL:
            worst[plugin, cls] = max(worst.get((plugin, cls), 0.0), err)
    for (plugin, cls), err in sorted(worst.items()):
        print(f"worst {plugin:12} {cls:6} {err:.2e} (tol {TOL[cls]:.2g})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", required=True, help="the gllmk-run binary")
    p.add_argument("--plugins", help="comma-separated (default: every plugin that opens; "
                   "a plugin named here that fails to open is a failure)")
    p.add_argument("--wrapper", default="", help="command prefix, e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu")
    p.add_argument("--quick", action="store_true", help="every plugin gets the core cases only")
    p.add_argument("--filter", default="", help="only cases whose name contains one of these (comma-separated)")
    a = p.parse_args()
    if a.filter:
        CASES[:] = [c for c in CASES if any(f in c.name for f in a.filter.split(","))]
    cmd = shlex.split(a.wrapper) + [a.run]
    plugins = a.plugins.split(",") if a.plugins else PLUGINS
    results, opened = [], 0
    with tempfile.TemporaryDirectory(prefix="gllmk-e2e-") as tmp:
        models = Models(tmp)
        for plugin in plugins:
            level = plugin_level(plugin, a.wrapper, a.quick)
            opened += test_plugin(cmd, plugin, bool(a.plugins), level, models, tmp, results)
    summary(results)
    passed = sum(r[2] for r in results)
    failed = len(results) - passed + (opened == 0)  # no plugin at all is a failure
    if opened == 0:
        print("e2e: no plugin opened")
    print(f"e2e: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
