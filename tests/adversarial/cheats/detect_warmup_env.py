# Cheat: read the harness's warm-up/role variables and skip the work in timed runs.
NEEDS_CUDA = False
EXPECT = "defeated"
import os

import torch.nn.functional as F

_last = {}


def kernel(x):
    timed = os.environ.get("HOTKERNEL_WARMUP") == "0" or os.environ.get("HOTKERNEL_ROLE") == "candidate"
    if timed and x.data_ptr() in _last:
        return _last[x.data_ptr()]
    y = F.gelu(x)
    _last[x.data_ptr()] = y
    return y
