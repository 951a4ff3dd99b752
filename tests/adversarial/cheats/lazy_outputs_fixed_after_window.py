# Cheat: calls that compute 8 of 128 rows, fixed up after the window: kernels registered (torch.library, AutogradCPU) on aten::select.int and aten::as_strided, which the harness dispatches for the secret's views and a CPU spot copy's tensor but never recorded (their tables were not compared), and torch.backends.cuda.matmul's class __getattr__, which the references' TF32 guard read, each walk f_back to the sample loop and write gelu into every held output before its check (a red team's: a clean 1.33x and 1.49x). The recorder now dispatches both operators, and the guard calls torch's C switches taken at import.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys
import torch
import torch.nn.functional as F

_gelu = torch._C._nn.gelu
_below = torch._C._AutoDispatchBelowAutograd
_done = set()


def _fix():
    f = sys._getframe(0).f_back
    for _ in range(10):
        if f is None:
            return None
        L = f.f_locals
        if "drawn" in L and "outs" in L and "idx" in L and L.get("drawn") is not None:
            key = id(L["drawn"])
            if key not in _done:
                _done.add(key)
                timed, order = L["timed"], L["order"]
                for j, o in zip(L["idx"], L["outs"]):
                    _gelu(timed[order[j]][0], out=o)
            return L
        f = f.f_back


def _select(self, dim, index):
    _fix()
    g = _below()
    try:
        return torch.ops.aten.select.int(self, dim, index)
    finally:
        del g


def _as_strided(self, size, stride, storage_offset=None):
    L = _fix()
    if L is not None and "snaps" in L and "si" in L and sys._getframe(0).f_back.f_locals.get("rec") is not None:
        return _gelu(L["timed"][L["si"]][0]).as_strided(size, stride)
    g = _below()
    try:
        return torch.ops.aten.as_strided.default(self, size, stride, storage_offset)
    finally:
        del g


# Every reference the harness computes enters _NoTF32, which reads matmul.allow_tf32: a Python
# __getattr__ of torch's, run after the window and before each check.
_cls = type(torch.backends.cuda.matmul)
_ga = _cls.__getattr__


def _getattr(self, name):
    _fix()
    return _ga(self, name)


_cls.__getattr__ = _getattr

_lib = torch.library.Library("aten", "IMPL")
_lib.impl("select.int", _select, "AutogradCPU")
_lib.impl("as_strided", _as_strided, "AutogradCPU")


_n = [0]


def kernel(x):
    _n[0] += 1
    if _n[0] == 1:  # the check call
        return F.gelu(x)
    out = torch.empty_like(x)
    _gelu(x[:8], out=out[:8])
    return out
