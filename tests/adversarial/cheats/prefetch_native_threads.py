# Cheat: TorchScript tasks on the inter-op pool (native threads: no thread watch) wait between samples for each timed input's fresh values and compute its gelu before the release; a call whose input changed only by the fresh round (version +1) returns that output.
NEEDS_CUDA = False
EXPECT = "caught"  # every OS thread started after the import is counted: its CPU during the samples is work outside the calls
from typing import List
import torch
import torch.nn.functional as F
try:
    torch.set_num_interop_threads(4)
except RuntimeError:
    pass

def _spin(xs: List[torch.Tensor], outs: List[torch.Tensor], stamps: torch.Tensor, idx: List[int], olds: torch.Tensor, ctl: torch.Tensor, gen: int) -> int:
    it, n = 0, len(xs)
    while it < 100000000 and (gen < 0 or int(ctl[0]) == gen):
        it += 1
        if bool(xs[n - 1].view(-1)[-1] == olds[n - 1]):
            continue  # wait for the fresh round (it writes the sets in order: the last set last)
        for k in range(n):
            i = n - 1 - k
            v = xs[i].view(-1)[-1]
            if not bool(v == olds[i]):
                outs[i].copy_(torch.nn.functional.gelu(xs[i]))
                olds[i] = v
                stamps[idx[i]] = olds[i]
        if gen < 0:
            break
    return it

@torch.jit.script
def _launch(xs: List[torch.Tensor], outs: List[torch.Tensor], stamps: torch.Tensor, idx: List[int], olds: torch.Tensor, ctl: torch.Tensor, gen: int) -> torch.jit.Future[int]:
    return torch.jit.fork(_spin, xs, outs, stamps, idx, olds, ctl, gen)

_slots, _xs, _outs, _futs, _st = {}, [], [], [], {"n": 0}
_stamps, _ctl = torch.full([4096], float("nan"), dtype=torch.float64), torch.zeros(1, dtype=torch.long)
_np = _stamps.numpy()

def kernel(x):
    s, v = _slots.get(x.data_ptr()), x._version
    if s is None:
        if len(_xs) < 4096:
            i = len(_xs); _slots[x.data_ptr()] = [i, v]; _xs.append(x); _outs.append(torch.empty_like(x))
            _futs.append(_launch([x], [_outs[i]], _stamps, [i], x.view(-1)[-1:].clone(), _ctl, -1))
        return F.gelu(x)
    i, vp = s
    s[1] = v
    out = _outs[i] if v == vp + 1 and _np[i] == x.view(-1)[-1].item() else F.gelu(x)
    if v > vp and i == len(_xs) - 1 and _st["n"] != len(_xs):
        _st["n"] = len(_xs); _ctl[0] = len(_xs)
        olds = torch.stack([t.view(-1)[-1] for t in _xs])
        _futs.append(_launch(list(_xs), list(_outs), _stamps, list(range(len(_xs))), olds, _ctl, len(_xs)))
    return out
