"""hotkernel torch_profile: runs a script under torch.profiler in this interpreter.

Usage: python hotkernel_torch_profile.py N SCRIPT [ARGS...]
The result (one JSON object) goes to the fd in HOTKERNEL_RESULT_FD, after one {"stage", "t"} line
per stage begun (so a run killed by its timeout says what it was doing); the script's own
stdout is sent to stderr so nothing it prints can be mistaken for the result. A target script
(`new` writes them) is profiled through the contract's profile mode: a few calls of its kernel,
each labelled, with the profiler on only around them.
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


def is_target_script(path):
    """Whether `path` is a target script (`new` writes them): a top-level literal TARGET and an
    import of hotkernel_contract, read from its text without running it."""
    import ast
    try:
        with open(path, "r", encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return False
    has_target = any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGET" for t in n.targets)
                     for n in tree.body)
    imports = any((isinstance(n, ast.Import) and any(a.name == "hotkernel_contract" for a in n.names))
                  or (isinstance(n, ast.ImportFrom) and n.module == "hotkernel_contract") for n in tree.body)
    return has_target and imports


class _Window:
    """torch.profiler around the target's profiled calls; says when it stops (its export)."""

    def __init__(self, prof, stage):
        self.prof, self.stage = prof, stage

    def __enter__(self):
        self.stage("starting torch.profiler")
        self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        self.stage("stopping torch.profiler (collecting its trace)")
        return self.prof.__exit__(*exc)


def main():
    out = _open_result()
    if len(sys.argv) < 3:
        sys.stderr.write("usage: hotkernel_torch_profile.py N SCRIPT [ARGS...]\n")
        return 2
    top_n = int(sys.argv[1])
    script = os.path.abspath(sys.argv[2])
    script_args = sys.argv[3:]
    result = {}
    t_start = time.perf_counter()

    def emit(obj):
        # One JSON object a line: {"stage", "t"} lines as the run goes, the result last.
        text = json.dumps(obj, default=str) + "\n"
        if out is not None:
            out.write(text)
            out.flush()
        else:
            sys.__stderr__.write(text)

    def stage(text):
        emit({"stage": text, "t": round(time.perf_counter() - t_start, 3)})

    # Everything printed to stdout from here on (Python or C level) lands on stderr.
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    stage("importing torch")
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
    labels = ()
    if is_target_script(script):
        # A target profiled through the contract's profile mode: a few calls of its kernel, each
        # under a label, and the profiler on only around them (no reference, check or timing).
        # The contract is hotkernel's own (this folder's), as bench and verify run targets with.
        stage("importing hotkernel's contract")
        try:
            import hotkernel_contract as hk
        except Exception as ex:
            emit(dict(result, error="hotkernel's contract could not be imported: %s: %s" % (type(ex).__name__, ex),
                      traceback=traceback.format_exc()[-4000:]))
            return 0
        prof = profile(activities=activities, record_shapes=True)
        t0 = time.perf_counter()
        try:
            mode = hk.profile_file(script, window=_Window(prof, stage), stage=stage)
        except Exception as ex:
            emit(dict(result, error="the target raised %s: %s" % (type(ex).__name__, ex),
                      traceback=traceback.format_exc()[-4000:]))
            return 0
        result["script_wall_s"] = round(time.perf_counter() - t0, 6)
        if mode.get("status") != "profiled":
            emit(dict(result, error="the target's profile mode failed at %s" % mode.get("reason")))
            return 0
        labels = (mode["call_range"],)
        result["profile_mode"] = {
            "role": mode.get("role"), "calls": mode.get("calls"), "warmup_calls": mode.get("warmup_calls"),
            "label": mode["call_range"], "rotate_k": mode.get("rotate_k"), "shapes": mode.get("shapes"),
            "workload": mode.get("workload"),  # of a target with workloads: the one profiled
            "contract": "hotkernel's own (as bench and verify run the target), not the copy beside the script",
            "not_profiled": "the input draws, the import, the warm-up calls; the fp32 reference and the check "
                            "are not run",
        }
    else:
        sys.path.insert(0, os.path.dirname(script))
        t0 = time.perf_counter()
        exit_code = 0
        stage("running the script under torch.profiler")
        try:
            with profile(activities=activities, record_shapes=True) as prof:
                try:
                    runpy.run_path(script, run_name="__main__")
                except SystemExit as ex:
                    code = ex.code
                    exit_code = code if isinstance(code, int) else (0 if code is None else 1)
                if cuda:
                    torch.cuda.synchronize()
                stage("stopping torch.profiler (collecting its trace)")
        except Exception as ex:
            tb = traceback.format_exc()
            emit(dict(result, error="the script raised %s: %s" % (type(ex).__name__, ex), traceback=tb[-4000:]))
            return 0
        result["script_wall_s"] = round(time.perf_counter() - t0, 6)
        if exit_code != 0:
            emit(dict(result, error="the script exited with status %s under the profiler" % exit_code))
            return 0

    stage("reading torch.profiler's events (key_averages)")
    averages = prof.key_averages()
    by_shape = prof.key_averages(group_by_input_shape=True)

    kernels, memory_ops, ignored, ranges = [], [], [], []
    for e in averages:
        name = e.key
        total = float(_attr(e, "device_time_total", "cuda_time_total", "self_device_time_total", "self_cuda_time_total"))
        if name in labels:
            # The label's own row (and on torch 2.x its device-side annotation): the span of the
            # calls, not a kernel.
            ranges.append({"name": name, "on": "device" if _is_device(e) else "cpu", "calls": int(e.count),
                           "cpu_total_us": float(_attr(e, "cpu_time_total")), "device_total_us": total})
        elif _is_device(e):
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
        if _is_device(e) or _is_bookkeeping(name) or "::" not in name or name in labels:
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
    if labels:
        result["ranges"] = ranges
        result["kernel_time_per_call_us"] = total_kernel_us / result["profile_mode"]["calls"]
    if not cuda:
        result["note"] = ("no CUDA device is visible to torch %s here, so only CPU ops were profiled and kernels is empty"
                          % torch.__version__)
    elif not kernels:
        result["note"] = "CUDA is available but the script launched no GPU kernel under the profiler"
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
