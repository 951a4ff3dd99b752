# Cheat: return an output at once and let a new thread fill it after the clock has stopped.
NEEDS_CUDA = False
EXPECT = "caught"
import threading

import torch
import torch.nn.functional as F


def kernel(x):
    out = torch.empty_like(x)

    def work():
        out.copy_(F.gelu(x))

    threading.Thread(target=work, daemon=True).start()
    return out
