#!/usr/bin/env python3
"""gllmk-run --bench --depth D: pp and tg after D tokens of context.

Runs the benchmark on a model at a depth, for an f16 and a q8_0 cache, and checks
its JSON: the depth is echoed, both rates are positive, and the K/V bytes a decode
step reads (which the roofline adds to the weights) equal this script's own count
from the file's hyperparameters: every layer's K and V rows of n_kv heads for the
mean context of the tg steps, D + (G + 1)/2 tokens (step i sees D + i + 1), at the cache type's row size
(f16 2 bytes an element; q8_0 34 bytes a block of 32).

    check_bench_depth.py --run build/tools/run/gllmk-run --model tiny.gguf
"""
import argparse
import json
import subprocess
import sys

import gguf

ROW_BYTES = {"f16": lambda n: 2 * n, "q8_0": lambda n: n // 32 * 34}


def field(reader, key):
    f = reader.fields[key]
    return int(f.parts[f.data[0]][0])


def expected_kv_bytes(model, kv_type, depth, tg):
    r = gguf.GGUFReader(model)
    arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
    n_layer = field(r, f"{arch}.block_count")
    n_kv = field(r, f"{arch}.attention.head_count_kv")
    dk = field(r, f"{arch}.attention.key_length")
    dv = field(r, f"{arch}.attention.value_length")
    per_token = n_layer * n_kv * (ROW_BYTES[kv_type](dk) + ROW_BYTES[kv_type](dv))
    return per_token * (depth + (tg + 1) / 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True)
    a = ap.parse_args()
    passed = failed = 0
    depth, pp, tg = 40, 16, 4
    for kv in ("f16", "q8_0"):
        out = subprocess.run([a.run, "-m", a.model, "--bench", "--reps", "1", "--pp", str(pp), "--tg", str(tg),
                              "--depth", str(depth), "--kv-type", kv, "--json", "--quiet"],
                             capture_output=True, text=True, timeout=600)
        try:
            assert out.returncode == 0, out.stderr
            d = json.loads(out.stdout)
            want = expected_kv_bytes(a.model, kv, depth, tg)
            assert d["depth"] == depth, d["depth"]
            assert d["pp_tokens_per_s"] > 0 and d["tg_tokens_per_s"] > 0, d
            assert abs(d["kv_bytes_per_token"] / want - 1) < 1e-6, (d["kv_bytes_per_token"], want)
            roof = d["dram_gbps"] * 1e9 / (d["weight_bytes_per_token"] + d["kv_bytes_per_token"])
            assert abs(d["roofline_tg_tokens_per_s"] / roof - 1) < 1e-3, (d["roofline_tg_tokens_per_s"], roof)
            passed += 1
            print(f"PASS gllmk-run --bench --depth {depth} --kv-type {kv}: {want:.0f} K/V bytes a step")
        except (AssertionError, ValueError, KeyError) as e:
            failed += 1
            print(f"FAIL gllmk-run --bench --depth {depth} --kv-type {kv}: {e}")
    print(f"check_bench_depth: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
