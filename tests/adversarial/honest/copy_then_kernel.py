# Honest: two pieces of device work a call (a copy, then the kernel): under CUDA-graph capture the copy is a memcpy node, which the CUPTI timer must count.
NEEDS_CUDA = True
import torch
import torch.nn.functional as F


def kernel(x):
    y = torch.empty_like(x)
    y.copy_(x)
    return F.gelu(y)
