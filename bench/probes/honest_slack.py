#!/usr/bin/env python3
"""The parent's clock's slack on the honest set (tests/adversarial/honest: torch.compile, Triton, a
CUDA extension, ...): each honest candidate benched on its own, one after another (the card or
the machine to itself), against the gelu target tests/gpu/check_cheats.py scaffolds. One JSON line
per run (its status and parent_clock), then one summary line per candidate: runs, how many were
not ok, and the share of the allowance its honest runs used (excess / allowance; under 1 holds).

    python3 bench/probes/honest_slack.py --python python3 --device cuda [--n 5] [--only blank,compiled]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "adversarial"))
import harness  # noqa: E402  (scaffold, make_candidate: the cheat table's own)


def bench(python, script, n):
    p = subprocess.run([harness.binary(), "--python", python, "--json", "bench", str(script), "--n", str(n),
                        "--timeout-s", "600"], capture_output=True, text=True, timeout=1800)
    try:
        return [r.get("line", {}) for r in json.loads(p.stdout).get("runs", [])], ""
    except ValueError:
        return [], (p.stderr or p.stdout)[-600:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default="python3")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--shape", default="4096x4096", help="the gelu's shape (fp32), as check_cheats.py's")
    ap.add_argument("--n", type=int, default=5, help="runs a candidate")
    ap.add_argument("--only", default="", help="comma-separated honest names (default: all)")
    a = ap.parse_args()
    only = {s for s in a.only.split(",") if s}
    _, honest = harness.all_bodies()
    with tempfile.TemporaryDirectory(prefix="hk-honest-slack-") as d:
        base = harness.scaffold(d, a.python, device=a.device, shape=a.shape, iters=100, samples=10, warmup_s="auto")
        for body in honest:
            if only and body.stem not in only:
                continue
            if a.device != "cpu" and harness.module_flags(body)["cpu_only"]:
                continue  # works on the CPU's eager loop only (check_cheats.py skips it too)
            cand = harness.make_candidate(d, body, base)
            lines, err = bench(a.python, cand, a.n)
            used = []
            for ln in lines:
                pc = ln.get("parent_clock") or {}
                if pc.get("allowed_ms"):
                    used.append(pc["excess_ms"] / pc["allowed_ms"])
                print(json.dumps({"candidate": body.stem, "status": ln.get("status"), "timer": ln.get("timer"),
                                  "ms": ln.get("ms"), "calls": ln.get("calls_per_sample"), "parent_clock": pc}))
            print(json.dumps({"summary": body.stem, "runs": len(lines), "not_ok": sum(ln.get("status") != "ok" for ln in lines),
                              "used_median": round(statistics.median(used), 3) if used else None,
                              "used_max": round(max(used), 3) if used else None, "error": err[:300] or None}),
                  flush=True)


if __name__ == "__main__":
    main()
