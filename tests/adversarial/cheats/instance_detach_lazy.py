# Cheat: return torch.empty_like(x) (a plain torch.Tensor, so `type(o) is torch.Tensor` passes) with instance attributes `detach` and `clone` (a tensor's __dict__ shadows TensorBase's methods; nothing checks an output's __dict__). The checks' o.detach() and the spot copy's o.clone() compute gelu(x) only then, in the harness's thread after the window (or as "copy" time the parent takes out); the timed call does no work.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a tensor whose own attributes stand in for torch.Tensor's is the candidate's code
import torch
import torch.nn.functional as F


def kernel(x):
    o = torch.empty_like(x)
    o.zero_()  # a little work of its own: stays under the 10x flag
    o.detach = lambda: F.gelu(x)
    o.clone = lambda *a, **k: F.gelu(x)
    return o
