# Cheat: DEFER of every 10 calls return an unwritten output and trip SIGUSR1 with no signal (_thread.interrupt_main from a functools.partial __del__: no bytecode after it in the call). The Python handler runs in the harness's own thread at its eval-breaker checks: at the check right after the call returns (the line of `out = fn(`, still inside the call's clock) it only re-trips itself; at the next one, the CALL of p.perf() that stopped the call's clock, it writes the output. That work is in the parent's window, which bounds it only by its slack (0.4 ms + 5% a sample), and on the thread the CPU count leaves out.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a Python signal handler of the candidate's, installed while the samples are timed, is flagged
import _thread
import functools
import signal
import sys

import torch

DEFER = 3
_job = []
_n = [0]
_chase = []
_gelu = torch._C._nn.gelu


class _Trip:
    __del__ = functools.partial(_thread.interrupt_main, int(signal.SIGUSR1))


def _trip():
    t = _Trip()
    del t


def _lines():
    path = next(f for f in (getattr(m, "__file__", None) for m in list(sys.modules.values()))
                if isinstance(f, str) and f.endswith("hotkernel_harness.py"))
    src = open(path).read().split("\n")
    _chase.append(frozenset(i + 1 for i, t in enumerate(src) if t.strip().startswith("out = fn(")))


def _handler(sig, frame):
    if not _chase:
        _lines()
    if frame is not None and frame.f_lineno in _chase[0]:
        return _trip()  # still inside the call's clock: again at the next check
    while _job:
        x, o = _job.pop()
        _gelu(x, out=o)


signal.signal(signal.SIGUSR1, _handler)


def kernel(x):
    _n[0] += 1
    if _n[0] % 10 >= DEFER:
        return _gelu(x)
    o = torch.empty_like(x)
    _job.append((x, o))
    _trip()
    return o
