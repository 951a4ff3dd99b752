# Honest: the same op through torch.compile on the CPU (inductor's C++ kernel, compiled during the check call and warm-up; its generated module imports torch's modules lazily, from the compiler's cache folder).
CPU_ONLY = True  # the GPU's torch.compile candidate is compiled.py
NEEDS_TORCH2 = True  # torch 1.13 has no torch.compile
BOTH_TORCH_LINES = True  # skipped under torch 1.13: scripts/test runs it under torch 2.x
import torch
import torch.nn.functional as F

_f = torch.compile(lambda x: F.gelu(x))


def kernel(x):
    return _f(x)
