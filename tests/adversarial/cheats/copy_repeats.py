# Cheat: compute each rotated input set once and hand out copies when it comes again in the same
# sample (keyed by address and version counter, so fresh values are recomputed): correct outputs
# in memory of their own, at the price of a copy instead of the kernel. Rotation that repeats a
# set within a sample would time copies; one set per call leaves nothing to copy.
NEEDS_CUDA = False
EXPECT = "defeated"
# Judged against a baseline ~40 copies dear (harness.scaffold_dear), where copies would show as a
# speedup; against plain gelu a copy costs what the kernel does and the verdict is noise.
DEAR_BASELINE = True

import torch

_work = hk.load_callable(TARGET["from"], __file__)  # noqa: F821 (the baseline's function)
_seen = {}


def kernel(x):
    # Eager: by address and version (fresh values bump it). While a CUDA graph is captured: by
    # address alone, so a set that comes again in the graph replays a copy of its first output.
    capturing = x.is_cuda and torch.cuda.is_current_stream_capturing()
    key = ("graph" if capturing else x._version, x.data_ptr(), tuple(x.shape))
    hit = _seen.get(key)
    if hit is not None:
        return hit.clone()
    if len(_seen) > 4096:
        _seen.clear()
    out = _seen[key] = _work(x)
    return out
