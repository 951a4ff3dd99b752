# Cheat: builtins.zip rebound at import; the harness's fresh_round zipped the timed inputs with the sample's fresh values (a list, before they were copied in), so the hook was handed every sample's inputs in the harness's thread before the release, computed every output there, and each timed call redid only the element the release's secret goes into; the hook put zip back after the last sample, before the result's comparison (a red team's: a clean 6.1-7.2x on torch 1.13, 2.3x on torch 2.x). Each harness module now runs with its own copy of the builtins, taken at its import, and those copies and the shared builtins module's callables are compared by identity after every sample.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import builtins
import torch.nn.functional as F

_zip = builtins.zip
_pre = {}  # id(input) -> [input, its version once the fresh values are in, output computed ahead]
_hits = [0]


def _zip_hook(*a):
    # fresh_round: zip(s.timed_sets, sets), sets a list of the fresh values not yet copied in
    if len(a) == 2 and type(a[1]) is list and type(a[0]) is tuple and a[0] and type(a[0][0]) is tuple:
        for dst, src in _zip(*a):
            for d, x in _zip(dst, src):
                _pre[id(d)] = [d, d._version + 1, F.gelu(x)]
        _hits[0] += 1
        if _hits[0] > 3:  # the warm-up's round and the adversarial target's 3 samples: put zip back
            builtins.zip = _zip
    return _zip(*a)


builtins.zip = _zip_hook


def kernel(x):
    e = _pre.get(id(x))
    if e is None or e[2] is None or e[0] is not x or x._version - e[1] > 2:
        return F.gelu(x)
    o, e[2] = e[2], None
    o.view(-1)[:1] = F.gelu(x.view(-1)[:1])  # the release's secret goes into element 0 only
    return o
