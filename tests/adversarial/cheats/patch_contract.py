# Cheat: replace the contract's check (and its code object) so any output passes, then return zeros.
NEEDS_CUDA = False
EXPECT = "caught"
import torch

import hotkernel_contract as _hk


def _always_ok(*a, **k):
    return {"ok": True, "reason": None, "max_abs": 0.0, "rel": 0.0, "atol": 0.0, "rtol": 0.0, "scale": 1.0,
            "tol_used": 0.0}


_hk.check.__code__ = _always_ok.__code__
_hk.check = _always_ok


def kernel(x):
    return torch.zeros_like(x)
