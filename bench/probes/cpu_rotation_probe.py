#!/usr/bin/env python3
"""How deep CPU rotation must be: a call's time against the number of rotated input sets K.

The harness's CPU sample, emulated: before every sample the K timed input sets get fresh
values (drawn, then copied in, as fresh_round does), then one call per set, back to back, each
timed by perf_counter and its output held. Where the sets a sample writes and reads fit in the
last-level cache, the first calls read their inputs from it and read faster; the K where the time
stops falling is the depth a CPU needs. Between set j's fresh write and its call go the other
K - 1 sets' writes or calls, (K - 1) x bytes_per_call of traffic: traffic_over_cache. Prints
one JSON line per (op, K): {"op", "k", "bytes_per_call", "cache_bytes", "traffic_over_cache",
"ms_median", "ms_first_half", "ms_second_half"}.

    python3 bench/probes/cpu_rotation_probe.py [--samples 30] [--ks 2,3,4,6,8,12,16]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402

import hotkernel_contract as hk  # noqa: E402


def ops():
    # A memory-bound op (one read, one write, per element) and the bundled example's bf16 RMSNorm.
    def add(x, w):
        return torch.add(x, w)

    def rmsnorm(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)

    return [("add_fp32_1Mi", add, (1024, 1024), torch.float32),
            ("add_fp32_256Ki", add, (256, 1024), torch.float32),
            ("rmsnorm_bf16_512x4096", rmsnorm, (512, 4096), torch.bfloat16)]


def run(name, fn, shape, dtype, k, samples, cache):
    gen = torch.Generator().manual_seed(k)
    sets = [torch.randn(shape, generator=gen).to(dtype) for _ in range(k)]
    w = torch.randn(shape[-1], generator=gen).to(dtype)
    per_call = 2 * sets[0].numel() * sets[0].element_size()
    for _ in range(3):  # warm
        for x in sets:
            fn(x, w)
    first, second, all_ = [], [], []
    for _ in range(samples):
        fresh = [torch.randn(shape, generator=gen).to(dtype) for _ in range(k)]
        for d, s in zip(sets, fresh):
            d.copy_(s)
        held, times = [], []
        for x in sets:
            t0 = time.perf_counter()
            held.append(fn(x, w))
            times.append((time.perf_counter() - t0) * 1e3)
        half = max(1, k // 2)
        first += times[:half]
        second += times[half:] or times[-1:]
        all_.append(sum(times) / k)
        del held
    return {"op": name, "k": k, "bytes_per_call": per_call, "cache_bytes": cache,
            "traffic_over_cache": round((k - 1) * per_call / float(cache), 2),
            "ms_median": round(statistics.median(all_), 4),
            "ms_first_half": round(statistics.median(first), 4),
            "ms_second_half": round(statistics.median(second), 4)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=30)
    p.add_argument("--ks", default="2,3,4,6,8,12,16")
    a = p.parse_args()
    torch.set_grad_enabled(False)
    cache = hk.cache_bytes("cpu")[0]
    for name, fn, shape, dtype in ops():
        for k in [int(v) for v in a.ks.split(",")]:
            print(json.dumps(run(name, fn, shape, dtype, k, a.samples, cache)), flush=True)


if __name__ == "__main__":
    main()
