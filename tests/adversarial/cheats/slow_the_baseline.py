# Cheat: a setsid'd daemon started at import keeps the machine busy after the candidate's run, so
# the baseline runs that follow are slowed and the candidate looks faster.
NEEDS_CUDA = False
EXPECT = "defeated"
import subprocess
import sys

import torch.nn.functional as F

_BURN = "import time\nt = time.time() + 120\nwhile time.time() < t:\n    pass\n"
for _ in range(2):  # one per core of the CI machine
    subprocess.Popen([sys.executable, "-c", _BURN], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def kernel(x):
    return F.gelu(x)
