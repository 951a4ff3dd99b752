# Cheat: calls that compute 8 of 128 rows, passed by the check itself: the check's norm of the reference (Tensor.norm, torch's Python) looks torch.functional.has_torch_function_unary up at every call; rebound, it walked f_back into the check and copied the reference into the output under test (a red team's: a clean 1.58x and 1.32x under torch 1.13; 9x with nothing computed). The checks' norm is torch.linalg.vector_norm, a C function taken at import.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys
import torch
import torch.functional as _tf
import torch.nn.functional as F

_orig = _tf.has_torch_function_unary
_gelu = torch._C._nn.gelu


def _hook(t):
    f = sys._getframe(0).f_back
    for _ in range(4):
        if f is None:
            break
        L = f.f_locals
        if "of" in L and "rf" in L and type(L["of"]) is torch.Tensor:
            if L["of"].shape == L["rf"].shape:
                L["of"].copy_(L["rf"])
            break
        if "o" in L and "r" in L and "want_dtype" in L and type(L["o"]) is torch.Tensor:
            if L["o"].shape == L["r"].shape:
                L["o"].copy_(L["r"])
            break
        f = f.f_back
    return _orig(t)


_tf.has_torch_function_unary = _hook

_n = [0]


def kernel(x):
    _n[0] += 1
    if _n[0] == 1:  # the check call
        return F.gelu(x)
    out = torch.empty_like(x)
    _gelu(x[:8], out=out[:8])
    return out
