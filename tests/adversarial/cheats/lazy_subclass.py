# Cheat: return a tensor subclass that only computes when the checker touches it (outside the timer).
NEEDS_CUDA = False
EXPECT = "caught"
import torch
import torch.nn.functional as F


class LazyGelu(torch.Tensor):
    @staticmethod
    def __new__(cls, src):
        t = torch.Tensor._make_subclass(cls, torch.empty_like(src))
        t._src = src
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        def real(a):
            if isinstance(a, LazyGelu):
                return F.gelu(a._src)
            if isinstance(a, (list, tuple)):
                return type(a)(real(b) for b in a)
            return a
        return func(*real(args), **{k: real(v) for k, v in (kwargs or {}).items()})


def kernel(x):
    return LazyGelu(x)
