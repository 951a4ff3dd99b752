#!/usr/bin/env python3
"""Where a multi-workload run's time goes, and what the harness's checks after each timed sample
cost, part by part. Builds the TrustedRuns of a gelu target with workloads in this process, the
way a verify's run does (one per workload, every one watched by one Harness snapshot; no parent's
clock: its release is a no-op), measures an honest candidate at each workload under cProfile,
then times each part of the per-sample check (TrustedRun._dispatch_intact: the harness's state
against its snapshot, its code's digest, torch's dispatch tables of the operators its checks use,
the mode probes, the timed inputs' attributes), without and then with a Python audit hook (a
verify's runner has one).

    python3 bench/probes/sample_checks_probe.py [--m 2048,4096,8192,16384] [--k 8192] [--dtype bf16]
"""
import argparse
import cProfile
import io
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
    ap.add_argument("--m", default="2048,4096,8192,16384", help="the workloads' M (rows)")
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--n", type=int, default=100, help="repeats of each check's part")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    ms = [int(m) for m in args.m.split(",")]
    t = hk.Target({"name": "g", "from": "torch.nn.functional:gelu", "shape": "MxK", "device": args.device,
                   "dtype": args.dtype, "workloads": [{"M": m, "K": args.k} for m in ms]})
    t0 = time.perf_counter()
    if args.device == "cuda":  # a run's first CUDA steps, apart (in a run they are all "prepare")
        torch.cuda.init()
        t1 = time.perf_counter()
        torch.empty(1, device="cuda")
        t2 = time.perf_counter()
        try:
            hk.KernelClock.get()
        except hk.ClockError as e:
            print("no CUPTI clock: %s" % e)
        t3 = time.perf_counter()
        print("cuInit %.3f s, the context (first allocation) %.3f s, the CUPTI clock %.3f s"
              % (t1 - t0, t2 - t1, t3 - t2))
        t0 = time.perf_counter()
    # Each workload's preparation timed apart; the later ones (the first pays this process's lazy
    # imports and first kernels, which a run's fork server has paid) under cProfile.
    truns, made_s, prep = [], [], cProfile.Profile()
    for i, (_, sub) in enumerate(t.workload_targets()):
        m0 = time.perf_counter()
        if i:
            prep.enable()
        truns.append(runner.TrustedRun(hk, torch, sub, 1234 + i))
        if args.device == "cuda":
            torch.cuda.synchronize()
        prep.disable()
        made_s.append(time.perf_counter() - m0)
    print("each workload's TrustedRun made in %s s" % [round(x, 3) for x in made_s])
    if len(made_s) > 1:
        out = io.StringIO()
        pstats.Stats(prep, stream=out).sort_stats("cumulative").print_stats(args.top)
        print("the later workloads' preparation, by cumulative time:")
        print(out.getvalue())
    for tr in truns[1:]:
        if tr.session.is_cuda:
            tr._warmup_min_s, tr._warmup_window_s = hk.WARMUP_MIN_NEXT_S, hk.WARMUP_WINDOW_NEXT_S
    watched = {}
    for i, tr in enumerate(truns):
        key = "run" if i == 0 else "run%d" % (i + 1)
        own = {key: tr, key + ".prims": tr.prims, key + ".session": tr.session, key + ".l2": tr.l2,
               key + ".target": tr.target}
        watched.update(own)
        if len(truns) > 1:
            tr.watched_as = frozenset(own)
    harness = runner.Harness(torch, hk, runner, [truns[0].session.baseline_fn], watched)
    print("prepare %.3f s (%d workloads)" % (time.perf_counter() - t0, len(truns)))
    prof = cProfile.Profile()
    threads = runner.ThreadWatch()
    for tr in truns:
        t1 = time.perf_counter()
        prof.enable()
        res = tr.measure(lambda x: F.gelu(x), "candidate", harness, threads)
        prof.disable()
        print("M=%d: %s in %.3f s, %s calls a sample, phases_s %s" % (
            tr.target.shape[0] if isinstance(tr.target.shape, (list, tuple)) else -1, res.get("status"),
            time.perf_counter() - t1, res.get("calls_per_sample"), {k: round(v, 4) for k, v in tr.phases.items()}))
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(args.top)
    # The harness's own steps by their whole time, and which of them wait on the GPU (a
    # synchronisation or a host read waits for every kernel queued before it).
    stats.sort_stats("cumulative").print_stats("hotkernel_", args.top)
    stats.print_callers(r"_cuda_synchronize|tolist|_screen_passes|torch.equal|_cuda_sleep")
    print(out.getvalue())
    run = truns[-1]
    tables = list(run._dispatch_tables)
    sizes = {op: len(runner._dump_table(torch, op)) for op in tables}
    print("state entries %d, codes %d, dispatch dump chars: total %d, largest %s" % (
        len(harness._take_state()), len(harness._codes), sum(sizes.values()), max(sizes.items(), key=lambda kv: kv[1])))
    parts = [("state snapshot, all workloads", harness._take_state),
             ("state snapshot, this workload's", lambda: harness._take_state(run.watched_as)),
             ("code digest (_code_digest)", harness._code_digest),
             ("dispatch tables (%d ops)" % len(tables), lambda: [runner._dump_table(torch, op) for op in tables]),
             ("mode probes", lambda: runner._active_modes(run.prims)),
             ("inputs' attributes", run._inputs_unmarked),
             ("native pointers (native_changes)", lambda: sys.modules["hotkernel_defences"].native_changes(harness.native, harness.native_pin)),
             ("all (_dispatch_intact)", run._dispatch_intact)]

    def timed(label, f):
        f()
        t0 = time.perf_counter()
        for _ in range(args.n):
            f()
        print("  %-32s %.3f ms" % (label, (time.perf_counter() - t0) / args.n * 1e3))

    # The audit events one check raises: each one runs the harness's own audit hook in a run.
    events = {}
    counting = [False]

    def count_events(event, args):
        if counting[0]:
            events[event] = events.get(event, 0) + 1

    sys.addaudithook(count_events)
    for label, f in parts[:-1]:
        events.clear()
        counting[0] = True
        f()
        counting[0] = False
        print("  audit events of %-32s %s" % (label, dict(sorted(events.items(), key=lambda kv: -kv[1]))))
    for with_hook in (False, True):
        if with_hook:
            sys.addaudithook(lambda event, a: None)
        print("with a Python audit hook:" if with_hook else "no audit hook:")
        for label, f in parts:
            timed(label, f)
    if run.tampered:
        print("tampered (a probe bug):", run.tampered)


if __name__ == "__main__":
    main()
