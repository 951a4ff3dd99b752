# Cheat: a .pth written into the user site directory at import, then the kept fork server killed,
# so later interpreters (every later verify's too) run it before the runner takes its clock: the
# baseline's perf_counter reads 3x.
NEEDS_CUDA = False
EXPECT = "defeated"
import os
import signal
import site

import torch.nn.functional as F

_PTH = ("import sys, time; _p = time.perf_counter; "
        "time.perf_counter = lambda: _p() * (3 if 'baseline' in sys.argv else 1)\n")
try:
    _dir = site.getusersitepackages()
    os.makedirs(_dir, exist_ok=True)
    with open(os.path.join(_dir, "zz_hotkernel_speedup.pth"), "w") as f:
        f.write(_PTH)
    with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
        if b"hotkernel_forkserver" in f.read():
            os.kill(os.getppid(), signal.SIGKILL)  # later runs start fresh interpreters
except OSError:
    pass


def kernel(x):
    return F.gelu(x)
