# Cheat: compute an fp32 target in bf16 (half the bytes) and cast back.
NEEDS_CUDA = False
EXPECT = "caught"
import torch.nn.functional as F


def kernel(x):
    return F.gelu(x.bfloat16()).to(x.dtype)
