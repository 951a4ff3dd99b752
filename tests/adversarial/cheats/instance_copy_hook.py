# Cheat: an instance attribute `copy_` on each timed input tensor (tensors have a __dict__, which the state snapshot never looks in; the patch check covers classes only) shadows TensorBase.copy_, so the harness's own fresh_round `d.copy_(x)` calls the candidate in the harness's thread after the fresh values and before the release. It computes every call's output there (outside the window and the thread CPU count); each call only redoes element 0, where the secret goes.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a tensor whose own attributes stand in for torch.Tensor's is the candidate's code
import math

import torch
import torch.nn.functional as F

_st = {"count": {}, "bufs": {}, "seen": set()}


def _hook_for(t):
    def copy_(src, *a, **k):
        r = torch.Tensor.copy_(t, src, *a, **k)
        n = _st["count"].get(id(t), 0)
        with torch.no_grad():
            _st["bufs"][id(t)] = [F.gelu(t) for _ in range(n)]
        return r
    return copy_


def kernel(x):
    key = id(x)
    if key not in _st["seen"]:
        _st["seen"].add(key)
        x.copy_ = _hook_for(x)
    bufs = _st["bufs"].get(key)
    if bufs:
        out = bufs.pop()
        v = float(x.view(-1)[0])  # the only element the release's secret may have changed
        out.view(-1)[0] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
        return out
    _st["count"][key] = _st["count"].get(key, 0) + 1
    return F.gelu(x)
