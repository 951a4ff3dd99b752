#!/usr/bin/env python3
"""How a graph-timed kernel's time moves with time, inside one process and between processes:
the question behind how long a run should sample. One bf16 gelu per shape, its inputs rotated
through 3x L2 (one set per call, as the harness does), one CUDA graph of the calls,
replayed back to back for --seconds with CUDA events around every replay. The per-call times are
then grouped into consecutive windows of about W ms of GPU time, and for each W the spread of
the window means is printed (cv %): how much a run that samples W ms would move from run to
run if time were the only source. With --procs N the same runs in N fresh processes, and the
spread of their whole-probe means is the between-process part. nvidia-smi's SM clock, power and
temperatures every 100 ms during each probe are summarized beside it. One JSON line per process.

    python3 bench/probes/drift_probe.py [--seconds 4] [--procs 3] [49152x8192 4096x8192]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

WINDOWS_MS = (1, 3, 10, 30, 100, 300, 1000)


def gelu_graph(shape, replays):
    """A bf16 gelu of `shape` over k input sets (3x L2 of them, at least 2, one set per call),
    captured as one CUDA graph and replayed `replays` times. Returns (torch, sets, k, graph)."""
    import torch
    dev = torch.device("cuda", 0)
    rows, cols = (int(v) for v in shape.split("x"))
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
    k = max(2, math.ceil(3 * l2 / (rows * cols * 2)))
    sets = [torch.randn(rows, cols, device=dev, dtype=torch.bfloat16) for _ in range(k)]
    fn = torch.nn.functional.gelu
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for s in sets:
            fn(s)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for s in sets:
            fn(s)
    for _ in range(replays):
        g.replay()
    torch.cuda.synchronize()
    return torch, sets, k, g


def probe(shape, seconds):
    torch, _, k, g = gelu_graph(shape, 20)
    per_call, t_end = [], time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(50)]
        for a, b in evs:
            a.record()
            g.replay()
            b.record()
        torch.cuda.synchronize()
        per_call += [a.elapsed_time(b) / k for a, b in evs]
    out = {"shape": shape, "calls_per_replay": k, "replays": len(per_call),
           "median_us": round(statistics.median(per_call) * 1e3, 3),
           "mean_us": round(statistics.fmean(per_call) * 1e3, 3)}
    replay_ms = statistics.median(per_call) * k
    spread = {}
    for w in WINDOWS_MS:
        n = max(1, round(w / replay_ms))
        means = [statistics.fmean(per_call[i:i + n]) for i in range(0, len(per_call) - n + 1, n)]
        if len(means) >= 3:
            spread["%dms" % w] = {"windows": len(means),
                                  "cv_pct": round(100 * statistics.stdev(means) / statistics.fmean(means), 3),
                                  "range_pct": round(100 * (max(means) - min(means)) / statistics.fmean(means), 3)}
    out["window_spread"] = spread
    return out


def emulated_runs(shape, runs, idle_s, warm_s, samples_per_run):
    """Runs as the harness times them, in one process: idle (the other side's process
    starting), a warm-up of back-to-back replays, then samples, each a timed replay behind a
    start spin with the SM-clock spin after it. Three sampling policies take turns run by run:
    'now' (samples back to back), 'fresh' (every input redrawn in place before each sample, as
    the runner does), 'discard' and 'fresh_discard' (a sample whose clock reads under 90% of the
    max SM clock is dropped and the GPU rests 50 ms, growing 1.5x to 0.5 s, as nvbench does at
    75%). A 10 ms rest before every sample was tried too: it made every sample slower (+2% at
    ~500 us, +18% at ~45 us, `h200-2026-11-30-d/2-emulated-runs.jsonl`)."""
    torch, sets, k, g = gelu_graph(shape, 1)
    max_mhz = float(subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True).stdout.split()[0])

    def clock_mhz():
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(100000)
        a.record()
        torch.cuda._sleep(200000)
        b.record()
        b.synchronize()
        return 200000 / (a.elapsed_time(b) * 1e3)

    def sample():
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(50000)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / k * 1e3, clock_mhz()

    policies = ("now", "fresh", "discard", "fresh_discard")
    per = {p: [] for p in policies}
    for r in range(runs):
        policy = policies[r % len(policies)]
        time.sleep(idle_s)
        t_end = time.perf_counter() + warm_s
        while time.perf_counter() < t_end:
            g.replay()
            torch.cuda.synchronize()
        kept, dropped, rest = [], 0, 0.05
        while len(kept) < samples_per_run:
            if policy.startswith("fresh"):
                for t in sets:
                    t.normal_()
            us, mhz = sample()
            if policy.endswith("discard") and mhz < 0.9 * max_mhz and dropped < 20:
                dropped += 1
                time.sleep(rest)
                rest = min(0.5, rest * 1.5)
                continue
            kept.append((us, mhz))
        per[policy].append({"median_us": statistics.median(u for u, _ in kept),
                            "min_mhz": min(m for _, m in kept), "dropped": dropped})
    out = {"shape": shape, "runs": runs, "max_sm_mhz": max_mhz}
    for p, rs in per.items():
        meds = [x["median_us"] for x in rs]
        out[p] = {"mean_of_medians_us": round(statistics.fmean(meds), 3),
                  "between_run_cv_pct": round(100 * statistics.stdev(meds) / statistics.fmean(meds), 3),
                  "range_pct": round(100 * (max(meds) - min(meds)) / statistics.fmean(meds), 3),
                  "medians_us": [round(m, 2) for m in meds],
                  "dropped": [x["dropped"] for x in rs], "min_mhz": [round(x["min_mhz"]) for x in rs]}
    return out


def smi_summary(path):
    cols = {}
    try:
        with open(path) as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return None
    for ln in lines[1:]:
        parts = [p.strip() for p in ln.split(",")]
        for name, v in zip(("sm_mhz", "mem_mhz", "power_w", "temp_c", "mem_temp_c"), parts[1:]):
            try:
                cols.setdefault(name, []).append(float(v.split()[0]))
            except (ValueError, IndexError):
                pass
    return {name: {"min": min(v), "median": statistics.median(v), "max": max(v)} for name, v in cols.items() if v}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", nargs="*", default=["49152x8192", "4096x8192"])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--runs", type=int, default=0,
                    help="instead: this many emulated runs in one process, sampling policies taking turns")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.runs:
        for shape in args.shapes:
            print(json.dumps(emulated_runs(shape, args.runs, 0.9, 0.25, 10)), flush=True)
        return 0
    if args.child:
        print(json.dumps(probe(args.shapes[0], args.seconds)), flush=True)
        return 0
    for shape in args.shapes:
        means = []
        for i in range(args.procs):
            smi_path = "/tmp/drift-probe-smi-%d.csv" % os.getpid()
            smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,"
                                    "temperature.gpu,temperature.memory", "--format=csv,nounits", "-lms", "100"],
                                   stdout=open(smi_path, "w"), stderr=subprocess.DEVNULL)
            try:
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--seconds",
                                    str(args.seconds), shape], capture_output=True, text=True, timeout=120)
            finally:
                smi.terminate()
                smi.wait(timeout=10)
            if p.returncode != 0:
                print(json.dumps({"shape": shape, "process": i, "error": p.stderr.strip()[-800:]}), flush=True)
                continue
            row = json.loads(p.stdout.strip().splitlines()[-1])
            row["process"] = i
            row["nvidia_smi"] = smi_summary(smi_path)
            means.append(row["mean_us"])
            print(json.dumps(row), flush=True)
        if len(means) >= 2:
            print(json.dumps({"shape": shape, "between_process_means_us": means,
                              "between_process_cv_pct": round(100 * statistics.stdev(means) / statistics.fmean(means), 3)}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
