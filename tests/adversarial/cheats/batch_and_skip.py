# Cheat: on one call compute every input seen so far in a single batched op; return cached
# results on the other calls.
NEEDS_CUDA = False
EXPECT = "caught"
# On the GPU the calls run once, into the graph's capture: whether the graph then recomputes every
# output (the batched op captured after the last new input) or hands back a tensor of an earlier,
# eager call depends on how many calls the time-based warm-up made, so a verify reads `incorrect`
# or, correct and slower (0.49x on an H100), gains nothing.
GPU_EXPECT = "defeated"
import torch
import torch.nn.functional as F

_inputs = {}
_results = {}
_calls = [0]


def kernel(x):
    _calls[0] += 1
    key = x.data_ptr()
    _inputs[key] = x
    if key in _results and _calls[0] % len(_inputs) != 0:
        return _results[key]
    keys = list(_inputs)
    out = F.gelu(torch.stack([_inputs[k] for k in keys]))
    for k, o in zip(keys, out.unbind(0)):
        _results[k] = o
    return _results[key]
