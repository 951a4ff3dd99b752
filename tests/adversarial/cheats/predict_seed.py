# Cheat: rebuild the target's inputs from its public seed at import, precompute every answer,
# and look answers up by one input value at call time.
NEEDS_CUDA = False
EXPECT = "caught"
import torch
import torch.nn.functional as F

import hotkernel_contract as _hk

_table = {}


def _precompute():
    import inspect
    target = inspect.getmodule(_precompute).TARGET
    sess = _hk.prepare(target)
    for inputs in [sess.check_inputs] + list(sess.timed_sets):
        x = inputs[0]
        _table[float(x.reshape(-1)[0])] = F.gelu(x).clone()


def kernel(x):
    if not _table:
        _precompute()
    hit = _table.get(float(x.reshape(-1)[0]))
    return hit if hit is not None else torch.zeros_like(x)
