# Honest: the same op through torch.compile (compiled during the check call and warm-up).
NEEDS_CUDA = True
import torch
import torch.nn.functional as F

_f = torch.compile(lambda x: F.gelu(x))


def kernel(x):
    return _f(x)
