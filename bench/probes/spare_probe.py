#!/usr/bin/env python3
"""What a run's CUDA context costs, and whether making one disturbs another process's timing.

A parent that has imported torch (as the fork server has) forks children. Part 1: each child
times `torch.cuda.init()`, its first allocation (the context), and a 16384x8192 bf16 input and
one gelu on it. Part 2: child A times 4096x8192 gelu windows (8 calls each; CUDA events for the
kernels, perf_counter for the host) while, halfway, the parent forks child B, which makes its
context and then waits idle; A's windows during B's context creation and while B sits idle are
compared with those before. All times from CLOCK_MONOTONIC, shared by the processes.

    python3 bench/probes/spare_probe.py [--children 3] [--windows 2000]
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F


def med(v):
    v = sorted(v)
    return round(v[len(v) // 2], 4) if v else None


def context_child(w):
    t0 = time.monotonic()
    torch.cuda.init()
    t1 = time.monotonic()
    torch.empty(1, device="cuda")
    t2 = time.monotonic()
    x = torch.randn(16384, 8192, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    t3 = time.monotonic()
    F.gelu(x)
    torch.cuda.synchronize()
    t4 = time.monotonic()
    os.write(w, (json.dumps({"init_s": t1 - t0, "context_s": t2 - t1, "input_s": t3 - t2,
                             "first_gelu_s": t4 - t3, "start": t0, "context_end": t2}) + "\n").encode())


def phased_child(w, pause_s):
    """B in steps, each followed by an idle pause: the driver (cuInit), the primary context
    without an allocation (a device sync), the first allocation."""
    marks = {"start": time.monotonic()}
    torch.cuda.init()
    marks["init_end"] = time.monotonic()
    time.sleep(pause_s)
    marks["context_start"] = time.monotonic()
    torch.cuda.synchronize()
    marks["context_end"] = time.monotonic()
    time.sleep(pause_s)
    marks["alloc_start"] = time.monotonic()
    torch.empty(1, device="cuda")
    marks["alloc_end"] = time.monotonic()
    os.write(w, (json.dumps(marks) + "\n").encode())


def timing_child(w, go_w, windows):
    x = [torch.randn(4096, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    for _ in range(20):
        F.gelu(x[0])
    torch.cuda.synchronize()
    rows = []
    for i in range(windows):
        if i == windows // 3:
            os.write(go_w, b"go\n")
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.monotonic()
        a.record()
        for k in range(8):
            F.gelu(x[k % 3])
        b.record()
        b.synchronize()
        t1 = time.monotonic()
        rows.append([t0, t1, a.elapsed_time(b)])
    os.write(w, (json.dumps(rows) + "\n").encode())


def read_line(fd):
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        buf += chunk
    return json.loads(buf)


def summarize(rows, spans):
    """A's windows grouped by the span of B's they overlap ("idle" when none)."""
    groups = {name: [] for name, _, _ in spans}
    groups["before B"], groups["B idle"] = [], []
    first = min(a for _, a, _ in spans)
    for t0, t1, k in rows:
        if t1 < first:
            groups["before B"].append((t1 - t0, k))
            continue
        hit = [name for name, a, b in spans if t0 <= b and t1 >= a]
        groups[hit[0] if hit else "B idle"].append((t1 - t0, k))
    for name, g in groups.items():
        host = [h * 1e3 for h, _ in g]
        kern = [k for _, k in g]
        print("  A %-20s windows %4d  host ms median %s max %s  kernels ms median %s max %s" % (
            name, len(g), med(host), round(max(host), 4) if host else None, med(kern),
            round(max(kern), 4) if kern else None))


def fork_child(body, *args):
    """Forks a child that runs body(write_fd, *args) and exits; returns (pid, the read end)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        body(w, *args)
        os._exit(0)
    os.close(w)
    return pid, r


def timed_beside(windows, b_body, *b_args, after=None):
    """A times `windows` gelu windows; a third of the way in, B starts and runs b_body. Returns
    (A's windows, B's line); `after` runs once both are read, before the children are reaped."""
    go_r, go_w = os.pipe()
    pa, ra = fork_child(timing_child, go_w, windows)
    os.close(go_w)
    os.read(go_r, 3)
    pb, rb = fork_child(b_body, *b_args)
    rows, b = read_line(ra), read_line(rb)
    if after is not None:
        after()
    os.waitpid(pa, 0)
    os.waitpid(pb, 0)
    return rows, b


def context_then_idle(w, hold_r):
    context_child(w)
    os.read(hold_r, 1)  # idle, holding its context, until A is done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--children", type=int, default=3)
    ap.add_argument("--windows", type=int, default=2000)
    a = ap.parse_args()
    print("part 1: a forked child's CUDA context and first input")
    for _ in range(a.children):
        pid, r = fork_child(context_child)
        res = read_line(r)
        os.waitpid(pid, 0)
        print(" ", {k: round(v, 4) for k, v in res.items() if k.endswith("_s")})
    print("part 2: A times gelu windows while B makes its context, then idles")
    hold_r, hold_w = os.pipe()  # B's idle ends when A's windows are read: A is done by then
    rows, b = timed_beside(a.windows, context_then_idle, hold_r, after=lambda: os.write(hold_w, b"x"))
    print("  B:", {k: round(v, 4) for k, v in b.items() if k.endswith("_s")})
    summarize(rows, [("during B's context", b["start"], b["context_end"])])
    print("part 3: A times gelu windows while B takes each step (cuInit, context, first allocation) apart")
    for _ in range(2):
        rows, m = timed_beside(a.windows * 2, phased_child, 0.15)
        print("  B: init %.4f s, context %.4f s, allocation %.4f s" % (
            m["init_end"] - m["start"], m["context_end"] - m["context_start"], m["alloc_end"] - m["alloc_start"]))
        summarize(rows, [("during B's cuInit", m["start"], m["init_end"]),
                         ("during B's context", m["context_start"], m["context_end"]),
                         ("during B's allocation", m["alloc_start"], m["alloc_end"])])
    sys.stdout.flush()

if __name__ == "__main__":
    main()
