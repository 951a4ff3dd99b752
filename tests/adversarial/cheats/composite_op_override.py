# Cheat (a red team's): a CPU kernel registered (torch.library) on aten::to.dtype, an operator composed of others, taken apart at autograd's keys before the harness's operator recorder saw it, so its table was never compared. Every fp32->fp64 conversion is honest, but overwrites the previous one's result with its own, so the check's fp64 copy of the output takes the reference's values. The kernel returns relu: wrong, and cheap.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import weakref

import torch

_lib = torch.library.Library("aten", "IMPL")
_copy = torch.ops.aten._to_copy.default
_prev = [None]


def _to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    if not isinstance(self, torch.Tensor):  # a wrapped number arrives unboxed
        return torch.tensor(self, dtype=dtype)
    if dtype == self.dtype and not copy and memory_format in (None, torch.preserve_format):
        return self
    res = _copy(self, dtype=dtype, non_blocking=non_blocking, memory_format=memory_format)
    if dtype == torch.float64 and self.dtype == torch.float32 and self.dim() == 2 and self.shape[0] == 128:
        p = _prev[0]() if _prev[0] is not None else None
        if p is not None and p.shape == res.shape:
            p.copy_(res)
        _prev[0] = weakref.ref(res)
    return res


_lib.impl("to.dtype", _to_dtype, "CPU")


def kernel(x):
    return torch.relu(x)  # wrong (relu, not gelu), and under the 10x flag
