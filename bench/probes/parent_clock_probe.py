#!/usr/bin/env python3
"""How tight the parent's clock is (src/measure/parent_clock.h): its slack on honest runs, and the
smallest faked speedup it catches. Scaffolds a gelu target with `hotkernel new`, then benches
(one run each, `--n`):
  - the honest candidate: each run's parent_clock (window, fixed cost, excess, allowance); the
    slack is excess / allowance (under 1 holds; the margin left is 1 - slack);
  - the same candidate with HOTKERNEL_TEST_FAKE_FRACTION=f: the runner reports its samples f
    shorter than it timed them, as a clock fake that got past every check inside the process
    would (python/hotkernel_harness.py, _fake_fraction): whether the bound broke, for each f in
    --fractions.
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



def scaffold(args, out):
    cmd = [args.bin, "--python", args.python, "--json", "new", "--from", "torch.nn.functional:gelu", "--shape",
           args.shape, "--dtype", args.dtype, "--device", args.device, "--name", "gelu", "--out-dir", out, "--force"] + (["--iters", str(args.iters)] if args.iters else [])
    subprocess.run(cmd, check=True, capture_output=True, timeout=900)
    return os.path.join(out, "gelu_candidate.py")


def bench(args, script, fraction):
    env = dict(os.environ, HOTKERNEL_TEST_FAKE_FRACTION=str(fraction))
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
    honest = scaffold(args, out)
    slack = []
    for line in bench(args, honest, 0):
        pc = line.get("parent_clock", {})
        if pc.get("allowed_ms"):
            slack.append(pc["excess_ms"] / pc["allowed_ms"])
        print(json.dumps({"candidate": "honest", "status": line.get("status"), "timer": line.get("timer"),
                          "ms": line.get("ms"), "calls": line.get("calls_per_sample"), "parent_clock": pc}))
    caught = {}
    for f in [float(x) for x in args.fractions.split(",") if x]:
        lines = bench(args, honest, f)
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
