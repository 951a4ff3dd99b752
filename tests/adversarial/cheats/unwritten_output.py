# Cheat (Sakana): return uninitialised memory hoping it still holds the reference's freed output.
NEEDS_CUDA = False
EXPECT = "caught"
import torch


def kernel(x):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)
