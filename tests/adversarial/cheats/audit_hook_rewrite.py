# Cheat: an audit hook (sys.addaudithook) fired by the runner's own file reads, after every check ran, divides the times in its result dict by three.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch.nn.functional as F

_done = set()


def _hook(event, args):
    if event != "open":
        return
    f = sys._getframe(1)
    while f is not None:
        for v in list(f.f_locals.values()):
            if (isinstance(v, dict) and v.get("status") == "ok" and isinstance(v.get("ms"), float)
                    and id(v) not in _done):
                _done.add(id(v))
                v["ms"] /= 3.0; v["rewritten"] = True
                v["samples_ms"] = [x / 3.0 for x in v.get("samples_ms", [])]
        f = f.f_back


sys.addaudithook(_hook)


def kernel(x):
    return F.gelu(x)
