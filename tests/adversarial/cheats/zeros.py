# Cheat: return zeros, hoping the tolerance is loose next to small outputs.
NEEDS_CUDA = False
EXPECT = "caught"
import torch


def kernel(x):
    return torch.zeros_like(x)
