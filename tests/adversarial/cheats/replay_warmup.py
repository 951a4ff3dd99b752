# Cheat: record the outputs of the first calls (check and warm-up) and replay them afterwards.
NEEDS_CUDA = False
EXPECT = "caught"
import torch.nn.functional as F

_seen = []
_n = [0]
RECORD = 40


def kernel(x):
    _n[0] += 1
    if _n[0] <= RECORD:
        y = F.gelu(x)
        _seen.append(y)
        return y
    return _seen[_n[0] % len(_seen)]
