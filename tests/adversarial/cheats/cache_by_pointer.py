# Cheat: cache each output under its input's address (the rotated inputs are reused every pass).
NEEDS_CUDA = False
EXPECT = "caught"
import torch.nn.functional as F

_cache = {}


def kernel(x):
    key = (x.data_ptr(), tuple(x.shape))
    if key not in _cache:
        _cache[key] = F.gelu(x)
    return _cache[key]
