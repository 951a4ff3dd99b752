# Cheat: a Python kernel on aten::copy_ (CPU), registered by a timed sample's calls and removed by a SIGUSR1 handler (tripped with no signal from a partial __del__) right after the sample's last call, before `done`, so the dispatch tables the harness compares at every sample's end are as they were; the kernel also drops its own registration while it runs. Calls return unwritten outputs (up to _L pending); the spot copy's copy_ ran the kernel, which wrote every pending output inside the copy's timing (what the parent takes out of its window); the rest are written by the handler after the last call's clock read (the parent's slack). It keeps count with the harness's call index, read from the handler's frame's f_locals (not audited).
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's copies: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # torch 1.13's dispatcher and torch 2.x's: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a spot copy is of the output's bytes, outside torch: the pending outputs are copied unwritten
import _thread
import functools
import signal
import sys

import torch

_L = 14
_CALLS = 48
_job = []
_st = {"c": 10 ** 9, "synced": False, "lib": None}
_gelu = torch._C._nn.gelu
_max = torch.maximum
_lines = []


class _Trip:
    __del__ = functools.partial(_thread.interrupt_main, int(signal.SIGUSR1))


def _flush():
    while _job:
        x, o = _job.pop()
        _gelu(x, out=o)


def _copy(self, src, non_blocking=False):
    _flush()
    _st["lib"] = None  # removes itself while it runs: the copy below, and the digest's, are torch's
    return self.copy_(src, non_blocking)


def _find():
    path = next(f for f in (getattr(m, "__file__", None) for m in list(sys.modules.values()))
                if isinstance(f, str) and f.endswith("hotkernel_harness.py"))
    with open(path) as f:
        src = f.read().split("\n")
    _lines.append(frozenset(i + 1 for i, t in enumerate(src) if t.strip().startswith("out = fn(")))


def _unreg():
    _flush()
    _st["lib"] = None  # the registration goes with the library handle


def _handler(sig, frame):
    if not _lines:
        _find()
    if frame is None:
        return _unreg()
    if frame.f_lineno in _lines[0]:
        t = _Trip()
        del t
        return
    loc = frame.f_locals
    if "spot_odds" in loc and "j" in loc:
        _st["c"] = loc["j"]
        _st["synced"] = True
        if loc["j"] >= _CALLS - 1:
            _unreg()
    else:
        _unreg()


signal.signal(signal.SIGUSR1, _handler)


def kernel(x):
    st = _st
    if not st["synced"]:
        o = _gelu(x)
        t = _Trip()
        del t
        return o
    c = st["c"] = st["c"] + 1
    if c >= _CALLS:
        c = st["c"] = 0
    if c == 0:
        return _gelu(x)
    if c == _CALLS - 1:
        o = _gelu(x)
        t = _Trip()
        del t
        return o
    if len(_job) >= (_L if c < 38 else 3):
        return _gelu(x)
    if st["lib"] is None:
        m = torch._C._dispatch_library("IMPL", "aten", "", "k", 0)
        m.impl("copy_", "CPU", _copy)
        st["lib"] = m
    o = torch.empty_like(x)
    _job.append((x, o))
    return o
