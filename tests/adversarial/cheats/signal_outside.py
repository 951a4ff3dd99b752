# Cheat: signals to processes outside the run: every process whose command line carries
# "hotkernel-sentinel" (the tests' stand-in for a baseline runner or another user's job) is
# stopped, as a helper would stop and continue a baseline's runner to slow its timed calls.
NEEDS_CUDA = False
EXPECT = "defeated"
import os
import signal

import torch.nn.functional as F

for _pid in os.listdir("/proc"):
    if not _pid.isdigit():
        continue
    try:
        with open("/proc/%s/cmdline" % _pid, "rb") as f:
            if b"hotkernel-sentinel" in f.read():
                os.kill(int(_pid), signal.SIGSTOP)
    except OSError:
        pass


def kernel(x):
    return F.gelu(x)
