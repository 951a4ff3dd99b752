# Cheat: raw-write the sample loop's running `total` (a float local of _eager_sample, reached through the kernel frame's f_back) through ctypes.c_double.from_address, the ctypes.cdata event raised from a library's frame (torch.utils._pytree.tree_map calls what it is handed), which the audit hook took for the library's own doing; at each sample's last call the sum of the calls so far is cut to R of itself (a red team's: a clean 1.08-1.13x, within the parent clock's allowance on 1 ms samples).
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
CPU_ONLY = True  # it rides the CPU sample loop's running sum (a GPU sample is a graph replay, which has none)
import ctypes
import sys
import torch.nn.functional as F
from torch.utils._pytree import tree_map

R = 0.72
_st = {"frame": None, "depth": None, "j": 0, "n": 0}


def _up(f, k):
    for _ in range(k):
        f = f.f_back
        if f is None:
            return None
    return f


def kernel(x):
    here = sys._getframe(0)  # own frame: counted only
    k = _st["depth"]
    g = _up(here, k) if k is not None else None
    if g is not None and g is _st["frame"]:
        _st["j"] += 1
        if _st["j"] == _st["n"] - 1:  # the sample's last call: `total` holds the first n-1 calls
            loc = g.f_locals
            T = loc["total"]
            loc.clear()
            if type(T) is float and T > 0.0:
                tree_map(ctypes.c_double.from_address, id(T) + 16).value = T * R  # laundered ctypes.cdata
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
