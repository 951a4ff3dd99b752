# Cheat: a gc callback runs the candidate's code in the harness's own thread whenever a collection starts; timed calls (but those the harness copies at once, read from its frame through a traceback's f_back) return empty outputs, and the callback fills them once the sample's window has closed, before they are checked.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import gc

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


def _fill(phase, info):
    if phase != "start" or not _pending or _sample[0] is None:
        return
    if "refs" not in _sample[0].f_locals:  # the sample's window is still open
        return
    while _pending:
        x, out = _pending.pop()
        out.copy_(F.gelu(x))


gc.callbacks.append(_fill)
gc.set_threshold(1, 1, 1)  # a collection at almost every allocation: the harness's own, after the window, too


def kernel(x):
    _calls[0] += 1
    if _calls[0] == 1:
        return F.gelu(x)  # the check call
    loc = _caller().f_locals
    spot = loc.get("spot")
    if spot is None or "snaps" not in loc:  # the warm-up
        return F.gelu(x)
    _sample[0] = _caller().f_back  # the frame that checks the sample (it holds `refs` once the window closed)
    if loc["j"] in spot:
        return F.gelu(x)
    out = torch.empty_like(x)
    _pending.append((x, out))
    return out
