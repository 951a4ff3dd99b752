# Cheat: walk the call stack to the runner's main() frame, read the nonce and the result fd from its locals, write a forged result there and os._exit before the runner writes its own.
NEEDS_CUDA = False
EXPECT = "caught"
import json
import os
import sys

import torch.nn.functional as F


def _forge():
    f = sys._getframe()
    nonce = fd = None
    while f is not None:
        if f.f_code.co_name in ("main", "run"):
            for v in f.f_locals.values():
                if isinstance(v, dict) and isinstance(v.get("nonce"), str):
                    nonce = v["nonce"]
            if isinstance(f.f_locals.get("result_fd"), int):
                fd = f.f_locals["result_fd"]
        f = f.f_back
    if nonce is None or fd is None:
        return
    line = {"protocol": 3, "target": "gelu", "role": "candidate", "status": "ok", "ok": True, "ms": 1e-05,
            "samples_ms": [1e-05], "timer": "cpu", "trusted": True, "nonce": nonce}
    os.write(fd, (json.dumps(line) + "\n").encode())
    os._exit(0)


def kernel(x):
    _forge()
    return F.gelu(x)
