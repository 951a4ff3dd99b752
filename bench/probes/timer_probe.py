#!/usr/bin/env python3
"""GPU probe behind the contract's timer choices: prints, for bf16 gelu at ~3 us, ~45 us and
~500 us, the contract's graph-replay time against torch.profiler's kernel durations (of eager
calls after warm-up and of the graph replays themselves), the ramp of replay times from an idle
GPU (how long warm-up must be), the cost of each phase of one run, and the SM clock read by a
timed spin kernel against nvidia-smi's. Needs a CUDA torch; prints one JSON object at the end.

    python3 bench/probes/timer_probe.py [--out FILE]
    python3 bench/probes/timer_probe.py --truth 1024x1024 4096x8192   # profiler kernel time only (bench/speed.py)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

T0 = time.perf_counter()
import torch  # noqa: E402
import hotkernel_contract as hc  # noqa: E402

IMPORT_S = time.perf_counter() - T0


def smi_clock():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks_event_reasons.active",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10).stdout
        return out.strip()
    except Exception as e:  # noqa: BLE001
        return str(e)


def spin_mhz(cycles=2_000_000):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(cycles)
    b.record()
    b.synchronize()
    return cycles / (a.elapsed_time(b) * 1e3)  # cycles per us = MHz


def profiled_kernels(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as p:
        fn()
        torch.cuda.synchronize()
    ev = [e for e in p.events() if str(getattr(e, "device_type", "")).endswith("CUDA")]
    out = []
    for e in ev:
        tr = e.time_range
        out.append((e.name, tr.start, tr.end))
    return out


def probe_shape(shape, out):
    target = hc.Target({"name": "gelu", "from": "torch.nn.functional:gelu", "shape": shape, "dtype": "bf16",
                        "device": "cuda"})
    t = time.perf_counter()
    s = hc.Session(target)
    prep_s = time.perf_counter() - t
    fn = torch.nn.functional.gelu
    sets = s.timed_sets
    t = time.perf_counter()
    warm = hc.warm_up(fn, sets, 0.5, torch.cuda.synchronize)
    t = time.perf_counter()
    samples, last, graph = hc.time_cuda_graph(fn, sets, s.calls, 10)
    time_s = time.perf_counter() - t
    graph_us = statistics.median(samples) * 1e3

    # profiler over eager rotated calls (warm)
    order = hc._cycle(sets, s.calls)

    def eager():
        for x in order:
            fn(*x)
    k_eager = [(e - b) for n, b, e in profiled_kernels(eager) if "gelu" in n.lower() or "elementwise" in n.lower()]

    def replays():
        for _ in range(3):
            graph.replay()
    kg = profiled_kernels(replays)
    k_graph = [(e - b) for n, b, e in kg]
    busy = hc.busy_time([(b, e) for n, b, e in kg])
    span = (max(e for _, _, e in kg) - min(b for _, b, _ in kg)) if kg else None
    row = {"shape": shape, "k": s.k, "calls": s.calls, "prepare_s": round(prep_s, 3), "warmup_s": warm,
           "time_s": round(time_s, 3), "graph_us": round(graph_us, 4),
           "profiler_eager_median_us": round(statistics.median(k_eager), 4) if k_eager else None,
           "profiler_eager_n": len(k_eager),
           "profiler_graph_n": len(k_graph),
           "profiler_graph_median_us": round(statistics.median(k_graph), 4) if k_graph else None,
           "profiler_graph_busy_per_call_us": round(busy / (3 * s.calls), 4) if kg else None,
           "profiler_graph_span_per_call_us": round(span / (3 * s.calls), 4) if span else None}
    # gap: graph replay of a trivial kernel (one-element add)
    z = torch.zeros(1, device="cuda")
    g2 = torch.cuda.CUDAGraph()
    st = torch.cuda.Stream()
    with torch.cuda.stream(st):
        z.add_(1)
    torch.cuda.synchronize()
    with torch.cuda.graph(g2):
        for _ in range(100):
            z.add_(1)
    g2.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    g2.replay()
    b.record()
    b.synchronize()
    row["graph_trivial_node_us"] = round(a.elapsed_time(b) * 10, 4)
    kt = profiled_kernels(lambda: g2.replay())
    row["profiler_trivial_kernel_us"] = round(statistics.median([e - b for _, b, e in kt]), 4) if kt else None
    out.append(row)
    print(json.dumps(row), file=sys.stderr, flush=True)
    return s, fn, graph


def ramp(graph, calls, seconds=1.5, idle_s=3.0):
    """Replay times from an idle GPU: [t since start (s), us per call] every replay."""
    torch.cuda.synchronize()
    time.sleep(idle_s)
    clock_idle = smi_clock()
    pts = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        pts.append((round(time.perf_counter() - t0, 4), round(a.elapsed_time(b) * 1e3 / calls, 4)))
    return clock_idle, pts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--truth", nargs="+", metavar="SHAPE",
                    help="only print {shape: torch.profiler median kernel us of rotated eager calls after warm-up}")
    a = ap.parse_args()
    if a.truth:
        rows = []
        for shape in a.truth:
            probe_shape(shape, rows)
            torch.cuda.empty_cache()
        print(json.dumps({"truth_us": {r["shape"]: r["profiler_eager_median_us"] for r in rows}}))
        return
    res = {"import_s": round(IMPORT_S, 3)}
    t = time.perf_counter()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    res["cuda_init_s"] = round(time.perf_counter() - t, 3)
    res["smi_before"] = smi_clock()
    rows = []
    keep = None
    for shape in ("1024x1024", "4096x8192", "49152x8192"):
        try:
            s, fn, graph = probe_shape(shape, rows)
        except Exception as e:  # noqa: BLE001 - a probe reports what failed and goes on
            print("probe %s failed: %s: %s" % (shape, type(e).__name__, e), flush=True)
            continue
        if shape == "4096x8192":
            keep = (s, graph)
        else:
            del s, graph
        torch.cuda.empty_cache()
    res["shapes"] = rows
    s, graph = keep
    for idle in (0.3, 3.0):
        try:
            clk, pts = ramp(graph, s.calls, idle_s=idle)
        except Exception as e:  # noqa: BLE001
            print("ramp failed: %s" % e, flush=True)
            continue
        first = pts[:3]
        steady = statistics.median(p[1] for p in pts[len(pts) // 2:])
        settle = next((p[0] for p in pts if abs(p[1] / steady - 1) < 0.005), None)
        res["ramp_idle_%.1fs" % idle] = {"smi_idle": clk, "first": first, "steady_us": steady,
                                          "settled_within_0.5pct_at_s": settle,
                                          "points": pts[:: max(1, len(pts) // 40)]}
        print(json.dumps({"idle_s": idle, "first": first, "steady": steady, "settle_s": settle}), flush=True)
    mh = []
    for _ in range(5):
        mh.append(round(spin_mhz(), 1))
    res["spin_mhz"] = mh
    res["smi_after"] = smi_clock()
    print(json.dumps({k: v for k, v in res.items() if k not in ("shapes",) and not k.startswith("ramp")}), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
