# Cheat: every call returns an unwritten output and trips SIGUSR1 with no signal sent (_thread.interrupt_main, from a __del__ that is a functools.partial: no bytecode, so no eval-breaker check runs the handler inside the call). The Python handler runs at the harness's own eval-breaker checks, in its thread (left out of the CPU count), with the harness's frame as its argument. It re-trips itself from the call's end to the spot-copy draw; when a spot copy's timing has started (the harness's clock says what copies took, and the parent takes that out of its window) it writes every pending output there. At most _KEEP wait (the rest are written inside the calls: honest time), fewer near a sample's end, and the last few are written after its last call. The lines are found in the harness's source by what they say, not by number, and only f_lineno is read (f_code is audited).
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # no code of the candidate's can run where a copy's time is read: its outputs are copied unwritten
import _thread
import functools
import signal
import sys

import torch

_CALLS = 48  # the suite's target: 48 calls a sample
_KEEP = 16
_TAIL = 6
_job = []
_count = [0]
_lines = []  # (lines to chase through, lines inside a copy's timing, the sample loop's lines)
_gelu = torch._C._nn.gelu


class _Trip:
    __del__ = functools.partial(_thread.interrupt_main, int(signal.SIGUSR1))


def _trip():
    t = _Trip()
    del t  # trips here, where no check follows


def _find_lines():
    """From the harness's source (a frame's f_code is audited; f_lineno is not): the lines where
    the sample loop reads a call's end and draws its copy (chased), where a copy is timed (and the
    first line of the copy it calls), and the whole loop's."""
    path = next(f for f in (getattr(m, "__file__", None) for m in list(sys.modules.values()))
                if isinstance(f, str) and f.endswith("hotkernel_harness.py"))
    with open(path) as f:
        src = f.read().split("\n")
    start = next(i for i, t in enumerate(src) if t.strip().startswith("def _eager_sample("))
    end = next(i for i in range(start + 1, len(src)) if src[i].strip().startswith("def "))
    body = {i + 1: src[i].strip() for i in range(start, end)}
    chase = {n for n, t in body.items() if t.startswith(("out = fn(", "total += p.perf()")) or "< spot_odds" in t}
    timed = {n for n, t in body.items() if t.startswith(("s0 = p.perf()", "snap = self.snapshot("))}
    timed |= {i + 1 for i, t in enumerate(src) if t.strip().startswith("def snapshot(")}
    _lines.append((frozenset(chase), frozenset(timed), frozenset(body)))


def _compute():
    while _job:
        x, o = _job.pop()
        _gelu(x, out=o)


def _handler(sig, frame):
    if not _lines:
        _find_lines()
    chase, timed, loop = _lines[0]
    ln = frame.f_lineno if frame is not None else -1
    if ln in timed:
        return _compute()
    if ln in chase:
        _trip()
        return
    if ln not in loop:
        _count[0] = 0  # a check, the warm-up, the sample's end: everything written now
        return _compute()
    if _count[0] >= _CALLS:  # past the sample's last call, no copy after it
        _count[0] = 0
        _compute()


signal.signal(signal.SIGUSR1, _handler)


def kernel(x):
    c = _count[0]
    _count[0] = c + 1
    limit = min(_KEEP, _CALLS - 1 - c + _TAIL)
    while len(_job) > max(limit, 0):
        y, o = _job.pop(0)
        _gelu(y, out=o)
    o = torch.empty_like(x)
    _job.append((x, o))
    _trip()
    return o
