#!/usr/bin/env python3
"""Checks gllmk-probe against its schema and against facts from the same machine.

    check_probe.py report --probe P --select S --schema SPEC/probe.schema.json
    check_probe.py capabilities --probe P --select S --schema ...

report:       --json validates against the schema; the selected plugin equals
              what gllmk_open(NULL) selects in-process (test-probe-select) and
              what gllmk_survey() predicts; CPU flags agree with /proc/cpuinfo;
              absent Vulkan/OpenCL loaders are reported and the probe still
              succeeds; --plugin runs its self-test and it passes; an unknown
              plugin name fails with exit status 3 and the reason; --demo runs.
capabilities: every plugin that can run here, opened by name, runs every op
              variant the probe tries (ABI v1: every plugin, every operator).
Each check prints one line; the exit status is the number of failed checks.
"""
import argparse
import json
import platform
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("check_probe.py: python3-jsonschema is missing (scripts/install-deps installs it)")

# JSON feature name -> the /proc/cpuinfo flag that must agree with it.
X86_FLAGS = {
    "sse4_2": "sse4_2", "avx": "avx", "fma": "fma", "f16c": "f16c", "avx2": "avx2",
    "avx512f": "avx512f", "avx512bw": "avx512bw", "avx512vl": "avx512vl",
    "avx512_vnni": "avx512_vnni", "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16",
    "avx_vnni": "avx_vnni", "amx_tile": "amx_tile", "amx_int8": "amx_int8", "amx_bf16": "amx_bf16",
}
X86_REQUIRED = ("avx2", "avx512f", "fma", "f16c", "sse4_2")
ARM_FLAGS = {"asimd": "asimd", "fp16": "asimdhp", "dotprod": "asimddp", "sve": "sve", "i8mm": "i8mm"}


class Checker:
    def __init__(self, args):
        self.args = args
        with open(args.schema, encoding="utf-8") as f:
            self.validator = jsonschema.Draft202012Validator(json.load(f))
        self.failed = 0

    def check(self, ok, what, detail=""):
        print(("ok    " if ok else "FAIL  ") + what + (f": {detail}" if detail and not ok else ""))
        self.failed += not ok
        return ok

    def probe(self, *flags):
        """Runs the probe with --json; returns (exit status, report or None)."""
        cmd = [self.args.probe, "--json", *flags]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        try:
            report = json.loads(p.stdout)
        except json.JSONDecodeError as e:
            self.check(False, " ".join(cmd[1:]) + " prints JSON", f"{e}; stderr: {p.stderr[-2000:]}")
            return p.returncode, None
        errors = sorted(self.validator.iter_errors(report), key=lambda e: list(e.path))
        self.check(not errors, " ".join(cmd[1:]) + " matches the schema",
                   "; ".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]))
        return p.returncode, report


def cpuinfo_flags():
    key = "flags" if platform.machine() in ("x86_64", "i686") else "Features"
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name.strip() == key:
                return set(value.split())
    return set()


def check_cpu(c, report):
    cpu = report["cpu"]
    flags = cpuinfo_flags()
    table = X86_FLAGS if cpu["arch"] in ("x86_64", "i686") else ARM_FLAGS
    if cpu["arch"] in ("x86_64", "i686"):
        for name in X86_REQUIRED:
            c.check(name in cpu["features"], f"cpu feature {name} is reported")
    for name, flag in table.items():
        if name not in cpu["features"]:
            continue
        c.check(cpu["features"][name] == (flag in flags),
                f"cpu feature {name} = {cpu['features'][name]} agrees with /proc/cpuinfo",
                f"/proc/cpuinfo {'has' if flag in flags else 'lacks'} {flag}")
    c.check(cpu["logical_cpus"] >= cpu["physical_cores"] >= 1, "cpu core counts are consistent")


def check_report(c):
    code, report = c.probe()
    if report is None:
        return
    selected = report["plugins"]["selected"]
    c.check(code == 0, "gllmk-probe --json exits 0 when a plugin is usable", report["message"])
    p = subprocess.run([c.args.select], capture_output=True, text=True, timeout=120)
    c.check(p.returncode == 0 and p.stdout.strip() == selected,
            f"selected plugin ({selected}) equals gllmk_open(NULL) in-process",
            f"test-probe-select says {p.stdout.strip()!r} {p.stderr.strip()}")
    c.check(report["plugins"]["survey_selected"] == selected, "gllmk_survey predicts the selected plugin",
            f"survey says {report['plugins']['survey_selected']}")
    cands = report["plugins"]["candidates"]
    chosen = [x["name"] for x in cands if x["verdict"] == "selected"]
    c.check(chosen == [selected], "exactly the selected plugin has verdict 'selected'", str(chosen))
    c.check(all(x["reason"] for x in cands if x["verdict"] not in ("selected", "usable")),
            "every plugin not chosen says why")
    check_cpu(c, report)

    p = subprocess.run([c.args.probe], capture_output=True, text=True, timeout=300)
    c.check(p.returncode == 0 and f"gllmk_open(NULL) selects: {selected}" in p.stdout,
            "the text report names the selected plugin", p.stdout[-500:] + p.stderr[-500:])

    code, absent = c.probe("--no-capabilities", "--vulkan-loader", "/nonexistent/libvulkan.so.1",
                           "--opencl-loader", "/nonexistent/libOpenCL.so.1")
    if absent:
        c.check(code == 0 and absent["vulkan"]["state"] == "not-installed"
                and absent["opencl"]["state"] == "not-installed",
                "absent Vulkan/OpenCL loaders: reported as not installed, the probe succeeds",
                f"exit {code}, {absent['vulkan']['state']}, {absent['opencl']['state']}")

    if selected:
        code, st = c.probe("--no-capabilities", "--plugin", selected)
        if st:
            bad = [x["name"] for x in st["selftest"]["checks"] if not x["ok"]]
            c.check(code == 0 and st["selftest"]["ok"] and st["selftest"]["checks"],
                    f"self-test of {selected} passes", f"exit {code}, failed: {bad} {st['message']}")
        code, demo = c.probe("--no-capabilities", "--demo")
        if demo:
            c.check(code == 0 and demo["demo"]["status"] == "ok" and len(demo["demo"]["steps"]) >= 5,
                    f"--demo runs on {selected}", f"exit {code}, {demo['demo']['error']}")

    code, bad = c.probe("--no-capabilities", "--plugin", "no-such-plugin")
    if bad:
        c.check(code == 3 and bad["selftest"]["error"], "an unknown plugin name fails with the reason",
                f"exit {code}")


def check_capabilities(c):
    code, report = c.probe()
    if report is None:
        return
    usable = [x for x in report["plugins"]["candidates"] if x["usable"]]
    c.check(bool(usable), "at least one plugin can run here")
    for x in usable:
        caps = x["capabilities"]
        if not c.check(caps is not None and caps["opened"], f"{x['name']} opens by name",
                       caps and caps["open_error"]):
            continue
        missing = [f"{o['op']} ({o['status']}: {o['message']})" for o in caps["ops"] if o["status"] != "ok"]
        c.check(not missing, f"{x['name']} runs all {caps['total']} op variants",
                f"{len(missing)} do not: " + "; ".join(missing[:8]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("report", "capabilities"))
    ap.add_argument("--probe", required=True)
    ap.add_argument("--select", required=True)
    ap.add_argument("--schema", required=True)
    args = ap.parse_args()
    c = Checker(args)
    {"report": check_report, "capabilities": check_capabilities}[args.what](c)
    print(f"{c.failed} check(s) failed" if c.failed else "all checks passed")
    return min(c.failed, 125)


if __name__ == "__main__":
    sys.exit(main())
