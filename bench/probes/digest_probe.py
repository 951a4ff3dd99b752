#!/usr/bin/env python3
"""What a deferred checked replay's digest of its copies costs: each tensor's sum as float64
(the harness's digest before) against its 64-bit words summed as int64 (now), for a sample's held
outputs and inputs (gelu bf16, M x K each, `--tensors` of them), read back at once as the harness
does. Prints the median of `--n` digests of each kind, in ms, and the bytes summed.

    python3 bench/probes/digest_probe.py [--m 2048] [--k 8192] [--tensors 64] [--n 20]
"""
import argparse
import statistics
import time

import torch


def float_sums(ts):
    return torch.stack([t.sum(dtype=torch.float64) for t in ts]).tolist()


def word_sums(ts):
    return torch.stack([t.reshape(-1).view(torch.uint8).view(torch.int64).sum() for t in ts]).tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=2048)
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--tensors", type=int, default=64)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    ts = [torch.randn(a.m, a.k, device=a.device).to(torch.bfloat16) for _ in range(a.tensors)]
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    gib = sum(t.numel() * t.element_size() for t in ts) / 2**30
    for name, fn in (("float64 sums", float_sums), ("int64 word sums", word_sums)):
        fn(ts)
        times = []
        for _ in range(a.n):
            sync()
            t0 = time.perf_counter()
            fn(ts)
            times.append((time.perf_counter() - t0) * 1e3)
        med = statistics.median(times)
        print("%-16s %d tensors, %.2f GiB: median %.2f ms (min %.2f), %.0f GB/s"
              % (name, len(ts), gib, med, min(times), gib * 2**30 / (med / 1e3) / 1e9))


if __name__ == "__main__":
    main()
