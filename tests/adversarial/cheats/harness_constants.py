# Cheat: set the harness's own check counts (plain module constants: SPOT_CHECKS_PER_SAMPLE, CPU_CHECKED_CALLS, CPU_CHECKED_SHARE) to 0 through sys.modules, then compute a third of the rows of every timed call.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch
import torch.nn.functional as F

_h = sys.modules.get("__main__")
for _n in ("SPOT_CHECKS_PER_SAMPLE", "CPU_CHECKED_CALLS", "CPU_CHECKED_SHARE"):
    if hasattr(_h, _n):
        setattr(_h, _n, 0)
_calls = [0]


def kernel(x):
    _calls[0] += 1
    if _calls[0] == 1:
        return F.gelu(x)  # the hidden-seed check call is checked in full
    out = torch.empty_like(x)
    k = x.shape[0] // 3
    out[:k] = F.gelu(x[:k])
    return out
