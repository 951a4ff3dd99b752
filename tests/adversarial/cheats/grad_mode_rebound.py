# Cheat: torch._C._set_grad_enabled rebound at import; torch.no_grad()'s __exit__ (torch's Python) looks it up at every call, and the harness wrote each sample's fresh values inside `with torch.no_grad()`, so the wrapper ran in the harness's thread after the fresh values and before the release: it computed every timed call's output there, outside the window, and each timed call redid only the element the release's secret goes into (a red team's: a clean 7.0-7.7x on torch 1.13, 2.7x on torch 2.x). The harness now switches autograd with torch's C functions taken at import, and every callable of torch's modules on its path is compared by identity at every sample.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch
import torch.nn.functional as F

_seen = {}  # id(x) -> [x, its version when seen, its output computed ahead or None]
_orig = torch._C._set_grad_enabled


def _hooked(mode):
    _orig(mode)
    ents = list(_seen.values())
    if len(ents) > 8 and sum(e[0]._version != e[1] for e in ents) * 2 > len(ents):  # fresh values just written
        for e in ents:
            e[2] = F.gelu(e[0])
            e[1] = e[0]._version


torch._C._set_grad_enabled = _hooked


def kernel(x):
    e = _seen.get(id(x))
    if e is None:
        _seen[id(x)] = [x, x._version, None]
        return F.gelu(x)
    o = e[2]
    if o is None or x._version - e[1] > 2:
        return F.gelu(x)
    e[2] = None
    o.view(-1)[:1] = F.gelu(x.view(-1)[:1])  # the release's secret goes into element 0 only
    return o
