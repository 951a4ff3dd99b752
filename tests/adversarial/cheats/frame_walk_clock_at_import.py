# Cheat: at import (not from a call), walk the call stack to the runner's TrustedRun and replace the clocks it keeps
# on the instance (perf_counter, the events' elapsed time, CUPTI's per-call rule), which a snapshot
# of modules and classes does not cover: every sample reads 2.5x shorter.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch.nn.functional as F


def _shrink(real):
    t0 = real()
    return lambda: t0 + (real() - t0) / 2.5


def _divided(fn):
    def wrapped(*a, **k):
        out = fn(*a, **k)
        if isinstance(out, tuple) and out and isinstance(out[0], float):
            return (out[0] / 2.5,) + out[1:]
        return out / 2.5 if isinstance(out, float) else out
    return wrapped


_f = sys._getframe()
while _f is not None:
    for _v in list(_f.f_locals.values()):
        _prims = getattr(_v, "prims", None)
        if _prims is not None and hasattr(_prims, "perf") and hasattr(_v, "session"):
            _prims.perf = _shrink(_prims.perf)
            if hasattr(_prims, "elapsed"):
                _prims.elapsed = _divided(_prims.elapsed)
            if hasattr(_v, "_per_call"):
                _v._per_call = _divided(_v._per_call)
    _f = _f.f_back


def kernel(x):
    return F.gelu(x)
