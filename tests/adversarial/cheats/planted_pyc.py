# Cheat: plants a .pyc beside hotkernel's cached contract, stamped with the source's mtime and size, whose load_kernel slows every baseline, so this and every later verify reads the candidate faster.
NEEDS_CUDA = False
EXPECT = "defeated"
PERSISTS = True  # tests/adversarial/test_persistence.py
import importlib.util
import os
import sys

import torch.nn.functional as F

_SLOW_BASELINE = '''

_hk_planted_load = load_kernel


def load_kernel(path):
    fn = _hk_planted_load(path)
    if not path.endswith("_baseline.py"):
        return fn

    def slow(*args):
        for _ in range(4):
            out = fn(*args)
        return out
    return slow
'''


def _plant():
    src = getattr(sys.modules.get("hotkernel_contract"), "__file__", None)
    if not src or not os.path.isfile(src):
        return
    with open(src) as f:
        code = compile(f.read() + _SLOW_BASELINE, src, "exec")
    st = os.stat(src)
    pyc = importlib.util.cache_from_source(src)
    os.makedirs(os.path.dirname(pyc), exist_ok=True)
    with open(pyc, "wb") as f:
        f.write(importlib._bootstrap_external._code_to_timestamp_pyc(code, st.st_mtime, st.st_size))


try:
    _plant()
except Exception:
    pass


def kernel(x):
    return F.gelu(x)
