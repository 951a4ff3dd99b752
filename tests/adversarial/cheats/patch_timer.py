# Cheat: slow down the clocks the harness reads (perf_counter, CUDA events) and fake the statistics.
NEEDS_CUDA = False
EXPECT = "caught"
import statistics
import time

import torch
import torch.nn.functional as F

_real = time.perf_counter
_t0 = _real()
time.perf_counter = lambda: _t0 + (_real() - _t0) / 100.0
statistics.median = lambda xs: min(xs) / 100.0
if torch.cuda.is_available():
    _elapsed = torch.cuda.Event.elapsed_time
    torch.cuda.Event.elapsed_time = lambda self, end: _elapsed(self, end) / 100.0
    torch.cuda.synchronize = lambda *a, **k: None


def kernel(x):
    return F.gelu(x)
