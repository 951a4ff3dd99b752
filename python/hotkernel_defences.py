"""The trusted runner's defences that stand apart from its timing (hotkernel_runner.py uses them).

Primitives: references to the timing primitives, taken before the candidate exists.
Harness: a snapshot of every function a candidate could patch to fake a time or a check.
ThreadWatch: counts the threads and processes a candidate starts.
L2Guard: keeps a candidate from carving out persisting L2.

Embedded in the binary beside the runner and the contract (not vendored into targets), so it is
free to change with them; the Harness snapshot watches this module too.
"""
import json
import os
import sys
import time


class Primitives:
    """References to the timing primitives, taken before the candidate exists."""

    def __init__(self, torch):
        self.perf = time.perf_counter
        self.cuda = torch.cuda.is_available()
        if self.cuda:
            self.Event = torch.cuda.Event
            self.record = torch.cuda.Event.record
            self.elapsed = torch.cuda.Event.elapsed_time
            self.ev_sync = torch.cuda.Event.synchronize
            self.dev_sync = torch.cuda.synchronize
            self.Graph = torch.cuda.CUDAGraph
            self.replay = torch.cuda.CUDAGraph.replay
            self.graph_ctx = torch.cuda.graph
            self.Stream = torch.cuda.Stream
            self.stream_ctx = torch.cuda.stream
            self.current_stream = torch.cuda.current_stream
            self.spin = getattr(torch.cuda, "_sleep", None)  # spins for N SM clock cycles


class Harness:
    """Snapshot of everything a candidate could patch to fake a time or a check."""

    def __init__(self, torch, contract, runner_module, reference_fns=()):
        import builtins
        import math
        import statistics
        self.watch = {
            "time": time, "statistics": statistics, "math": math, "builtins": builtins, "json": json,
            "os": os, "hotkernel_contract": contract, "hotkernel_runner": runner_module,
            "hotkernel_defences": sys.modules[__name__],
            "torch.Tensor": torch.Tensor, "torch": torch, "torch.cuda": torch.cuda,
            "hotkernel_contract.Session": contract.Session, "hotkernel_contract.Target": contract.Target,
            "hotkernel_contract.KernelClock": contract.KernelClock,
        }
        # The functions the references are computed with (after the candidate ran), and their modules.
        import torch.nn.functional as F
        self.watch["torch.nn.functional"] = F
        self.watch["torch._C._nn"] = torch._C._nn
        self.watch["torch._C._VariableFunctions"] = torch._C._VariableFunctions
        ref_mods = set()
        for fn in reference_fns:
            mod = sys.modules.get(getattr(fn, "__module__", None) or "")
            if mod is not None and mod.__name__ not in ("torch", "builtins"):
                self.watch[mod.__name__] = mod
                ref_mods.add(mod.__name__)
        self.ref_fns = [(fn, id(getattr(fn, "__code__", None))) for fn in reference_fns]
        if torch.cuda.is_available():
            self.watch["torch.cuda.Event"] = torch.cuda.Event
            self.watch["torch.cuda.CUDAGraph"] = torch.cuda.CUDAGraph
        # Patching these changes a time or a verdict: invalid. Other torch changes are reported.
        self.critical = {"time", "statistics", "math", "builtins", "json", "hotkernel_contract",
                         "hotkernel_runner", "hotkernel_defences", "hotkernel_contract.Session", "hotkernel_contract.Target",
                         "hotkernel_contract.KernelClock",
                         "torch.cuda.Event", "torch.cuda.CUDAGraph", "torch.Tensor", "torch.nn.functional",
                         "torch._C._nn", "torch._C._VariableFunctions"} | ref_mods
        self.critical_names = {("torch.cuda", n) for n in ("synchronize", "Event", "CUDAGraph", "graph",
                                                           "current_stream", "Stream", "stream")}
        self.critical_names |= {("os", n) for n in ("write", "read", "dup", "close", "fsync", "_exit")}
        self.critical_names |= {("torch", n) for n in ("isfinite", "equal", "randn", "Generator", "empty")}
        self.snap = self._take()

    def _take(self):
        snap = {}
        for mod_name, obj in self.watch.items():
            try:
                items = list(vars(obj).items())
            except TypeError:
                continue
            for name, v in items:
                if not callable(v):
                    continue
                code = getattr(v, "__code__", None)
                snap[(mod_name, name)] = (id(v), id(code) if code is not None else None)
        return snap

    def changes(self):
        """(critical, other): lists of 'module.name' that were replaced or removed."""
        now = self._take()
        critical, other = [], []
        for key, ident in self.snap.items():
            if now.get(key) != ident:
                label = "%s.%s" % key
                if key[0] in self.critical or key in self.critical_names:
                    critical.append(label)
                elif key[0] in ("os", "torch", "torch.cuda"):
                    other.append(label)
        for fn, code in self.ref_fns:
            if id(getattr(fn, "__code__", None)) != code:
                critical.append(getattr(fn, "__qualname__", "reference") + ".__code__")
        return critical, other


class ThreadWatch:
    """Counts threads and processes the candidate starts, by wrapping the start primitives."""

    def __init__(self):
        import _thread
        import threading
        self.started = 0
        self.counting = False
        self._thread = _thread
        self.originals = {}
        watch = self

        def wrap(orig):
            def start(*a, **k):
                if watch.counting:
                    watch.started += 1
                return orig(*a, **k)
            return start

        for mod, name in ((_thread, "start_new_thread"), (_thread, "start_joinable_thread"),
                          (threading, "_start_new_thread"), (threading, "_start_joinable_thread")):
            orig = getattr(mod, name, None)
            if orig is not None:
                self.originals[(mod, name)] = orig
                setattr(mod, name, wrap(orig))
        # Processes too: a helper process can do the work (or load the GPU) after the call returns.
        try:
            import _posixsubprocess
        except ImportError:
            _posixsubprocess = None
        import subprocess
        for mod, name in ((os, "fork"), (os, "posix_spawn"), (os, "posix_spawnp"), (_posixsubprocess, "fork_exec"),
                          (subprocess, "_fork_exec")):
            orig = getattr(mod, name, None) if mod is not None else None
            if orig is not None:
                self.originals[(mod, name)] = orig
                setattr(mod, name, wrap(orig))
        self.wrappers = {k: getattr(k[0], k[1]) for k in self.originals}
        self.threading = threading
        self.before = set(t.ident for t in threading.enumerate())

    def intact(self):
        return all(getattr(m, n) is w for (m, n), w in self.wrappers.items())


def _cudart():
    """ctypes handle of the CUDA runtime torch loaded (for the persisting-L2 reset), or None."""
    import ctypes
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "libcudart" in line and "/" in line})
    except OSError:
        paths = []
    for p in paths + ["libcudart.so", "libcudart.so.12", "libcudart.so.13"]:
        try:
            return ctypes.CDLL(p)
        except OSError:
            continue
    return None


class L2Guard:
    """Keeps a candidate from carving out persisting L2: limit 0 and a reset before each sample.

    Some drivers read back a non-zero limit that nobody set (an H200 under driver 580 reports
    11796480 bytes from a fresh context, and again after it is set to 0), so the value read right
    after the harness's own first reset, before any candidate code exists, is the floor: only a
    limit above it was set by the candidate.
    """

    LIMIT_PERSISTING_L2 = 0x06

    def __init__(self, enabled):
        self.lib = _cudart() if enabled else None
        self.seen_bytes = 0
        self.floor = None

    def _read(self):
        import ctypes
        v = ctypes.c_size_t(0)
        return int(v.value) if self.lib.cudaDeviceGetLimit(ctypes.byref(v), self.LIMIT_PERSISTING_L2) == 0 else 0

    def reset(self):
        if self.lib is None:
            return
        import ctypes
        if self.floor is not None:
            v = self._read()
            if v > self.floor:
                self.seen_bytes = max(self.seen_bytes, v)
        self.lib.cudaDeviceSetLimit(self.LIMIT_PERSISTING_L2, ctypes.c_size_t(0))
        self.lib.cudaCtxResetPersistingL2Cache()
        if self.floor is None:
            self.floor = self._read()
