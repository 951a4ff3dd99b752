# Cheat: each timed call hands its work to TorchScript's inter-op pool (torch.jit.fork from a scripted function: a native thread no Python thread watch sees) and returns an output not yet written; the harness's checks after the sample read the finished work. The check call, the warm-up and the calls the harness's frame says it will copy as they return compute in the call.
NEEDS_CUDA = False
CPU_ONLY = True  # a CPU thread pool; on a GPU the same trick is a side stream (side_stream.py)
BOTH_TORCH_LINES = True
EXPECT = "caught"
import sys

import torch
import torch.nn.functional as F


def _work(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    out.copy_(torch.nn.functional.gelu(x))
    return out


@torch.jit.script
def _launch(x: torch.Tensor, out: torch.Tensor) -> torch.jit.Future[torch.Tensor]:
    return torch.jit.fork(_work, x, out)


_pending = []


def kernel(x):
    loop = sys._getframe(0).f_back.f_locals
    if "order" not in loop:
        return F.gelu(x)  # the check call and the warm-up
    spot = loop.get("spot")  # which calls are copied as soon as they return, where the frame says
    if spot is not None and loop.get("j") in spot:
        return F.gelu(x)
    out = torch.empty_like(x)
    _pending.append(_launch(x, out))
    if len(_pending) > 64:
        del _pending[:32]
    return out
