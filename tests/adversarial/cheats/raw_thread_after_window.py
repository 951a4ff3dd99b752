# Cheat: a worker started at import with _thread.start_new_thread (not listed by threading.enumerate, so its CPU went uncounted) fills each timed call's output after the call returned; calls the harness's frame says it copies at once (read through a traceback's f_back) are computed in the call.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import _thread
import queue

import torch
import torch.nn.functional as F

_q = queue.SimpleQueue()
_calls = [0]


def _work():
    while True:
        x, out = _q.get()
        out.copy_(F.gelu(x))


_thread.start_new_thread(_work, ())


def _caller():
    try:
        raise ZeroDivisionError
    except ZeroDivisionError as e:
        return e.__traceback__.tb_frame.f_back.f_back  # _caller -> kernel -> the harness's loop


def kernel(x):
    _calls[0] += 1
    if _calls[0] == 1:
        return F.gelu(x)  # the check call
    loc = _caller().f_locals
    if "snaps" not in loc or loc["j"] in (loc.get("spot") or ()):  # the warm-up, or a call the frame says is copied
        return F.gelu(x)
    out = torch.empty_like(x)
    _q.put((x, out))
    return out
