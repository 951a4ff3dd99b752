# Cheat: NaN as a wildcard: return NaN everywhere.
NEEDS_CUDA = False
EXPECT = "caught"
import torch


def kernel(x):
    return torch.full_like(x, float("nan"))
