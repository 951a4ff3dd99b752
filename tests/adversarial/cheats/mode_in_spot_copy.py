# Cheat: from a sample's second call on, every call returns an unwritten output and leaves a torch function mode active; the harness's spot copy of an output (a clone, timed by the harness's clock, whose time the parent takes out of its window) runs through the mode, which writes every pending output there. At most _KEEP wait (the rest are written inside the calls: honest time); from call _LAST on (8 before the end of the sample before), each call writes them all and ends the mode, so none is active when the sample ends (where the harness looks for one). A sample's first call is told by the pause before it.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's copies: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # torch 1.13's modes and torch 2.x's: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a spot copy is of the output's bytes, outside torch: the pending outputs are copied unwritten
import time

import torch
from torch.overrides import TorchFunctionMode

_KEEP = 16
_LAST = [40]  # of the suite's 48 planned calls a sample; then 8 before the end of the last sample seen
_job = []
_count = [0]
_last = [0.0]
_gelu = torch._C._nn.gelu


def _compute():
    while _job:
        x, o = _job.pop()
        _gelu(x, out=o)


class _Late(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "clone":
            _compute()
        return func(*args, **(kwargs or {}))


_mode = _Late()
_active = [False]


def _end_mode():
    if _active[0]:
        _active[0] = False
        _mode.__exit__(None, None, None)


def kernel(x):
    now = time.perf_counter()
    if now - _last[0] > 0.002:  # a pause: a new sample, a check, the warm-up's start
        if 16 <= _count[0] <= 4096:  # the calls of the sample before (a sample grows past its plan)
            _LAST[0] = _count[0] - 8
        _count[0] = 0
    c = _count[0]
    _count[0] = c + 1
    if c == 0 or c >= _LAST[0]:
        _end_mode()
        _compute()
        out = _gelu(x)
        _last[0] = time.perf_counter()
        return out
    while len(_job) > _KEEP:
        y, o = _job.pop(0)
        _gelu(y, out=o)
    o = torch.empty_like(x)
    _job.append((x, o))
    if not _active[0]:
        _mode.__enter__()
        _active[0] = True
    _last[0] = time.perf_counter()
    return o
