#!/usr/bin/env python3
"""Where a graph-replay time parts from torch.profiler's kernel time: one process, one bf16 gelu
per shape, timed by the contract's CUDA-graph timer with one difference from the harness
switched on at a time (outputs held for checking, persisting-L2 reset before each sample, fresh
input values, the SM-clock spin after each sample), each variant timed twice in ABAB order so
drift shows. Beside each: the profiler's median kernel duration inside that variant's graph and
of rotated eager calls. Needs a CUDA torch; prints one JSON line per shape.

    python3 bench/probes/fidelity_probe.py [1024x1024 4096x8192 49152x8192]
"""
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import hotkernel_contract as hc  # noqa: E402
import hotkernel_harness as hr  # noqa: E402

HOLD_BUDGET = hr.HOLD_BUDGET_BYTES


def kernel_us(fn):
    """torch.profiler's kernel durations (us) of what fn launches."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return [e.time_range.end - e.time_range.start for e in p.events()
            if str(getattr(e, "device_type", "")).endswith("CUDA")]


def capture(fn, sets, calls, hold):
    order = hc._cycle(sets, calls)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for s in order[: len(sets)]:
            fn(*s)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    held = []
    with torch.cuda.graph(g):
        for j, s in enumerate(order):
            out = fn(*s)
            if j in hold:
                held.append(out)
            del out
    g.replay()
    torch.cuda.synchronize()
    return g, held


def spin_probe():
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(100000)
    a.record()
    torch.cuda._sleep(200000)
    b.record()
    b.synchronize()


def samples_us(g, calls, n=10, l2=None, probe=False):
    out = []
    for _ in range(n):
        if l2 is not None:
            l2.reset()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e3 / calls)
        if probe:
            spin_probe()
    return statistics.median(out)


def probe(shape):
    target = hc.Target({"name": "gelu", "from": "torch.nn.functional:gelu", "shape": shape, "dtype": "bf16",
                        "device": "cuda"})
    s = hc.Session(target)
    fn = torch.nn.functional.gelu
    sets = s.timed_sets
    hc.warm_up(fn, sets, 0.5, torch.cuda.synchronize)
    cap = max(2, int(HOLD_BUDGET // max(s.out_bytes, 1)))
    hold_all = set(range(min(s.calls, cap)))
    l2 = hr.L2Guard(True)
    l2.reset()
    graphs = {"plain": capture(fn, sets, s.calls, set()), "held": capture(fn, sets, s.calls, hold_all)}
    variants = {
        "plain": lambda: samples_us(graphs["plain"][0], s.calls),
        "held_outputs": lambda: samples_us(graphs["held"][0], s.calls),
        "l2_reset": lambda: samples_us(graphs["plain"][0], s.calls, l2=l2),
        "clock_probe": lambda: samples_us(graphs["plain"][0], s.calls, probe=True),
        "all": lambda: samples_us(graphs["held"][0], s.calls, l2=l2, probe=True),
    }
    row = {"shape": shape, "k": s.k, "calls": s.calls, "held": len(hold_all), "us": {}}
    for rnd in range(2):
        for name, f in variants.items():
            row["us"].setdefault(name, []).append(round(f(), 4))
        if rnd == 0:  # fresh values into the same tensors, as the runner does before its samples
            gen = hc._generator(s.device, 12345)
            for dst, src in zip(sets, hc.make_timed_sets(target, gen, s.device, s.k)):
                for d, x in zip(dst, src):
                    d.copy_(x)
            torch.cuda.synchronize()
    order = hc._cycle(sets, s.calls)

    def eager():
        for x in order:
            fn(*x)
    row["profiler_eager_us"] = round(statistics.median(kernel_us(eager)), 4)
    for name in ("plain", "held"):
        g = graphs[name][0]
        row["profiler_graph_%s_us" % name] = round(statistics.median(kernel_us(lambda: [g.replay() for _ in range(2)])), 4)
    row["profiler_eager_after_us"] = round(statistics.median(kernel_us(eager)), 4)
    graphs.clear()
    torch.cuda.empty_cache()
    return row


def first_calls():
    """What a fresh CUDA context pays before the timed part of a run: the context, a Session
    (inputs, fp32 reference), and the first and second hk.check (kernels load lazily)."""
    import time
    t = time.perf_counter
    row = {}
    t0 = t()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    row["cuda_context_s"] = t() - t0
    target = hc.Target({"name": "gelu", "from": "torch.nn.functional:gelu", "shape": "4096x8192", "dtype": "bf16",
                        "device": "cuda"})
    t0 = t()
    s = hc.Session(target)
    row["session_s"] = t() - t0
    for i in range(3):
        t0 = t()
        out = torch.nn.functional.gelu(s.check_inputs[0])
        c = hc.check(out, s.check_ref, "bf16", s.expected)
        torch.cuda.synchronize()
        row["call_and_check_%d_s" % (i + 1)] = t() - t0
    t0 = t()
    s2 = hc.Session(target)
    row["second_session_s"] = t() - t0
    row["ok"] = c["ok"]
    del s, s2
    torch.cuda.empty_cache()
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}


def main():
    shapes = sys.argv[1:] or ["1024x1024", "4096x8192", "49152x8192"]
    print(json.dumps({"first_calls": first_calls()}), flush=True)
    for shape in shapes:
        print(json.dumps(probe(shape)), flush=True)


if __name__ == "__main__":
    main()
