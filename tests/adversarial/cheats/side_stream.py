# Cheat: run the work on a side stream that the timing events (on the current stream) do not wait for.
NEEDS_CUDA = True
EXPECT = "caught"
import torch
import torch.nn.functional as F

_side = None


def kernel(x):
    global _side
    if _side is None:
        _side = torch.cuda.Stream()
    with torch.cuda.stream(_side):
        y = F.gelu(x)
    return y
