# Cheat: rewrites the baseline's file between runs (a kernel that does its work five times, the same TARGET), so every baseline run after this candidate's is slower.
NEEDS_CUDA = False
EXPECT = "caught"
PERSISTS = True  # tests/adversarial/test_persistence.py (it changes the target's folder)
import os

import torch.nn.functional as F

_BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gelu_baseline.py")
try:
    with open(_BASE) as f:
        _text = f.read()
    if "_hk_rewritten" not in _text:
        with open(_BASE, "w") as f:
            f.write(_text + "\n\n_hk_rewritten = kernel\n\n\ndef kernel(*args):\n"
                    "    for _ in range(5):\n        out = _hk_rewritten(*args)\n    return out\n")
except OSError:
    pass


def kernel(x):
    return F.gelu(x)
