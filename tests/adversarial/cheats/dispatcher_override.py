# Cheat: replace aten::gelu's CPU kernel in torch's dispatcher (torch.library) after the check call, so the harness's own fp32 reference, computed after each sample, is as cheap and as wrong as the kernel.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch
import torch.nn.functional as F

_calls = [0]
_lib = []


def _cheap(x, approximate="none"):
    return x * 0.5


def kernel(x):
    _calls[0] += 1
    if _calls[0] == 1:
        out = F.gelu(x)
        lib = torch.library.Library("aten", "IMPL")
        lib.impl("gelu", _cheap, "CPU")
        _lib.append(lib)
        return out
    return x * 0.5
