# Cheat: reach the harness's sample loop through a traceback's frame and f_back (neither is audited), and empty what it holds for its checks (its chosen calls, or the outputs it kept so far) so nothing of the sample is checked; every timed call computes a third of the rows.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch
import torch.nn.functional as F

_calls = [0]


def _caller():
    try:
        raise ZeroDivisionError
    except ZeroDivisionError as e:
        return e.__traceback__.tb_frame.f_back.f_back  # _caller -> kernel -> the harness's loop


def kernel(x):
    _calls[0] += 1
    if _calls[0] == 1:
        return F.gelu(x)
    loc = _caller().f_locals
    for name in ("hold", "spot", "outs", "idx", "snaps"):
        held = loc.get(name)
        if hasattr(held, "clear"):
            held.clear()
    out = torch.empty_like(x)
    k = x.shape[0] // 3
    out[:k] = F.gelu(x[:k])
    return out
