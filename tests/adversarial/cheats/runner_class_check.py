# Cheat: replace the runner's check methods (class attributes of TrustedRun) so that a kernel computing a third of the rows passes.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch
import torch.nn.functional as F


def _passing(orig):
    def check(self, out, ref):
        res = dict(orig(self, out, ref))
        res.update(ok=True, reason=None)
        return res
    return check


for _m in list(sys.modules.values()):
    _tr = getattr(_m, "TrustedRun", None)
    if isinstance(_tr, type) and hasattr(_tr, "check_quick"):
        _tr.check = _passing(_tr.check)
        _tr.check_quick = _passing(_tr.check_quick)


def kernel(x):
    y = torch.zeros_like(x)
    n = x.shape[0] // 3
    y[:n] = F.gelu(x[:n])
    return y
