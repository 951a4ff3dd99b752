#!/usr/bin/env python3
"""Where a CUPTI-timed graph replay's host time goes: a graph of gelu calls replayed with CUPTI's
activity enabled for each replay and disabled after (the harness's samples), enabled once for all
of them, and without CUPTI; each replay's host time (the launch call), its sync, and the kernels'
own time on CUPTI's records.

    python3 bench/probes/cupti_launch_probe.py [--shape 4096x8192] [--calls 8]
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import hotkernel_contract as hk  # noqa: E402


def med(v):
    v = sorted(v)
    return round(v[len(v) // 2], 4)


def graph_of(fn, calls):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="4096x8192")
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--n", type=int, default=15)
    args = ap.parse_args()
    m, k = (int(v) for v in args.shape.split("x"))
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    y = torch.zeros(1, device="cuda")
    graphs = {"gelu": graph_of(lambda: F.gelu(x), args.calls), "one_node": graph_of(lambda: y.add_(1), 1)}
    clock = hk.KernelClock.get()
    for g in graphs.values():  # the first instrumented replay of each graph (~8 ms) left out
        clock.start()
        g.replay()
        torch.cuda.synchronize()
        clock.stop()
    out = {}
    for name, g in graphs.items():
        for mode in ("per_sample", "enabled_once", "per_sample_after_dummy", "no_cupti", "per_sample"):
            launch, sync, kern = [], [], []
            if mode == "enabled_once":
                clock.start()
            for _ in range(args.n):
                torch.cuda.synchronize()
                if mode.startswith("per_sample"):
                    clock.start()
                    if mode == "per_sample_after_dummy":
                        graphs["one_node"].replay()
                        torch.cuda.synchronize()
                        clock._records = []
                t0 = time.perf_counter()
                g.replay()
                t1 = time.perf_counter()
                torch.cuda.synchronize()
                t2 = time.perf_counter()
                if mode.startswith("per_sample"):
                    recs = clock.stop()
                    kern.append((recs[-1][1] - recs[0][0]) / 1e6 if recs else 0.0)
                elif mode == "enabled_once":
                    clock._call("cuptiActivityFlushAll", 1)
                    recs, clock._records = sorted(clock._records), []
                    kern.append((recs[-1][1] - recs[0][0]) / 1e6 if recs else 0.0)
                launch.append((t1 - t0) * 1e3)
                sync.append((t2 - t1) * 1e3)
            if mode == "enabled_once":
                clock.stop()
            out.setdefault(name, []).append({"mode": mode, "launch_ms": med(launch), "sync_ms": med(sync),
                                             "window_ms": round(med([a + b for a, b in zip(launch, sync)]), 4),
                                             "kernels_span_ms": med(kern) if kern else None})
    for name, rows in out.items():
        for r in rows:
            print(json.dumps(dict(graph=name, **r)))


if __name__ == "__main__":
    main()
