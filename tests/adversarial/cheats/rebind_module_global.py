# Cheat: rebind the contract module's global `torch` (a module: neither a function nor a plain value, so the harness's state snapshot did not compare it) to a proxy whose `sub` returns zeros; the checks compute their differences with torch.sub, so every output passed, and the kernel returns its input's copy, not gelu: a clean 1.8-2.1x on the CPU. Every global of the harness's own modules is now compared by identity at every sample.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch
import hotkernel_contract as _hk

_real = _hk.torch


class _Proxy:
    def __getattr__(self, name):
        return getattr(_real, name)

    @staticmethod
    def sub(a, b, *args, **kw):
        return _real.zeros_like(_real.sub(a, b, *args, **kw))


_hk.torch = _Proxy()


def kernel(x):
    return x.clone()
