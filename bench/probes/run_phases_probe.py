#!/usr/bin/env python3
"""Where a trusted run's time goes, per workload: builds the harness's TrustedRun for a gelu target
in this process (no parent's clock: its release is a no-op) and measures an honest candidate
under cProfile, printing the run's phases_s and the functions that took the most time.

    python3 bench/probes/run_phases_probe.py [--shape 8192x8192] [--dtype bf16] [--top 25]
"""
import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import hotkernel_contract as hk  # noqa: E402
import hotkernel_harness as runner  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="8192x8192")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--runs", type=int, default=2, help="runs measured; the last one is profiled")
    args = ap.parse_args()
    t = hk.Target({"name": "g", "from": "torch.nn.functional:gelu", "shape": args.shape, "device": args.device,
                   "dtype": args.dtype})
    for i in range(args.runs):
        t0 = time.perf_counter()
        run = runner.TrustedRun(hk, torch, t, 1234 + i)
        t1 = time.perf_counter()
        harness = runner.Harness(torch, hk, runner, [run.session.baseline_fn], {"run": run})
        prof = cProfile.Profile() if i == args.runs - 1 else None
        if prof:
            prof.enable()
        res = run.measure(lambda x: F.gelu(x), "candidate", harness, runner.ThreadWatch())
        if prof:
            prof.disable()
        t2 = time.perf_counter()
        print(json.dumps({"run": i, "status": res.get("status"), "reason": res.get("reason"),
                          "prepare_s": round(t1 - t0, 4), "measure_s": round(t2 - t1, 4),
                          "calls_per_sample": res.get("calls_per_sample"),
                          "phases_s": {k: round(v, 4) for k, v in run.phases.items()}}))
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.top + 15)
    print(out.getvalue())


if __name__ == "__main__":
    main()
