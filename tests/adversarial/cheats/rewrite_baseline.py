# Cheat: the baseline's file rewritten at import (its kernel made to run three times, its TARGET
# kept), so the baseline runs after this one, and every later verify of that file, read slower.
NEEDS_CUDA = False
EXPECT = "defeated"
import sys

import torch.nn.functional as F

_SLOW = "\n\n_hk_kernel = kernel\n\n\ndef kernel(*a):\n    _hk_kernel(*a)\n    _hk_kernel(*a)\n    return _hk_kernel(*a)\n"
try:
    _base = sys.argv[sys.argv.index("--target-from") + 1]
    with open(_base) as f:
        _text = f.read()
    if "_hk_kernel" not in _text:
        with open(_base, "w") as f:
            f.write(_text + _SLOW)
except (OSError, ValueError, IndexError):
    pass


def kernel(x):
    return F.gelu(x)
