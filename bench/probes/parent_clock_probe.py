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
One JSON line per run, then a summary line. --parallel P benches the honest candidate P at a
time (a loaded machine's tail, as the test suite loads it); --samples and --cache-bytes shape a
run as the adversarial suite's (3 samples of 48 calls with a 1 MiB cache); --sets-bytes lets a
sample of a big kernel have more calls (HOTKERNEL_SETS_BYTES).

    python3 bench/probes/parent_clock_probe.py --bin build/hotkernel --python /usr/bin/python3 \
        --device cpu --shape 128x128 [--n 10] [--fractions 0.02,0.05,0.1,0.2]
    python3 bench/probes/parent_clock_probe.py --python /usr/bin/python3 --iters 48 --samples 3 \
        --cache-bytes 1048576 --n 50 --parallel 2 --fractions ""
"""
import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile



def scaffold(args, out):
    cmd = [args.bin, "--python", args.python, "--json", "new", "--from", "torch.nn.functional:gelu", "--shape",
           args.shape, "--dtype", args.dtype, "--device", args.device, "--name", "gelu", "--out-dir", out, "--force"] + (["--iters", str(args.iters)] if args.iters else [])
    subprocess.run(cmd, check=True, capture_output=True, timeout=900)
    script = os.path.join(out, "gelu_candidate.py")
    if args.samples:
        with open(script) as f:
            text = f.read()
        with open(script, "w") as f:
            f.write(re.sub(r"('samples':\s*)\d+", r"\g<1>%d" % args.samples, text))
    return script


def bench(args, script, fraction):
    env = dict(os.environ, HOTKERNEL_TEST_FAKE_FRACTION=str(fraction))
    if args.cache_bytes:
        env["HOTKERNEL_CACHE_BYTES"] = str(args.cache_bytes)
    if args.sets_bytes:
        env["HOTKERNEL_SETS_BYTES"] = str(args.sets_bytes)
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
    ap.add_argument("--samples", type=int, default=None, help="samples a run (the target's samples)")
    ap.add_argument("--cache-bytes", type=int, default=None, help="HOTKERNEL_CACHE_BYTES for the runs")
    ap.add_argument("--sets-bytes", type=int, default=None, help="HOTKERNEL_SETS_BYTES for the runs")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--parallel", type=int, default=1, help="honest benches at once, each of --n runs")
    ap.add_argument("--fractions", default="0.02,0.05,0.1,0.2")
    args = ap.parse_args()
    out = tempfile.mkdtemp(prefix="parent-clock-probe-")
    honest = scaffold(args, out)
    slack = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as pool:
        honest_lines = [ln for lines in pool.map(lambda _: bench(args, honest, 0), range(args.parallel))
                        for ln in lines]
    for line in honest_lines:
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
    pcs = [ln.get("parent_clock", {}) for ln in honest_lines]
    excess = sorted(pc["excess_ms"] for pc in pcs if "excess_ms" in pc)
    print(json.dumps({"summary": True, "device": args.device, "shape": args.shape, "dtype": args.dtype,
                      "parallel": args.parallel, "honest_invalid": sum(ln.get("status") != "ok" for ln in honest_lines),
                      "excess_ms_median": statistics.median(excess) if excess else None,
                      "excess_ms_max": excess[-1] if excess else None,
                      "allowed_ms_min": min((pc["allowed_ms"] for pc in pcs if "allowed_ms" in pc), default=None),
                      "copies_ms_median": statistics.median([pc.get("copies_ms", 0) for pc in pcs]) if pcs else None,
                      "honest_runs": len(slack), "slack_max": max(slack) if slack else None,
                      "slack_median": statistics.median(slack) if slack else None,
                      "caught_share_by_fraction": caught, "smallest_fraction_always_caught": smallest}))


if __name__ == "__main__":
    main()
