#!/usr/bin/env python3
"""How tight the parent's clock is (src/measure/parent_clock.h): its slack on honest runs, and the
smallest faked speedup it catches. Scaffolds a gelu target with `hotkernel new`, then benches
(one run each, `--n`):
  - the honest candidate: each run's parent_clock (window, fixed cost, excess, allowance); the
    slack is excess / allowance (under 1 holds; the margin left is 1 - slack);
  - candidates that shrink the runner's own clocks by a fraction f (the frame-walking cheat of
    tests/adversarial/cheats/frame_walk_clock.py, with f from FAKE_FRACTION): whether the bound
    broke, for each f in --fractions.
One JSON line per run, then a summary line.

    python3 bench/probes/parent_clock_probe.py --bin build/hotkernel --python /usr/bin/python3 \
        --device cpu --shape 128x128 [--n 10] [--fractions 0.02,0.05,0.1,0.2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

FAKE = '''
import os
import sys

import torch.nn.functional as F

_F = 1.0 - float(os.environ.get("FAKE_FRACTION", "0"))


def _shrink(real):
    t0 = real()
    return lambda: t0 + (real() - t0) * _F


def _scaled(fn):
    def wrapped(*a, **k):
        out = fn(*a, **k)
        if isinstance(out, tuple) and out and isinstance(out[0], float):
            return (out[0] * _F,) + out[1:]
        return out * _F if isinstance(out, float) else out
    return wrapped


_f = sys._getframe()
while _f is not None:
    for _v in list(_f.f_locals.values()):
        _p = getattr(_v, "prims", None)
        if _p is not None and hasattr(_p, "perf") and hasattr(_v, "session"):
            _p.perf = _shrink(_p.perf)
            if hasattr(_p, "elapsed"):
                _p.elapsed = _scaled(_p.elapsed)
            if hasattr(_v, "_per_call"):
                _v._per_call = _scaled(_v._per_call)
    _f = _f.f_back


def kernel(x):
    return F.gelu(x)
'''


def scaffold(args, out):
    cmd = [args.bin, "--python", args.python, "--json", "new", "--from", "torch.nn.functional:gelu", "--shape",
           args.shape, "--dtype", args.dtype, "--device", args.device, "--name", "gelu", "--out-dir", out, "--force"] + (["--iters", str(args.iters)] if args.iters else [])
    subprocess.run(cmd, check=True, capture_output=True, timeout=900)
    cand = os.path.join(out, "gelu_candidate.py")
    text = open(cand).read()
    head = text[: text.index("\nfrom torch.nn.functional import gelu")]  # the header and TARGET
    fake = os.path.join(out, "gelu_fake.py")
    with open(fake, "w") as f:
        f.write(head + "\n" + FAKE)
    return cand, fake


def bench(args, script, fraction):
    env = dict(os.environ, FAKE_FRACTION=str(fraction))
    p = subprocess.run([args.bin, "--python", args.python, "--json", "bench", script, "--n", str(args.n)],
                       capture_output=True, text=True, timeout=1800, env=env)
    try:
        res = json.loads(p.stdout)
    except ValueError:
        sys.exit("bench failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
    return [r.get("line", {}) for r in res.get("runs", [])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/hotkernel")
    ap.add_argument("--python", default="python3")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--shape", default="128x128")
    ap.add_argument("--dtype", default="fp32")
    ap.add_argument("--iters", type=int, default=None, help="calls per sample (the target's iters)")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--fractions", default="0.02,0.05,0.1,0.2")
    args = ap.parse_args()
    out = tempfile.mkdtemp(prefix="parent-clock-probe-")
    honest, fake = scaffold(args, out)
    slack = []
    for line in bench(args, honest, 0):
        pc = line.get("parent_clock", {})
        if pc.get("allowed_ms"):
            slack.append(pc["excess_ms"] / pc["allowed_ms"])
        print(json.dumps({"candidate": "honest", "status": line.get("status"), "timer": line.get("timer"),
                          "ms": line.get("ms"), "calls": line.get("calls_per_sample"), "parent_clock": pc}))
    caught = {}
    for f in [float(x) for x in args.fractions.split(",") if x]:
        lines = bench(args, fake, f)
        broke = [ln.get("parent_clock", {}).get("bound") == "broken" for ln in lines]
        caught[f] = sum(broke) / float(len(broke) or 1)
        for ln in lines:
            print(json.dumps({"candidate": "fake", "fraction": f, "status": ln.get("status"), "ms": ln.get("ms"),
                              "parent_clock": ln.get("parent_clock", {}), "reason": (ln.get("reason") or "")[:200]}))
    smallest = min([f for f, c in caught.items() if c == 1.0] or [None], key=lambda v: 9 if v is None else v)
    print(json.dumps({"summary": True, "device": args.device, "shape": args.shape, "dtype": args.dtype,
                      "honest_runs": len(slack), "slack_max": max(slack) if slack else None,
                      "slack_median": statistics.median(slack) if slack else None,
                      "caught_share_by_fraction": caught, "smallest_fraction_always_caught": smallest}))


if __name__ == "__main__":
    main()
