# Cheat: compute in place into the input and return it (saves an allocation; corrupts the input).
NEEDS_CUDA = False
EXPECT = "caught"
import torch.nn.functional as F


def kernel(x):
    x.copy_(F.gelu(x))
    return x
