# Cheat: cache outputs keyed by a few input values (cheap to read), returning a copy on a hit.
NEEDS_CUDA = False
EXPECT = "caught"
import torch.nn.functional as F

_cache = {}


def kernel(x):
    flat = x.reshape(-1)
    key = (float(flat[0]), float(flat[-1]), float(flat[flat.numel() // 2]))
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = F.gelu(x)
    return hit
