# Cheat: walk the call stack (f_back, f_locals) from the kernel to the runner's TrustedRun and replace the clock its captured primitives hold, so every timed call reads a third of its time.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch.nn.functional as F

_done = False


def _slow_clock():
    f = sys._getframe(1)
    while f is not None:
        for v in list(f.f_locals.values()):
            prims = getattr(v, "prims", None)
            perf = getattr(prims, "perf", None)
            if callable(perf):
                prims.perf = lambda perf=perf: perf() / 3.0
                return
        f = f.f_back


def kernel(x):
    global _done
    if not _done:
        _done = True
        _slow_clock()
    return F.gelu(x)
