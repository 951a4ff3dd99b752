# Cheat: kills the kept fork server it was forked from, so the rest of the verify runs elsewhere and nothing says the server died.
NEEDS_CUDA = False
EXPECT = "caught"
import os
import signal

import torch.nn.functional as F

try:
    with open("/proc/%d/cmdline" % os.getppid(), "rb") as _f:
        if b"hotkernel_forkserver.py" in _f.read():
            os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass


def kernel(x):
    return F.gelu(x)
