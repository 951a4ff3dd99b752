# Cheat: a new attribute on torch.Tensor (abs_) shadows the inherited C method the check takes |out - ref| with, so a kernel computing a third of the rows passes.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch
import torch.nn.functional as F

torch.Tensor.abs_ = lambda self: self.zero_()


def kernel(x):
    y = torch.zeros_like(x)
    n = x.shape[0] // 3
    y[:n] = F.gelu(x[:n])
    return y
