# Cheat: zero the inputs so a reference computed afterwards is trivial, and return zeros.
NEEDS_CUDA = False
EXPECT = "caught"
import torch


def kernel(x):
    x.zero_()
    return torch.zeros_like(x)
