#!/usr/bin/env python3
"""GPU check of the protocol-3 contract and `hotkernel new`. Run on a CUDA machine:

    HOTKERNEL_BIN=build/hotkernel python tests/gpu/check_contract.py      # with the torch interpreter

Scaffolds torch.nn.functional:gelu at 4096x8192 and 1024x1024 bf16, runs each baseline and its
blank candidate, and compares the reported ms with the kernel time torch.profiler measures for
the same calls over the same rotated inputs (ratio = reported / profiler). Then runs the bundled
examples/rmsnorm baseline and Triton candidate. Prints a table; exits 1 when a run fails its
check, a fidelity ratio is outside [0.85, 1.20], or the example's candidate is not faster.
Skips (exit 0, with a message) when torch or a CUDA GPU is missing.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("HOTKERNEL_BIN", os.path.join(ROOT, "build", "hotkernel"))
PY = os.environ.get("HOTKERNEL_PYTHON", sys.executable)
RUNS = int(os.environ.get("CHECK_RUNS", "3"))
RATIO_RANGE = (0.85, 1.20)

# Profiler truth, run in its own process: the same Session (inputs, rotation, warm-up) as the script,
# then eager calls cycling over the rotated sets under torch.profiler; sum of CUDA kernel time / calls.
PROFILE_CHILD = r'''
import json, sys, importlib.util, os
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import torch, hotkernel_contract as hk
from torch.autograd import DeviceType
from torch.profiler import profile, ProfilerActivity
path = sys.argv[1]
target = hk.Target.from_dict(hk.read_target_file(path), os.path.dirname(path))
session = hk.prepare(target)
spec = importlib.util.spec_from_file_location("t", path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
fn = m.kernel
sets = session.timed_sets
with torch.no_grad():
    hk.warm_up(fn, sets, 0.5, torch.cuda.synchronize)
    n = max(200, 2 * len(sets))
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for j in range(n):
            fn(*sets[j % len(sets)])
        torch.cuda.synchronize()
total_us = 0.0
names = {}
for e in p.key_averages():
    if e.device_type == DeviceType.CUDA:
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = e.self_cuda_time_total
        total_us += t
        names[e.key[:60]] = e.count
print(json.dumps({"kernel_ms": total_us / n / 1000.0, "calls": n, "kernels": names}))
'''


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 600), **kw)


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def run_script(path, runs=RUNS):
    """Runs a target script `runs` times; returns (median ms, list of result lines)."""
    lines = []
    for _ in range(runs):
        r = run([PY, path], cwd=os.path.dirname(path))
        line = last_json(r.stdout)
        if line is None:
            raise RuntimeError("%s printed no JSON line (exit %d):\n%s" % (path, r.returncode, r.stderr[-2000:]))
        lines.append(line)
    ms = [l["ms"] for l in lines if isinstance(l.get("ms"), (int, float))]
    return (statistics.median(ms) if ms else float("nan")), lines


def profiler_ms(path):
    r = run([PY, "-c", PROFILE_CHILD, path])
    out = last_json(r.stdout)
    if out is None:
        raise RuntimeError("profiler child failed for %s:\n%s" % (path, r.stderr[-2000:]))
    return out


def main():
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not importable in %s; run this with the interpreter that has torch" % sys.executable)
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA GPU visible to torch %s; this check needs a GPU" % torch.__version__)
        return 0
    if not os.access(BIN, os.X_OK):
        print("FAIL: hotkernel binary %s not found; build it or set HOTKERNEL_BIN" % BIN)
        return 1
    print("GPU: %s  torch %s  python %s" % (torch.cuda.get_device_name(0), torch.__version__, PY))
    failures = []
    rows = []
    tmp = tempfile.mkdtemp(prefix="hk-check-contract-")
    for shape in ("4096x8192", "1024x1024"):
        name = "gelu_" + shape
        r = run([BIN, "new", "torch.nn.functional:gelu", "--shape", shape, "--name", name, "--out-dir", tmp,
                 "--python", PY, "--json"])
        if r.returncode != 0:
            failures.append("new %s failed: %s" % (shape, r.stderr.strip()))
            continue
        for role in ("baseline", "candidate"):
            path = os.path.join(tmp, "%s_%s.py" % (name, role))
            ms, lines = run_script(path)
            prof = profiler_ms(path)
            ratio = ms / prof["kernel_ms"] if prof["kernel_ms"] > 0 else float("nan")
            ok = all(l.get("ok") is True for l in lines)
            rows.append((name, role, lines[0].get("timer"), lines[0].get("rotate_k"), ms, prof["kernel_ms"], ratio, ok,
                         statistics.pstdev([l["ms"] for l in lines]) / ms * 100 if ok else float("nan")))
            if not ok:
                failures.append("%s %s: ok=false: %s" % (name, role, [l.get("reason") for l in lines]))
            if not (RATIO_RANGE[0] <= ratio <= RATIO_RANGE[1]):
                failures.append("%s %s: reported %.4f ms vs profiler %.4f ms (ratio %.3f outside %s)"
                                % (name, role, ms, prof["kernel_ms"], ratio, RATIO_RANGE))

    # The fallback timer on the large gelu (a copy of the candidate with timer forced to per-call events).
    cand = os.path.join(tmp, "gelu_4096x8192_candidate.py")
    if os.path.exists(cand):
        ev = os.path.join(tmp, "gelu_4096x8192_events.py")
        with open(cand) as f:
            text = f.read()
        with open(ev, "w") as f:
            f.write(text.replace('"timer": "auto"', '"timer": "cuda_events"'))
        ms, lines = run_script(ev)
        prof = profiler_ms(ev)
        ok = all(l.get("ok") is True for l in lines)
        rows.append(("gelu_4096x8192", "events", lines[0].get("timer"), lines[0].get("rotate_k"), ms, prof["kernel_ms"],
                     ms / prof["kernel_ms"], ok, float("nan")))
        if not ok or lines[0].get("timer") != "cuda_events":
            failures.append("forced cuda_events timer: %s" % lines[0])

    # derive + inputs + reference + min_bytes on the GPU: a weight-quantized int8 matmul.
    import shutil
    shutil.copy(os.path.join(ROOT, "tests", "python", "mykernels.py"), os.path.join(tmp, "mykernels.py"))
    r = run([BIN, "new", "./mykernels.py:int8_matmul", "--shape", "1024x4096", "--extra", "w:4096x4096",
             "--derive", "./mykernels.py:quantize", "--inputs", "x,w_q,scales", "--reference",
             "./mykernels.py:int8_matmul_ref", "--min-bytes", str(4096 * 4096 + 1024 * 4096 * 2 + 4096 * 2),
             "--flops", str(2 * 1024 * 4096 * 4096), "--python", PY, "--json"], cwd=tmp)
    if r.returncode != 0:
        failures.append("new int8_matmul failed: %s" % r.stderr.strip())
    else:
        for role in ("baseline", "candidate"):
            path = os.path.join(tmp, "int8_matmul_%s.py" % role)
            ms, lines = run_script(path, runs=2)
            prof = profiler_ms(path)
            ok = all(l.get("ok") is True for l in lines)
            rows.append(("int8_matmul", role, lines[0].get("timer"), lines[0].get("rotate_k"), ms, prof["kernel_ms"],
                         ms / prof["kernel_ms"], ok, float("nan")))
            if not ok:
                failures.append("int8_matmul %s: ok=false: %s" % (role, [l.get("reason") for l in lines]))

    ex = os.path.join(ROOT, "examples", "rmsnorm")
    ex_ms = {}
    for role in ("baseline", "candidate"):
        path = os.path.join(ex, "rmsnorm_%s.py" % role)
        ms, lines = run_script(path)
        prof = profiler_ms(path)
        ratio = ms / prof["kernel_ms"] if prof["kernel_ms"] > 0 else float("nan")
        ok = all(l.get("ok") is True for l in lines)
        ex_ms[role] = ms
        rows.append(("example rmsnorm", role, lines[0].get("timer"), lines[0].get("rotate_k"), ms, prof["kernel_ms"],
                     ratio, ok, statistics.pstdev([l["ms"] for l in lines]) / ms * 100 if ok else float("nan")))
        if not ok:
            failures.append("example %s: ok=false: %s" % (role, [l.get("reason") for l in lines]))

    print("\n%-18s %-9s %-11s %4s %12s %12s %7s %5s %7s" % ("target", "role", "timer", "K", "reported_ms",
                                                           "profiler_ms", "ratio", "ok", "cv_%"))
    for r in rows:
        print("%-18s %-9s %-11s %4s %12.5f %12.5f %7.3f %5s %7.2f" % r)
    if ex_ms.get("candidate"):
        speedup = ex_ms["baseline"] / ex_ms["candidate"]
        print("\nexample rmsnorm: candidate %.2fx the baseline's speed (median of %d runs each)" % (speedup, RUNS))
        if speedup <= 1.05:
            failures.append("the example's Triton candidate is not faster than its baseline (%.2fx)" % speedup)
    if failures:
        print("\nFAIL:\n  " + "\n  ".join(failures))
        return 1
    print("\nPASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
