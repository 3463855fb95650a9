#!/usr/bin/env python3
"""gllmk-run's logits beside llama.cpp's on the same GGUF file.

An outside check of gllmk-run's forward pass: tests/run/reference.py is
written from the same reading of the model definitions as forward.c, so a
misreading both share would pass the e2e tests; llama.cpp is an
implementation of its own. Needs the peer venv (scripts/install-peers):

  build-peers/venv/bin/python tools/run/check_llamacpp.py MODEL.gguf [--plugin P] [--ids 1,5,9]

Prints, per prompt position, max |gllmk - llama.cpp| / max |llama.cpp| and
whether the argmax agrees. llama.cpp keeps K/V in f16 and quantizes
activations for quantized weights, as gllmk-run does by default, so float
models agree to ~1e-3 and quantized ones to the activation-rounding band.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import llama_cpp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--plugin", default="cpu-generic")
    ap.add_argument("--ids", default="1,5,9,17,33,2,8,11,40,7,3,19")
    ap.add_argument("--run", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "tools", "run",
                                                  "gllmk-run"))
    a = ap.parse_args()
    toks = [int(t) for t in a.ids.split(",")]
    llm = llama_cpp.Llama(model_path=a.model, logits_all=True, n_ctx=max(64, 2 * len(toks)), n_threads=1,
                          verbose=False)
    llm.eval(toks)
    ref = np.array(llm.scores[:len(toks)], dtype=np.float64)
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        subprocess.run([a.run, "-m", a.model, "--prompt-ids", a.ids, "-n", "1", "--logits", f.name, "-q",
                        "--plugin", a.plugin], check=True, stdout=subprocess.DEVNULL)
        got = np.fromfile(f.name, dtype=np.float32).reshape(-1, ref.shape[1])[:len(toks)].astype(np.float64)
    err = np.abs(got - ref).max(axis=1) / np.abs(ref).max(axis=1)
    agree = int((got.argmax(1) == ref.argmax(1)).sum())
    print(f"{os.path.basename(a.model)} on {a.plugin}: worst {err.max():.1e} (per position "
          + " ".join(f"{e:.1e}" for e in err) + f"), argmax {agree}/{len(toks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
