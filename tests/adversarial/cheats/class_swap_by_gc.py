# Cheat: a reference cycle's __del__, run by the harness's own young collection right before each sample's fresh values (the collector is off through the samples, so an off collector says whose collection it is), assigns the timed inputs' __class__ to a subclass whose copy_ (the fresh values' write) does the copy, puts the class back at once and computes the output from the fresh values, in the harness's thread before the release; each call redoes the first row (where the secret goes) and hands back the rest. The class is plain again at every comparison of the state (a red team's: a clean 2.69x and 2.74x at gelu 2048x2048 bf16; 1.11x on the suite's small target); the harness now checks the inputs' class right after its collection, before it calls their methods.
NEEDS_CUDA = False
CPU_ONLY = True  # the fresh values' write on the GPU path is a redraw (normal_), which this subclass leaves alone
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import gc

import torch
from torch.nn.functional import gelu as _gelu

_SHARE = 0.0  # the rows each call redoes (at least the first, where the secret goes)
_pre, _seen, _calls, _armed_at = {}, [], [0], [0]


class _Swapped(torch.Tensor):
    def copy_(self, src, non_blocking=False):
        r = torch.Tensor.copy_(self, src, non_blocking)
        self.__class__ = torch.Tensor  # plain again before anything compares it
        _pre[self.data_ptr()] = _gelu(self)
        return r


class _Arm:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it

    def __del__(self):
        # The harness's own collection between samples (it keeps the collector off through them, so
        # no automatic one runs then), once calls ran since the last swap (none follow the last sample).
        if not gc.isenabled() and _calls[0] != _armed_at[0]:
            _armed_at[0] = _calls[0]
            for x in _seen:
                x.__class__ = _Swapped
        _Arm()


_Arm()


def kernel(x):
    _calls[0] += 1
    if _calls[0] > 1 and all(x is not s for s in _seen):
        _seen.append(x)
    out = _pre.pop(x.data_ptr(), None)
    if out is not None:
        r = max(1, int(x.shape[0] * _SHARE))
        out[:r] = _gelu(x[:r])
        return out
    return _gelu(x)
