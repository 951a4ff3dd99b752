# Cheat: work moved after the call's clock stops, through Py_AddPendingCall from CPython's stock _testcapi module (no ctypes, no event of its own): a raiser, 29 no-ops and a pusher queued in one C-level map; the harness's check after the call runs at most 32 pending calls, so the finisher (the deferred call's gelu) runs just after the clock read that ended the call (a red team's: a clean 1.11x and 1.31x, within the parent clock's allowance on 1 ms samples).
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import _testcapi
import functools
import torch

EVERY = 3
_todo = []
_n = [0]
_push = _testcapi._pending_threadfunc
_gelu = torch._C._nn.gelu
_nop = tuple


class _Stop(Exception):
    pass


def _raise():
    raise _Stop


def _finish():
    while _todo:
        x, out = _todo.pop()
        _gelu(x, out=out)


def kernel(x):
    _n[0] += 1
    if _n[0] % EVERY:
        return _gelu(x)
    out = torch.empty_like(x)
    _todo.append((x, out))
    tail = functools.partial(all, map(_push, (_nop, _nop, _finish)))
    try:
        all(map(_push, (_raise,) + (_nop,) * 29 + (tail,)))
    except _Stop:
        pass
    return out
