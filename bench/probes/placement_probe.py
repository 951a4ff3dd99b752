#!/usr/bin/env python3
"""Whether a streaming kernel's time depends on where its buffers sit in memory: the question
behind runs that settle at two levels (a 45 us gelu at 45.0 or 46.0 us, every sample of a run at
its level, at the same SM clock). Each child process (forked from a parent that imported torch
without CUDA, as the fork server does) allocates NX input and NY output buffers separately,
then times `aten::gelu.out(X_i, out=Y_j)` for every pair (i, j): a CUDA graph of CALLS calls,
30 ms of untimed replays, then SAMPLES timed replays, their median. Every pair twice, in a
random order each round. If the level came with the buffers, the pairs would differ inside a
process by as much as runs differ; if it came with the process, they would agree inside it and
the process means would differ. One JSON line per child and shape.

    python3 bench/probes/placement_probe.py [--children 4] [--nx 4] [--ny 4] [4096x8192 49152x8192]
"""
import argparse
import json
import os
import random
import statistics
import sys
import time

CALLS_BUDGET_S = 0.002
SAMPLES = 5
RAMP_S = 0.03


def child(shape, nx, ny, wfd):
    import torch
    rows, cols = (int(v) for v in shape.split("x"))
    xs = [torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16) for _ in range(nx)]
    ys = [torch.empty(rows, cols, device="cuda", dtype=torch.bfloat16) for _ in range(ny)]
    gelu_out = torch.ops.aten.gelu.out
    # calls a sample: ~CALLS_BUDGET_S of them, from a first timing
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    gelu_out(xs[0], out=ys[0])
    e0.record()
    gelu_out(xs[0], out=ys[0])
    e1.record()
    e1.synchronize()
    calls = max(2, min(200, int(CALLS_BUDGET_S / (e0.elapsed_time(e1) / 1e3))))
    graphs = {}
    for i in range(nx):
        for j in range(ny):
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                gelu_out(xs[i], out=ys[j])
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                for _ in range(calls):
                    gelu_out(xs[i], out=ys[j])
            graphs[(i, j)] = g
    torch.cuda.synchronize()
    addr = {"x": [x.data_ptr() for x in xs], "y": [y.data_ptr() for y in ys]}
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    rounds = []
    for _ in range(2):
        pairs = list(graphs)
        rng.shuffle(pairs)
        got = {}
        for pair in pairs:
            g = graphs[pair]
            t_end = time.perf_counter() + RAMP_S
            while time.perf_counter() < t_end:
                g.replay()
                torch.cuda.synchronize()
            per = []
            for _ in range(SAMPLES):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(50000)
                a.record()
                g.replay()
                b.record()
                b.synchronize()
                per.append(a.elapsed_time(b) / calls * 1e3)
            got[pair] = statistics.median(per)
        rounds.append(got)
    us = [[[round(r[(i, j)], 3) for j in range(ny)] for i in range(nx)] for r in rounds]
    both = [statistics.fmean([r[(i, j)] for r in rounds]) for i in range(nx) for j in range(ny)]
    round_diff = [abs(rounds[0][p] - rounds[1][p]) / rounds[0][p] * 100 for p in graphs]
    row = {"shape": shape, "calls": calls, "us": us, "mean_us": round(statistics.fmean(both), 3),
           "pairs_range_pct": round(100 * (max(both) - min(both)) / statistics.fmean(both), 3),
           "round_to_round_median_pct": round(statistics.median(round_diff), 3),
           "x_means_us": [round(statistics.fmean(us[0][i][j] for j in range(ny)), 3) for i in range(nx)],
           "y_means_us": [round(statistics.fmean(us[0][i][j] for i in range(nx)), 3) for j in range(ny)],
           "addresses_mib": {k: [a >> 20 for a in v] for k, v in addr.items()}}
    os.write(wfd, (json.dumps(row) + "\n").encode())
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", nargs="*", default=["4096x8192", "49152x8192"])
    ap.add_argument("--children", type=int, default=4)
    ap.add_argument("--nx", type=int, default=4)
    ap.add_argument("--ny", type=int, default=4)
    args = ap.parse_args()
    import torch  # noqa: F401  (the parent never touches CUDA)
    for shape in args.shapes:
        means = []
        for c in range(args.children):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                try:
                    child(shape, args.nx, args.ny, w)
                finally:
                    os._exit(1)
            os.close(w)
            data = b""
            while True:
                b = os.read(r, 1 << 16)
                if not b:
                    break
                data += b
            os.close(r)
            _, status = os.waitpid(pid, 0)
            try:
                row = json.loads(data.decode())
            except ValueError:
                row = {"shape": shape, "error": "status %d" % status}
            row["child"] = c
            if "mean_us" in row:
                means.append(row["mean_us"])
            print(json.dumps(row), flush=True)
        if len(means) >= 2:
            print(json.dumps({"shape": shape, "process_means_us": means,
                              "between_process_range_pct": round(100 * (max(means) - min(means))
                                                                 / statistics.fmean(means), 3)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
