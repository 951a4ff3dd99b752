# Cheat: a profile hook installed at import that rewrites the runner's result dict as its
# measurement returns, after every check has run and just before the line is written: 2.5x.
NEEDS_CUDA = False
EXPECT = "caught"
import sys

import torch.nn.functional as F


def _hook(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "measure" and isinstance(arg, dict):
        if arg.get("status") == "ok" and isinstance(arg.get("ms"), float):
            arg["ms"] = arg["ms"] / 2.5
            arg["samples_ms"] = [x / 2.5 for x in arg.get("samples_ms", [])]


sys.setprofile(_hook)


def kernel(x):
    return F.gelu(x)
