# Cheat: replace random.Random.sample at import. The harness picked the sets a sample's secret goes into with its own random.Random after the sample's fresh values were written and before the release, so the replacement ran in the harness's thread outside the window, computed every input's gelu there, and each call returned it (a set the mix touched had element 0 redone): a clean 4.5-7.1x on the CPU under both torch lines. The harness now draws every choice after the import from os.urandom, and calls no method of the random module.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "defeated"  # the replacement never runs: the calls compute gelu, no faster than the baseline
import math
import random

import torch
import torch.nn.functional as F

_orig_sample = random.Random.sample
_st = {"inputs": {}, "pool": {}}
REPEATS = 8


def _sample(self, population, k, *a, **kw):
    res = _orig_sample(self, population, k, *a, **kw)
    try:
        pool = {}
        with torch.no_grad():
            for key, x in list(_st["inputs"].items()):
                y = F.gelu(x)
                pool[key] = (x._version, [y] + [y.clone() for _ in range(REPEATS - 1)])
        _st["pool"] = pool
    except Exception:
        _st["pool"] = {}
    return res


random.Random.sample = _sample


def kernel(x):
    key = id(x)
    ent = _st["pool"].get(key)
    if ent is not None and ent[1]:
        v0, outs = ent
        dv = x._version - v0
        if dv == 0:
            return outs.pop()
        if dv == 2:
            out = outs.pop()
            v = float(x.view(-1)[0])
            out.view(-1)[0] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
            return out
    if key not in _st["inputs"] and len(_st["inputs"]) < 256:
        _st["inputs"][key] = x
    return F.gelu(x)
