#!/usr/bin/env python3
"""Whether a CPU call's time depends on the heap's page faults, and whether a steady heap ends that.

The harness's CPU sample, emulated: K fresh input sets a sample, one call per set in turn for
`calls` calls, each timed by perf_counter, every output held until the sample is over (as the
harness holds them for its checks), then freed. "keep" is a candidate that keeps its last output of
each set alive (cheats/detect_warmup_env.py does, though its trick itself is inert): the freed
outputs then sit below a live block, where glibc cannot give them back. "default" is glibc's own
settings, "steady" the harness's (_steady_heap: no trim, no mmap'd blocks). Prints one JSON line
per (heap, candidate): {"heap", "candidate", "ms_per_call", "faults_per_sample"}, each a list over
the samples (the first sample faults in the heap whatever the settings).

    /usr/bin/python3 bench/probes/heap_probe.py [--shape 128x128] [--samples 8]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time


def one(heap, candidate, shape, samples, k, calls):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
    if heap == "steady":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
        import hotkernel_harness
        assert hotkernel_harness._steady_heap()["steady"]
    last, ms, faults = {}, [], []
    for _ in range(samples):
        sets = [torch.randn(*shape) for _ in range(k)]
        outs = []
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        total = 0.0
        for j in range(calls):
            x = sets[j % k]
            t0 = time.perf_counter()
            y = F.gelu(x)
            total += time.perf_counter() - t0
            if candidate == "keep":
                last[j % k] = y
            outs.append(y)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        ms.append(round(total / calls * 1e3, 4))
        del outs, sets, x, y
    print(json.dumps({"heap": heap, "candidate": candidate, "shape": list(shape), "ms_per_call": ms,
                      "faults_per_sample": faults}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="128x128")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--k", type=int, default=12)
    ap.add_argument("--calls", type=int, default=48)
    ap.add_argument("--one", nargs=2, metavar=("HEAP", "CANDIDATE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    shape = tuple(int(n) for n in a.shape.split("x"))
    if a.one:
        return one(a.one[0], a.one[1], shape, a.samples, a.k, a.calls)
    for heap in ("default", "steady"):
        for cand in ("blank", "keep"):  # each in a fresh process: a heap's history is the point
            subprocess.run([sys.executable, __file__, "--shape", a.shape, "--samples", str(a.samples), "--k",
                            str(a.k), "--calls", str(a.calls), "--one", heap, cand], check=True, timeout=300)


if __name__ == "__main__":
    main()
