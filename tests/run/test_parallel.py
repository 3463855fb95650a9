#!/usr/bin/env python3
"""gllmk-run --parallel N against N runs alone: the same logits, the same ids.

--parallel decodes N sequences (prompt prefixes of P, P-1, ... tokens) through one
paged cache (gllmk_kv_store with block tables whose pages interleave the sequences)
and gllmk_attention_varlen, one packed step per token. Each sequence's logits rows
(its prompt positions, then its fed-back generated tokens) must equal those of
gllmk-run on that prompt alone with the same --ctx (a contiguous cache and
gllmk_attention / attention_ext), and its generated ids must be the same.

Tolerance: the float class of test_logits.py (1.5e-3 · rms per row): the two paths
run different attention kernels and, for decode, matmuls of N rows instead of one,
so f32 sums may round differently (cpu-generic agrees bit for bit). Float weights
only, so that argmax ids cannot flip on an activation encoding step.

    test_parallel.py --run build/tools/run/gllmk-run [--plugins cpu-generic,vulkan]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "tools", "run")]
import make_model  # noqa: E402

PLUGINS = ["cpu-generic", "cpu-avx2", "cpu-avx512", "cpu-neon", "vulkan", "opencl"]
TOL = 1.5e-3


@dataclass(frozen=True)
class Case:
    name: str
    model: tuple
    n_seq: int
    prompt: int
    n: int = 4
    batch: int = 0
    kv: str = "f16"


CASES = [
    # 21-token prompts cross the 16-token pages; batch 8 splits the prefill
    Case("llama-F32-par4", ("--arch", "llama"), 4, 21, batch=8),
    Case("gemma2-F32-par3", ("--arch", "gemma2", "--tied", "--swa", "4", "--attn-softcap", "2",
                             "--final-softcap", "3"), 3, 20),
    Case("qwen3-F32-par5-kv-q8_0", ("--arch", "qwen3"), 5, 9, kv="q8_0"),
    Case("phi3-F32-par3-longrope", ("--arch", "phi3", "--longrope", "16"), 3, 20),
    Case("gemma3-F32-par6", ("--arch", "gemma3", "--layers", "7", "--tied", "--swa", "4",
                             "--rope-scale", "4"), 6, 7, n=3),
    # gpt-oss: attention sinks and the window through attention_varlen, biased experts
    Case("gpt-oss-F32-par3", ("--arch", "gpt-oss", "--expert-dtype", "F32", "--swa", "4", "--yarn", "4",
                              "--yarn-orig-ctx", "64"), 3, 20),
]


def run(cmd, model, ids, case, plugin, logits, extra):
    argv = [cmd, "-m", model, "--prompt-ids", ",".join(map(str, ids)), "-n", str(case.n), "--plugin", plugin,
            "--logits", logits, "--json", "--quiet"] + extra
    if case.batch:
        argv += ["--batch", str(case.batch)]
    if case.kv != "f16":
        argv += ["--kv-type", case.kv]
    p = subprocess.run(argv, capture_output=True, timeout=300)
    if p.returncode:
        raise RuntimeError(f"exit {p.returncode}: {p.stderr.decode(errors='replace').strip()[-400:]}")
    return json.loads(p.stdout), np.fromfile(logits, "<f4")


def check(cmd, case, plugin, model, tmp):
    """(ok, worst error, message)."""
    vocab = make_model.parse_args(list(case.model) + ["--out", "-"]).vocab
    ids = np.random.default_rng(zlib.crc32(case.name.encode())).integers(3, vocab, case.prompt).tolist()
    doc, par = run(cmd, model, ids, case, plugin, os.path.join(tmp, "par.f32"), ["--parallel", str(case.n_seq)])
    par = par.reshape(-1, doc["n_vocab"])
    at, worst = 0, 0.0
    for q, seq in enumerate(doc["sequences"]):
        plen = case.prompt - q % case.prompt
        if seq["prompt"] != ids[:plen]:
            return False, np.inf, f"sequence {q}: prompt {seq['prompt']} is not the first {plen} ids"
        alone, got = run(cmd, model, ids[:plen], case, plugin, os.path.join(tmp, "alone.f32"),
                         ["--ctx", str(doc["n_ctx"])])
        got = got.reshape(-1, doc["n_vocab"])
        rows = par[at:at + len(got)]
        at += len(got)
        if rows.shape != got.shape:
            return False, np.inf, f"sequence {q}: {len(rows)} rows, alone {len(got)}"
        err = float((np.abs(rows - got).max(axis=1) / np.sqrt(np.mean(got.astype(np.float64) ** 2, axis=1))).max())
        worst = max(worst, err)
        if seq["generated"] != alone["generated"]:
            return False, worst, f"sequence {q}: generated {seq['generated']}, alone {alone['generated']}"
    if at != len(par):
        return False, worst, f"the logits file has {len(par)} rows, the sequences {at}"
    return worst <= TOL, worst, f"{case.n_seq} sequences, err {worst:.2e} / tol {TOL:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--plugins", help="comma-separated (default: every plugin that opens)")
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    plugins = a.plugins.split(",") if a.plugins else PLUGINS
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="gllmk-par-") as tmp:
        models = {}
        for plugin in plugins:
            for case in (c for c in CASES if a.filter in c.name):
                if case.name not in models:
                    models[case.name] = os.path.join(tmp, case.name + ".gguf")
                    make_model.make_model(list(case.model) + ["--seed", "7", "--out", models[case.name]])
                try:
                    ok, _, msg = check(a.run, case, plugin, models[case.name], tmp)
                except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError) as e:
                    if not a.plugins and "gllmk_open" in str(e):
                        print(f"skip {plugin}: does not open here")
                        break
                    ok, msg = False, str(e)
                passed += ok
                failed += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {plugin:12} {case.name:28} {msg}", flush=True)
    print(f"parallel: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
