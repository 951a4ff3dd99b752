#!/usr/bin/env python3
"""How fast `hotkernel mcp` answers a tools/call whose argument is huge (10 MiB by default):
a `gpu`, a `dtype`, a script path, a list item, an unknown parameter's name and an unknown
tool's name. Each figure is the median (with min and max) over N calls on one server, timed
from the moment the request's last byte is written to the moment its answer has been read,
with the answer's size (every error must stay short: docs/mcp.md, "Bounds").

The bound the server is held to: <= 100 ms per call. Standard library only; no GPU is touched.

Run: bench/mcp_bounds.py --bin build/hotkernel [-n 10] [--mib 10] [--json]
"""
import argparse
import json
import statistics
import subprocess
import time


def cases(big):
    return {
        "roofline gpu": ("roofline", {"gpu": big, "flops": 1, "bytes": 1}),
        "roofline dtype": ("roofline", {"gpu": "h200_sxm", "flops": 1, "bytes": 1, "dtype": big}),
        "bench script (a path)": ("bench", {"script": big, "n": 1}),
        "bench args item": ("bench", {"script": "x.py", "args": [big]}),
        "unknown parameter name": ("roofline", {"gpu": "h200_sxm", "flops": 1, "bytes": 1, big: 1}),
        "unknown tool name": (big, {}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/hotkernel")
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--mib", type=float, default=10.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    big = "x" * int(a.mib * (1 << 20))
    p = subprocess.Popen([a.bin, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = {}
    next_id = 0
    for what, (tool, args) in cases(big).items():
        samples, sizes = [], []
        for _ in range(a.n):
            next_id += 1
            line = json.dumps({"jsonrpc": "2.0", "id": next_id, "method": "tools/call",
                               "params": {"name": tool, "arguments": args}}).encode() + b"\n"
            p.stdin.write(line[:-1])
            p.stdin.flush()
            t0 = time.perf_counter()
            p.stdin.write(b"\n")
            p.stdin.flush()
            answer = p.stdout.readline()
            samples.append((time.perf_counter() - t0) * 1e3)
            msg = json.loads(answer)
            assert msg.get("id") == next_id, msg
            sizes.append(len(answer))
        out[what] = {"median_ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples),
                     "answer_bytes": max(sizes), "n": a.n}
    p.stdin.close()
    p.wait(timeout=10)
    if a.json:
        print(json.dumps({"argument_mib": a.mib, "calls": out}))
        return
    print(f"a {a.mib:g} MiB argument, {a.n} calls each (time from the request's last byte to its answer)")
    for what, r in out.items():
        print(f"  {what:24s} median {r['median_ms']:7.2f} ms  min {r['min_ms']:7.2f}  max {r['max_ms']:7.2f}  "
              f"answer {r['answer_bytes']} B")


if __name__ == "__main__":
    main()
