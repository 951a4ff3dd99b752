#!/usr/bin/env python3
"""What a parent's-clock window holds, step by step: builds the harness's TrustedRun for a gelu
target in this process with a recording release (active, its windows timed here from the secret's
arrival to "done"), runs the empty samples and an honest candidate's samples, and prints the median
of each step inside the windows, empty and timed apart. The excess the parent bounds (a timed
window less its fixed cost and the reported calls) is read here step by step.

    python3 bench/probes/window_probe.py [--shape 8192x8192] [--dtype bf16] [--runs 2]
"""
import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import hotkernel_contract as hk  # noqa: E402
import hotkernel_harness as runner  # noqa: E402


class RecordingRelease:
    """The parent's half, in-process: a window runs from the secret's return to done()."""
    active = True

    def __init__(self):
        self.windows, self.open, self.kind, self.steps = [], None, None, {}

    def ready(self, kind, n=None):
        self.kind, self.steps = kind, {}
        self.open = time.perf_counter()
        return random.getrandbits(64)

    def done(self, copies=0, copy_s=0.0):
        self.windows.append((self.kind, (time.perf_counter() - self.open) * 1e3, self.steps))
        self.open = None

    def note(self, key, value):
        pass

    def importing(self):
        pass

    def end(self):
        pass


def timed(rel, name, fn):
    def wrapper(*a, **k):
        if rel.open is None:
            return fn(*a, **k)
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            rel.steps[name] = rel.steps.get(name, 0.0) + (time.perf_counter() - t) * 1e3
    return wrapper


def med(v):
    v = sorted(v)
    return round(v[len(v) // 2], 4) if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="8192x8192")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    t = hk.Target({"name": "g", "from": "torch.nn.functional:gelu", "shape": args.shape, "device": args.device,
                   "dtype": args.dtype})
    for i in range(args.runs):
        rel = RecordingRelease()
        run = runner.TrustedRun(hk, torch, t, 1234 + i, release=rel)
        for name in ("_unquiet", "_quiet", "_mix", "_clock_start", "_picked"):
            setattr(run, name, timed(rel, name, getattr(run, name)))
        p = run.prims
        for name in ("replay", "dev_sync", "ev_sync"):
            if getattr(p, name, None) is not None:
                setattr(p, name, timed(rel, name, getattr(p, name)))
        run.calibrate_release()
        harness = runner.Harness(torch, hk, runner, [run.session.baseline_fn], {"run": run})
        res = run.measure(lambda x: F.gelu(x), "candidate", harness, runner.ThreadWatch())
        by = {}
        for kind, ms, steps in rel.windows:
            d = by.setdefault(kind, {"window": []})
            d["window"].append(ms)
            for k, v in steps.items():
                d.setdefault(k, []).append(v)
        out = {"run": i, "status": res.get("status"), "timer": res.get("timer"), "calls_per_sample": res.get("calls_per_sample"),
               "reported_sample_ms": round(res.get("ms", 0) * (res.get("calls_per_sample") or 0), 4)}
        for kind, d in by.items():
            out[kind] = {k: med(v) for k, v in d.items()}
            out[kind]["n"] = len(d["window"])
        print(json.dumps(out))
    if args.device == "cuda":
        l2_reset_effect(run, t)


def l2_reset_effect(run, t):
    """A window (wall, from the host) over a replay of a graph of 8 gelu calls, after the
    harness's persisting-L2 reset and a device sync, and after the sync alone."""
    x = run.session.timed_sets[0][0]
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        F.gelu(x)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        for _ in range(8):
            F.gelu(x)
    one = torch.cuda.CUDAGraph()
    y = torch.zeros(1, device="cuda")
    with torch.cuda.graph(one):
        y.add_(1)
    res = {}
    for name, graph in (("gelu8", g), ("one_node", one)):
        for reset in (False, True, False, True):
            walls = []
            for _ in range(20):
                if reset:
                    run.l2.reset()
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                graph.replay()
                torch.cuda.synchronize()
                walls.append((time.perf_counter() - t0) * 1e3)
            res.setdefault("%s reset=%s" % (name, reset), []).append(med(walls))
    print(json.dumps({"l2_reset_effect_ms": res, "l2_lib": run.l2.lib is not None}))


if __name__ == "__main__":
    main()
