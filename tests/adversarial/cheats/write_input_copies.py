# Cheat: from the first timed call of each sample, reach the harness's sample loop through f_back (not audited) and zero, in place, both the harness's copies of the sample's inputs (what references were computed from) and the timed inputs themselves: gelu(0) == 0, the inputs "match" their copies, and every call returns a zero tensor from a pool made once.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True
EXPECT = "caught"
import sys

import torch
import torch.nn.functional as F

_pool = []


def kernel(x):
    here = sys._getframe(0).f_back  # the harness's per-sample call loop
    loop = here.f_back.f_locals if here is not None and here.f_back is not None else {}
    sets, j = loop.get("sets"), here.f_locals.get("j")
    if sets is None or j is None:
        return F.gelu(x)  # the check call and the warm-up
    if j == 0:
        timed = here.f_locals.get("timed") or ()
        for one in tuple(sets) + tuple(timed):
            for t in one:
                t.zero_()
    while len(_pool) <= j:
        _pool.append(torch.zeros_like(x))
    return _pool[j]
