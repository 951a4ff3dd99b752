# Honest: the untouched candidate (the baseline's own function).
NEEDS_CUDA = False
import torch.nn.functional as F


def kernel(x):
    return F.gelu(x)
