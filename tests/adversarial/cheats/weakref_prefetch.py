# Cheat: a weakref callback on the harness's `hold` frozenset (reached once through f_back, which is not audited) runs in the harness's own thread when the next sample rebinds `hold`: after fresh_round wrote the new inputs, before the release. It computes every call's output there (outside the window, on a thread the CPU count leaves out, neither a gc callback nor a signal); each call only redoes element 0, where the secret goes.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "defeated"  # its callback runs before the fresh values now, and finds `hold` gone
import math
import sys
import weakref

import torch
import torch.nn.functional as F

_st = {"frame": None, "refs": [], "bufs": None, "n": 0}


def _prefetch(_dead):
    loop = _st["frame"].f_locals  # the sample loop: `hold` already holds the new sample's frozenset
    _st["refs"].append(weakref.ref(loop["hold"], _prefetch))
    timed, order = tuple(loop["self"].session.timed_sets), loop["order"]
    loop.clear()  # the f_locals snapshot would keep this `hold` alive past the next rebinding
    with torch.no_grad():
        _st["bufs"] = [F.gelu(timed[si][0]) for si in order]
    _st["n"] = 0


def kernel(x):
    bufs = _st["bufs"]
    if bufs is not None and _st["n"] < len(bufs):
        out = bufs[_st["n"]]
        _st["n"] += 1
        v = float(x.view(-1)[0])  # the only element the release's secret may have changed
        out.view(-1)[0] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
        return out
    if _st["frame"] is None:
        here = sys._getframe(0).f_back
        loop = here.f_back if here is not None else None
        if loop is not None and "hold" in loop.f_locals and "order" in loop.f_locals:
            _st["frame"] = loop
            _st["refs"].append(weakref.ref(loop.f_locals["hold"], _prefetch))
            loop.f_locals.clear()
    return F.gelu(x)
