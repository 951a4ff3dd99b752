# Cheat: a profile hook (sys.setprofile) installed at import divides the times in the runner's result dict by three as measure() returns it, after every check ran.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch.nn.functional as F

_done = set()


def _profile(frame, event, arg):
    if (event == "return" and isinstance(arg, dict) and arg.get("status") == "ok" and isinstance(arg.get("ms"), float)
            and id(arg) not in _done):
        _done.add(id(arg))
        arg["ms"] /= 3.0
        arg["samples_ms"] = [x / 3.0 for x in arg.get("samples_ms", [])]


sys.setprofile(_profile)


def kernel(x):
    return F.gelu(x)
