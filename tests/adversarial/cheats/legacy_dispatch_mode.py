# Cheat: a dispatch mode outside the mode stack -- torch 1.13's single legacy slot (torch._C._set_torch_dispatch_mode), or torch 2.x's infra-mode slot (_set_dispatch_mode) -- set at import, turning every in-place division by a tensor (the checks' |out - ref| / allowance) into zeros, so an output never computed passes every check. The stack's length does not count 1.13's slot.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a mode anywhere routes the thread's operators to Python: the Python key in its TLS (_active_modes)
import torch

_div = torch.ops.aten.div_.Tensor


class _Pass:
    _mode_key = getattr(getattr(torch._C, "_TorchDispatchModeKey", None), "FUNCTIONAL", None)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is _div:
            return args[0].zero_()
        return func(*args, **(kwargs or {}))


if hasattr(torch._C, "_set_torch_dispatch_mode"):
    torch._C._set_torch_dispatch_mode(_Pass())
else:
    torch._C._set_dispatch_mode(_Pass())


def kernel(x):
    return torch.empty_like(x)
