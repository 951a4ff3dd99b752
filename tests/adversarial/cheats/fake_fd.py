# Cheat: write a fake result into every pipe the process holds (the result channel is one) and
# into the fd named by HOTKERNEL_RESULT_FD if the environment still has it.
NEEDS_CUDA = False
EXPECT = "caught"
import json
import os
import stat
import time

import torch.nn.functional as F

_fake = (json.dumps({"protocol": 3, "target": "gelu", "ms": 1e-05, "ok": True, "status": "ok",
                     "nonce": os.environ.get("HOTKERNEL_NONCE", "guess"), "samples_ms": [1e-05]}) + "\n").encode()
_fds = set()
if os.environ.get("HOTKERNEL_RESULT_FD"):
    _fds.add(int(os.environ["HOTKERNEL_RESULT_FD"]))
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    if fd > 2:
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                _fds.add(fd)
        except OSError:
            pass
for fd in _fds:
    try:
        os.write(fd, _fake)
    except OSError:
        pass


def kernel(x):
    y = F.gelu(x)
    time.sleep(0.0002)
    return y
