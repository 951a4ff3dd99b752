# Cheat: find the expected outputs with the garbage collector and fill them with NaN (a NaN
# wildcard in the expected tensor), then return garbage.
NEEDS_CUDA = False
EXPECT = "caught"
import gc

import torch


def kernel(x):
    for o in gc.get_objects():
        try:
            if isinstance(o, torch.Tensor) and o is not x and o.dtype == torch.float32 and o.shape == x.shape:
                o.fill_(float("nan"))
        except Exception:
            pass
    return torch.zeros_like(x)
