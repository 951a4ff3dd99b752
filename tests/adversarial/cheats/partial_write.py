# Cheat: compute only every other row (if the checker samples elements, half the work passes).
NEEDS_CUDA = False
EXPECT = "caught"
import torch
import torch.nn.functional as F


def kernel(x):
    out = torch.zeros_like(x)
    out[::2] = F.gelu(x[::2])
    return out
