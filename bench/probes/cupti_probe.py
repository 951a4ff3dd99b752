#!/usr/bin/env python3
"""What CUPTI's kernel records say about the timed graph, and what reading them costs.

A CUDA-graph replay timed by events counts the gap between one kernel node and the next
(~0.35 us on an H200): a 2.7 us kernel reads ~3.1 us a call. torch.profiler reads each kernel's
own start and end from CUPTI, but starting it costs seconds a process. This probe reads the
same records straight from libcupti (the one torch loads) through ctypes, and times each step:
loading it, enabling kernel records, the first replay with them on, a flush. Per shape it
compares, for the same replays, the event time a call against CUPTI's kernel busy time a call,
with the outputs freed (the contract's own graph) and held (as the harness holds them),
and CUPTI's median kernel time over rotated eager calls (what `timer_probe.py --truth` reads
through torch.profiler). With --fork, the same in a child forked from a parent that imported
torch without touching CUDA, as the fork server does. One JSON line per step.

    python3 bench/probes/cupti_probe.py [--fork] [1024x1024 4096x8192 49152x8192]
"""
import argparse
import ctypes
import glob
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

T0 = time.perf_counter()
import torch  # noqa: E402
import hotkernel_contract as hc  # noqa: E402

IMPORT_S = time.perf_counter() - T0
KIND_KERNEL, KIND_CONCURRENT_KERNEL = 3, 10
BUF_BYTES = 8 << 20


def out(**kw):
    print(json.dumps(kw), flush=True)


def find_cupti():
    for line in open("/proc/self/maps"):
        if "libcupti" in line:
            return line.split()[-1], "mapped"
    roots = [os.path.dirname(os.path.dirname(torch.__file__))]
    for r in roots:
        for p in sorted(glob.glob(os.path.join(r, "nvidia", "**", "libcupti.so*"), recursive=True)):
            return p, "site-packages"
    for p in sorted(glob.glob("/usr/local/cuda*/**/libcupti.so*", recursive=True)):
        return p, "toolkit"
    return None, None


class Cupti:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.live = {}
        self.records = []
        req_t = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                 ctypes.POINTER(ctypes.c_size_t))
        done_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_size_t)
        self.lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                        ctypes.POINTER(ctypes.c_void_p)]

        def requested(buf, size, max_records):
            b = ctypes.create_string_buffer(BUF_BYTES)
            addr = ctypes.addressof(b)
            self.live[addr] = b
            buf[0] = addr
            size[0] = BUF_BYTES
            max_records[0] = 0

        def completed(ctx, stream, buf, size, valid):
            rec = ctypes.c_void_p(None)
            while self.lib.cuptiActivityGetNextRecord(buf, valid, ctypes.byref(rec)) == 0:
                a = rec.value
                kind = ctypes.c_uint32.from_address(a).value
                if kind in (KIND_KERNEL, KIND_CONCURRENT_KERNEL):
                    self.records.append((ctypes.c_uint64.from_address(a + 16).value,
                                         ctypes.c_uint64.from_address(a + 24).value))
            self.live.pop(buf, None)

        self._req, self._done = req_t(requested), done_t(completed)
        self.call("cuptiActivityRegisterCallbacks", self._req, self._done)

    def call(self, name, *args):
        r = getattr(self.lib, name)(*args)
        if r != 0:
            raise RuntimeError("%s returned %d" % (name, r))

    def enable(self):
        self.call("cuptiActivityEnable", KIND_CONCURRENT_KERNEL)

    def disable(self):
        self.call("cuptiActivityDisable", KIND_CONCURRENT_KERNEL)

    def flush(self):
        self.call("cuptiActivityFlushAll", 1)
        got, self.records = self.records, []
        return sorted(got)


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
        for s in order:
            o = fn(*s)
            if hold:
                held.append(o)
    g.replay()
    torch.cuda.synchronize()
    return g, held


def compare(cu, g, calls, replays=10, label=""):
    """Event time a call and CUPTI busy/median kernel time a call, for the same replays."""
    rows = []
    for _ in range(replays):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        hc.start_spin()
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        t = time.perf_counter()
        ks = cu.flush()
        flush_s = time.perf_counter() - t
        ks = [k for k in ks if k[1] - k[0] < 20_000_000][-calls:]  # the spin kernel is first; keep the graph's
        ev_us = a.elapsed_time(b) * 1e3 / calls
        bu = hc.busy_time(ks) / 1e3 / calls
        med = statistics.median([(e - s) / 1e3 for s, e in ks]) if ks else None
        rows.append((ev_us, bu, med, len(ks), flush_s))
    ev = statistics.median(r[0] for r in rows)
    bu = statistics.median(r[1] for r in rows)
    md = statistics.median(r[2] for r in rows if r[2] is not None)
    out(step="compare", label=label, event_us=round(ev, 4), cupti_busy_us=round(bu, 4), cupti_kernel_median_us=round(md, 4),
        event_over_busy=round(ev / bu, 4), kernels_per_replay=rows[0][3], flush_ms=round(1e3 * statistics.median(r[4] for r in rows), 3))
    return ev, bu


def events_only(g, calls, replays=10):
    v = []
    for _ in range(replays):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        hc.start_spin()
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        v.append(a.elapsed_time(b) * 1e3 / calls)
    return statistics.median(v)


def probe(shapes, where):
    t = time.perf_counter()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    out(step="context", where=where, s=round(time.perf_counter() - t, 4), import_s=round(IMPORT_S, 3))
    path, how = find_cupti()
    out(step="find", path=path, how=how)
    t = time.perf_counter()
    cu = Cupti(path)
    out(step="load_register", s=round(time.perf_counter() - t, 4))
    fn = torch.nn.functional.gelu
    first = True
    for shape in shapes:
        target = hc.Target({"name": "gelu", "from": "torch.nn.functional:gelu", "shape": shape, "dtype": "bf16",
                            "device": "cuda"})
        s = hc.Session(target)
        sets = s.timed_sets
        hc.warm_up(fn, sets, 0.3, torch.cuda.synchronize)
        g_free, _ = capture(fn, sets, s.calls, hold=False)
        g_held, held = capture(fn, sets, s.calls, hold=True)
        before = {"free": events_only(g_free, s.calls), "held": events_only(g_held, s.calls)}
        if first:
            t = time.perf_counter()
            cu.enable()
            out(step="enable", s=round(time.perf_counter() - t, 4))
            t = time.perf_counter()
            g_free.replay()
            torch.cuda.synchronize()
            out(step="first_replay_enabled", s=round(time.perf_counter() - t, 4))
            t = time.perf_counter()
            n = len(cu.flush())
            out(step="first_flush", s=round(time.perf_counter() - t, 4), kernels=n)
            first = False
        else:
            cu.enable()
        compare(cu, g_free, s.calls, label=shape + " outputs freed")
        compare(cu, g_held, s.calls, label=shape + " outputs held")
        # Rotated eager calls, as the profiler reference reads them.
        order = hc._cycle(sets, s.calls)
        cu.flush()
        for x in order:
            fn(*x)
        torch.cuda.synchronize()
        ks = cu.flush()
        out(step="eager", label=shape, cupti_kernel_median_us=round(statistics.median((e - b) / 1e3 for b, e in ks), 4),
            kernels=len(ks))
        t = time.perf_counter()
        cu.disable()
        cu.flush()
        out(step="disable", s=round(time.perf_counter() - t, 4))
        after = {"free": events_only(g_free, s.calls), "held": events_only(g_held, s.calls)}
        out(step="events_without_cupti", label=shape, calls=s.calls,
            before={k: round(v, 4) for k, v in before.items()}, after={k: round(v, 4) for k, v in after.items()})
        del g_free, g_held, held, s, sets
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fork", action="store_true")
    ap.add_argument("shapes", nargs="*", default=["1024x1024", "4096x8192", "49152x8192"])
    a = ap.parse_args()
    if not a.fork:
        probe(a.shapes, "own process")
        return
    pid = os.fork()
    if pid == 0:
        try:
            probe(a.shapes, "forked child")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
