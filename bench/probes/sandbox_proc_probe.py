#!/usr/bin/env python3
"""Which of a run's own /proc entries the CUDA driver needs to write: for each choice of
hotkernel_sandbox.PROC_GRANTS, a fresh interpreter applies the kernel sandbox first (as a run
does, while its thread is the only one), then initialises CUDA, runs a kernel, times one on
CUPTI's clock (which starts threads of its own) and, where Triton is there, compiles and runs a
Triton kernel; it prints what worked and the names of the process's threads.

    python3 bench/probes/sandbox_proc_probe.py [--grants none,task,process]

On a GPU each choice prints the steps that worked (cuda, kernel, cupti_records, triton) or
how they failed, and the names of the threads CUDA started. PROC_GRANT takes the narrowest
choice under which every step works.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")

CHILD = r"""
import json, os, sys
sys.path.insert(0, %(python)r)
import hotkernel_sandbox as sb
scratch, grant = sys.argv[1], sys.argv[2]
os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton")
rec = sb.apply(scratch, [], proc_grant=grant)
out = {"grant": grant, "writable": rec.get("writable"), "landlock_abi": rec.get("landlock_abi"), "steps": {}}
def step(name, fn):
    try:
        out["steps"][name] = fn()
    except Exception as e:
        out["steps"][name] = "failed: %%s: %%s" %% (type(e).__name__, str(e)[:200])
        return False
    return True
import torch
if step("cuda", lambda: (torch.cuda.init(), torch.cuda.device_count())[1]):
    def kernel():
        x = torch.randn(1 << 20, device="cuda")
        y = torch.nn.functional.gelu(x)
        torch.cuda.synchronize()
        return float(y.sum())
    if step("kernel", kernel):
        import hotkernel_contract as hk
        def clocked():
            clock = hk.KernelClock.get()
            x = torch.randn(1 << 20, device="cuda")
            clock.start()
            torch.nn.functional.gelu(x)
            torch.cuda.synchronize()
            return len(clock.stop())
        step("cupti_records", clocked)
        def triton_kernel():
            import triton
            import triton.language as tl
            @triton.jit
            def add_one(p, n, BLOCK: tl.constexpr):
                i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(p + i, tl.load(p + i, mask=i < n) + 1.0, mask=i < n)
            x = torch.zeros(4096, device="cuda")
            add_one[(4,)](x, 4096, BLOCK=1024)
            torch.cuda.synchronize()
            return float(x.sum())
        step("triton", triton_kernel)
names = []
for tid in sorted(os.listdir("/proc/self/task")):
    try:
        with open("/proc/self/task/%%s/comm" %% tid) as f:
            names.append(f.read().strip())
    except OSError:
        pass
out["threads"] = names
print(json.dumps(out))
""" % {"python": PYTHON_DIR}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grants", default="none,task,process")
    args = ap.parse_args()
    for grant in args.grants.split(","):
        with tempfile.TemporaryDirectory() as scratch:
            try:
                p = subprocess.run([sys.executable, "-c", CHILD, scratch, grant], capture_output=True, text=True,
                                   timeout=120)
            except subprocess.TimeoutExpired:
                print(json.dumps({"grant": grant, "error": "timed out after 120 s"}))
                continue
            line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
            print(line or json.dumps({"grant": grant, "rc": p.returncode, "stderr": p.stderr[-600:]}), flush=True)


if __name__ == "__main__":
    main()
