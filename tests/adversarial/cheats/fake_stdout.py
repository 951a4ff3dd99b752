# Cheat: print a fake result line (tiny ms, ok) to stdout, at import and after every call.
NEEDS_CUDA = False
EXPECT = "defeated"
FAKE_MS = 1e-05
import json
import sys
import time

import torch.nn.functional as F

_line = json.dumps({"protocol": 3, "target": "gelu", "ms": FAKE_MS, "ok": True, "samples_ms": [FAKE_MS] * 3})
print(_line, flush=True)


def kernel(x):
    y = F.gelu(x)
    time.sleep(0.0002)  # genuinely slower: only a fake number could make it look faster
    sys.stdout.write(_line + "\n")
    return y
