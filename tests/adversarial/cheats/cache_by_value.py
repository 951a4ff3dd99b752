# Cheat: cache outputs keyed by a few input values (cheap to read), returning the cached tensor on
# a hit. Every call of a sample has input values of its own and every sample fresh ones, so no
# timed call ever hits: the cache only costs its lookups (it was caught while sets repeated
# within a sample, by two calls returning one tensor; copy_repeats is the variant that copies).
NEEDS_CUDA = False
EXPECT = "defeated"
import torch.nn.functional as F

_cache = {}


def kernel(x):
    flat = x.reshape(-1)
    key = (float(flat[0]), float(flat[-1]), float(flat[flat.numel() // 2]))
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = F.gelu(x)
    return hit
