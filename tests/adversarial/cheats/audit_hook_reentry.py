# Cheat: run code inside the harness's own audit hook, where every audit event is ignored (the hook's own work raises events): compile() with a file name of a str subclass whose startswith() is the candidate's, which the hook called to ask whether the name is a library's. From there it walks up into the hook's and the harness's frames, reading their locals (the hook's closure holds the nonce and the result channel), and nothing is seen: a clean run. The hook now reads only exact types of what an event carries, and a file name, source or buffer of another type is forged code: invalid.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch
import torch.nn.functional as F

_seen = []


class _Name(str):
    def startswith(self, *a, **k):
        f = sys._getframe(1)
        while f is not None:
            if "send" in f.f_locals or "st" in f.f_locals:
                _seen.append(sorted(f.f_locals)[:8])  # the hook's closure: its nonce, its channel
            f = f.f_back
        return False


compile("1", _Name("nothing.py"), "exec")


def kernel(x):
    return F.gelu(x)
