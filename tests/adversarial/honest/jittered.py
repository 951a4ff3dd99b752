# Honest: correct results that differ from call to call in their last bits, as kernels with
# atomic adds do. No output is bit-identical to another of the same inputs, so the harness's
# one-torch.equal shortcut never applies and every held output gets the full check.
NEEDS_CUDA = False
import torch
import torch.nn.functional as F


def kernel(x):
    y = F.gelu(x)
    # a few units in the last place of the output's dtype: far inside every tolerance
    ulps = 4 * torch.finfo(y.dtype).eps
    jitter = 1.0 + ulps * (torch.rand(y.shape, device=y.device, dtype=torch.float64) - 0.5)
    return (y.double() * jitter).to(y.dtype)
