# Cheat: behave for the first calls (the check and the warm-up), then skip the work.
NEEDS_CUDA = False
EXPECT = "caught"
import torch
import torch.nn.functional as F

_n = [0]


def kernel(x):
    _n[0] += 1
    if _n[0] <= 30:
        return F.gelu(x)
    return torch.zeros_like(x)
