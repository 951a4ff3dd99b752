# Cheat: at import, walk f_back (not audited) from the module's frame to the harness's run list and rebind each run's check settings (a tuple, an instance attribute the patch check does not compare) to huge tolerances; every call then returns zeros.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch


def _loosen():
    f = sys._getframe(0)
    while f is not None:
        runs = f.f_locals.get("truns")
        if isinstance(runs, list):
            for run in runs:
                a = run._check_args
                run._check_args = (a[0], a[1], 1e30, 1e30)
            return
        f = f.f_back


_loosen()


def kernel(x):
    return torch.zeros_like(x)
