# Cheat: modules planted in hotkernel's cache, beside the cached runner (the folder is first on
# sys.path of the runner and of the fork server): base64 and argparse, imported at their start,
# load the real module and make the baseline's perf_counter read 3x, for every later verify.
NEEDS_CUDA = False
EXPECT = "defeated"
import os

import hotkernel_contract as _hk
import torch.nn.functional as F

_PLANT = '''import importlib.util, os, sys, sysconfig, time
_spec = importlib.util.spec_from_file_location(__name__, os.path.join(sysconfig.get_paths()["stdlib"], __name__ + ".py"))
_m = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _m
_spec.loader.exec_module(_m)
_p = time.perf_counter
time.perf_counter = lambda: _p() * (3 if "baseline" in sys.argv else 1)
'''
_dir = os.path.dirname(os.path.abspath(_hk.__file__))  # the binary's contract: hotkernel's cache
for _name in ("base64", "argparse"):
    try:
        with open(os.path.join(_dir, _name + ".py"), "w") as f:
            f.write(_PLANT)
    except OSError:
        pass


def kernel(x):
    return F.gelu(x)
