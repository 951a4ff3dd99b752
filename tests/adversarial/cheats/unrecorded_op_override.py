# Cheat: replace, through torch.library at import, an operator only the harness's checks use (aten::div_.Tensor, the error's |out - ref| / allowance) with one that zeroes its input: every check then reads no error, and a kernel computing 2 of 128 rows passes (under the 10x flag).
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # the dispatch tables of every operator the harness's own steps use are checked every sample
import torch
import torch.nn.functional as F

_lib = torch.library.Library("aten", "IMPL")
_lib.impl("div_.Tensor", lambda self, other: self.zero_(), "CPU")


def kernel(x):
    y = torch.empty_like(x)
    n = x.shape[0] // 64
    y[:n] = F.gelu(x[:n])
    return y
