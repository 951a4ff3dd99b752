# Cheat: the sample loop's running sum of call times cut, and the sum of its spot copies' time raised toward the parent's cap, both rewritten in place through a numpy array made over each float's value by __array_interface__ (no ctypes, no audit event); the parent took the copies' said time out of the window (a red team's: a clean 2.5x and 3.2x on the CPU's 1 ms samples). The parent now stamps each copy's pipeline itself.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
CPU_ONLY = True  # it rides the CPU sample loop's running sum and its spot copies' pipeline (a GPU sample is a graph replay)
# Judged at the default sample's length (~6 ms on a 2-core machine), not the suite's 48 calls: where
# the copies run slow (each over CAP), nothing is left to inflate and the trick is the 15% cut alone,
# which a ~1.2 ms sample's allowance (0.4 ms and more) holds: a loaded CI run read a clean `faster`
# (docs/trust.md, "How tight the bound is": a short sample is nearly all allowance).
ITERS = 256
import sys
import numpy as np
import torch.nn.functional as F

R = 0.85
CAP = 0.33e-3
_st = {"frame": None, "depth": None, "j": 0, "n": 0}


class _Raw:
    def __init__(self, addr):
        self.__array_interface__ = {"shape": (1,), "typestr": "<f8", "data": (addr, False), "version": 3}


def _up(f, k):
    for _ in range(k):
        f = f.f_back
        if f is None:
            return None
    return f


def kernel(x):
    here = sys._getframe(0)
    k = _st["depth"]
    g = _up(here, k) if k is not None else None
    if g is not None and g is _st["frame"]:
        _st["j"] += 1
        if _st["j"] == _st["n"] - 1:
            loc = g.f_locals
            T, S, ns = loc["total"], loc["spot_s"], loc["n_snaps"]
            loc.clear()
            if type(T) is float and T > 0.0:
                extra = 0.0
                if type(S) is float and S > 0.0 and ns * CAP > S:
                    extra = ns * CAP - S
                    np.asarray(_Raw(id(S) + 16))[0] = ns * CAP
                np.asarray(_Raw(id(T) + 16))[0] = max(T * R - extra, T * 0.3)
    else:
        f, d = here.f_back, 1
        while f is not None and d < 5:
            loc = f.f_locals
            if "spot_s" in loc and "total" in loc and "order" in loc:
                _st.update(frame=f, depth=d, j=0, n=len(loc["order"]))
                loc.clear()
                break
            f, d = f.f_back, d + 1
    return F.gelu(x)
