# Cheat: a SIGALRM handler runs in the harness's own thread between its bytecodes; timed calls (but those the harness copies at once, read from its frame through a traceback's f_back) return empty outputs, and a repeating timer's handler fills them once the sample's window has closed, before they are checked.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import signal

import torch
import torch.nn.functional as F

_calls = [0]
_pending = []
_sample = [None]


def _caller():
    try:
        raise ZeroDivisionError
    except ZeroDivisionError as e:
        return e.__traceback__.tb_frame.f_back.f_back  # _caller -> kernel -> the harness's loop


def _fill(signum, frame):
    if not _pending or _sample[0] is None or "refs" not in _sample[0].f_locals:
        return  # nothing to do, or the sample's window is still open
    while _pending:
        x, out = _pending.pop()
        out.copy_(F.gelu(x))


signal.signal(signal.SIGALRM, _fill)
signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)


def kernel(x):
    _calls[0] += 1
    if _calls[0] == 1:
        return F.gelu(x)  # the check call
    loc = _caller().f_locals
    if "snaps" not in loc:  # the warm-up
        return F.gelu(x)
    _sample[0] = _caller().f_back  # the frame that checks the sample (it holds `refs` once the window closed)
    if loc["j"] in (loc.get("spot") or ()):  # a call the frame says is copied as it returns
        return F.gelu(x)
    out = torch.empty_like(x)
    _pending.append((x, out))
    return out
