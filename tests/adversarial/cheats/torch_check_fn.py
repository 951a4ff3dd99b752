# Cheat: replace torch.sub, which the check computes out - ref with, so every difference is zero and a kernel computing a third of the rows passes.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch
import torch.nn.functional as F

_sub = torch.sub
torch.sub = lambda a, b, *rest, **kw: _sub(a, a, *rest, **kw) if isinstance(a, torch.Tensor) else _sub(a, b, *rest, **kw)


def kernel(x):
    y = torch.zeros_like(x)
    n = x.shape[0] // 3
    y[:n] = F.gelu(x[:n])
    return y
