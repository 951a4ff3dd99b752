"""hotkernel torch_profile runner: runs a script under torch.profiler in this interpreter.

Usage: python hotkernel_torch_profile.py N SCRIPT [ARGS...]
The result (one JSON object) goes to the fd in HOTKERNEL_RESULT_FD; the script's own
stdout is sent to stderr so nothing it prints can be mistaken for the result.
Works on torch 1.13 (cuda_time_total) and 2.x (device_time_total).
"""
import json
import os
import runpy
import sys
import time
import traceback

# CPU-side rows that are profiler bookkeeping, not work of the script. "Activity Buffer
# Request" even carries device time (675 us on an H200 capture).
BOOKKEEPING = ("Activity Buffer Request", "[memory]", "[OutOfMemory]", "Unrecognized", "ProfilerStep")


def _open_result():
    # Taken out of the environment so the profiled script (a bench-contract script, say)
    # cannot find the channel and write its own result into ours.
    fd = os.environ.pop("HOTKERNEL_RESULT_FD", None)
    if fd is not None and fd.isdigit():
        os.set_inheritable(int(fd), False)
        return os.fdopen(int(fd), "w")
    return None


def _attr(e, *names, default=0.0):
    """First attribute of e that exists and does not raise (names changed across torch releases)."""
    for n in names:
        try:
            v = getattr(e, n)
        except Exception:  # torch 2.11 raises AttributeError for cuda_time_total on averages
            continue
        if v is not None:
            return v
    return default


def _is_device(e):
    dt = _attr(e, "device_type", default=None)
    return dt is not None and not str(dt).endswith("CPU")


def _is_bookkeeping(name):
    return any(name.startswith(b) for b in BOOKKEEPING)


def _kind(name):
    if name.startswith("Memcpy"):
        return "memcpy"
    if name.startswith("Memset"):
        return "memset"
    return "kernel"


def _shapes(e):
    s = _attr(e, "input_shapes", default=None)
    if not s:
        return []
    try:
        return json.loads(json.dumps(s, default=str))
    except Exception:
        return str(s)


def main():
    out = _open_result()
    if len(sys.argv) < 3:
        sys.stderr.write("usage: hotkernel_torch_profile.py N SCRIPT [ARGS...]\n")
        return 2
    top_n = int(sys.argv[1])
    script = os.path.abspath(sys.argv[2])
    script_args = sys.argv[3:]
    result = {}

    def emit(obj):
        text = json.dumps(obj, default=str)
        if out is not None:
            out.write(text)
            out.flush()
        else:
            sys.__stderr__.write(text + "\n")

    # Everything printed to stdout from here on (Python or C level) lands on stderr.
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except Exception as ex:
        emit({"error": "torch could not be imported in %s: %s: %s" % (sys.executable, type(ex).__name__, ex),
              "python": sys.executable})
        return 0

    cuda = bool(torch.cuda.is_available())
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    result.update({
        "torch_version": torch.__version__,
        "python": sys.executable,
        "cuda_available": cuda,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "activities": ["cpu", "cuda"] if cuda else ["cpu"],
    })

    sys.argv = [script] + script_args
    sys.path.insert(0, os.path.dirname(script))
    t0 = time.perf_counter()
    exit_code = 0
    try:
        with profile(activities=activities, record_shapes=True) as prof:
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as ex:
                code = ex.code
                exit_code = code if isinstance(code, int) else (0 if code is None else 1)
            if cuda:
                torch.cuda.synchronize()
    except Exception as ex:
        tb = traceback.format_exc()
        emit(dict(result, error="the script raised %s: %s" % (type(ex).__name__, ex), traceback=tb[-4000:]))
        return 0
    result["script_wall_s"] = round(time.perf_counter() - t0, 6)
    if exit_code != 0:
        emit(dict(result, error="the script exited with status %s under the profiler" % exit_code))
        return 0

    averages = prof.key_averages()
    by_shape = prof.key_averages(group_by_input_shape=True)

    kernels, memory_ops, ignored = [], [], []
    for e in averages:
        name = e.key
        total = float(_attr(e, "device_time_total", "cuda_time_total", "self_device_time_total", "self_cuda_time_total"))
        if _is_device(e):
            row = {"name": name, "calls": int(e.count), "total_us": total,
                   "avg_us": total / e.count if e.count else 0.0}
            (kernels if _kind(name) == "kernel" else memory_ops).append(dict(row, kind=_kind(name)))
        else:
            self_dev = float(_attr(e, "self_device_time_total", "self_cuda_time_total"))
            if _is_bookkeeping(name):
                ignored.append({"name": name, "device_time_us": self_dev, "cpu_time_us": float(_attr(e, "cpu_time_total"))})
    total_kernel_us = sum(k["total_us"] for k in kernels)
    for k in kernels:
        k["pct"] = 100.0 * k["total_us"] / total_kernel_us if total_kernel_us > 0 else 0.0
        del k["kind"]
    kernels.sort(key=lambda k: k["total_us"], reverse=True)
    memory_ops.sort(key=lambda k: k["total_us"], reverse=True)

    ops = []
    for e in by_shape:
        name = e.key
        if _is_device(e) or _is_bookkeeping(name) or "::" not in name:
            continue  # kernels, bookkeeping and runtime calls (cudaLaunchKernel) are not ops
        ops.append({
            "name": name,
            "input_shapes": _shapes(e),
            "calls": int(e.count),
            "cpu_total_us": float(_attr(e, "cpu_time_total")),
            "cpu_self_us": float(_attr(e, "self_cpu_time_total")),
            "device_total_us": float(_attr(e, "device_time_total", "cuda_time_total")),
            "device_self_us": float(_attr(e, "self_device_time_total", "self_cuda_time_total")),
        })
    sort_key = "device_total_us" if cuda and total_kernel_us > 0 else "cpu_total_us"
    ops.sort(key=lambda o: o[sort_key], reverse=True)

    result.update({
        "kernel_count": len(kernels),
        "total_kernel_time_us": total_kernel_us,
        "kernels": kernels[:top_n],
        "memory_ops": memory_ops[:top_n],
        "op_count": len(ops),
        "ops_sorted_by": sort_key,
        "ops": ops[:top_n],
        "ignored_rows": ignored,
    })
    if not cuda:
        result["note"] = ("no CUDA device is visible to torch %s here, so only CPU ops were profiled and kernels is empty"
                          % torch.__version__)
    elif not kernels:
        result["note"] = "CUDA is available but the script launched no GPU kernel under the profiler"
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
