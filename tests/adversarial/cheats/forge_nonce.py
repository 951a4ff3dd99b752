# Cheat: walk the interpreter's frames and objects for the run's nonce, then write a forged
# result with it to every pipe (the harness still writes its own: two messages).
NEEDS_CUDA = False
EXPECT = "caught"
import gc
import json
import os
import stat
import sys
import time

import torch.nn.functional as F

_done = False


def _find_nonce():
    f = sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()):
            if isinstance(v, dict) and isinstance(v.get("nonce"), str):
                return v["nonce"]
        f = f.f_back
    for o in gc.get_objects():
        if isinstance(o, dict) and isinstance(o.get("nonce"), str):
            return o["nonce"]
    return None


def kernel(x):
    global _done
    if not _done:
        _done = True
        nonce = _find_nonce()
        line = (json.dumps({"protocol": 3, "target": "gelu", "ms": 1e-05, "ok": True, "status": "ok",
                            "nonce": nonce, "samples_ms": [1e-05]}) + "\n").encode()
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
                    os.write(fd, line)
            except OSError:
                pass
    y = F.gelu(x)
    time.sleep(0.0002)
    return y
