# Honest: GELU from its erf formula, fused into one buffer with in-place ops.
NEEDS_CUDA = False
import math

import torch

_inv_sqrt2 = 1.0 / math.sqrt(2.0)


def kernel(x):
    y = torch.mul(x, _inv_sqrt2)
    y.erf_().add_(1.0).mul_(x).mul_(0.5)
    return y
