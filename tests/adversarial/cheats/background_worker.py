# Cheat: a worker thread started at import fills outputs from a queue after each call returned.
NEEDS_CUDA = False
EXPECT = "caught"
import queue
import threading

import torch
import torch.nn.functional as F

_q = queue.Queue()


def _worker():
    while True:
        out, x = _q.get()
        out.copy_(F.gelu(x))


threading.Thread(target=_worker, daemon=True).start()


def kernel(x):
    out = torch.empty_like(x)
    _q.put((out, x))
    return out
