# Cheat (a red team's): reach the harness's sample loop through the kernel's own frame's f_back (its own frame from sys._getframe: no alarm; f_back and f_locals are not audited), return unwritten outputs from the timed calls, and plant an int subclass in the loop's list of held calls' indices: its __eq__ ran when the harness compared that list, after the window and before every check, and filled the held outputs and the spot copies' bytes (torch.frombuffer aliases them) with gelu there.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys
import warnings
import torch
import torch.nn.functional as F

_g = torch._C._nn.gelu
_ver = {}
_st = {"idx": None}


class J(int):
    __hash__ = int.__hash__

    def __eq__(self, other):
        try:
            f = sys._getframe(0).f_back
            loc = f.f_locals
            timed, order, outs, idx, snaps = loc["timed"], loc["order"], loc["outs"], loc["idx"], loc["snaps"]
            for j, o in zip(idx, outs):
                _g(timed[order[int(j)]][0], out=o)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for j, si, snap, d, made in snaps:
                    if made:
                        torch.frombuffer(snap[0], dtype=torch.float32).copy_(_g(timed[si][0]).reshape(-1))
        except Exception:
            pass
        return int.__eq__(int(self), other)


def kernel(x):
    if _ver.get(id(x)) == x._version:
        idx = _st["idx"]
        if idx is not None and idx:
            if type(idx[0]) is int:
                idx[0] = J(idx[0])
            _st["idx"] = None
        return torch.empty_like(x)
    here = sys._getframe(0).f_back
    loc = here.f_locals
    timed = loc.get("timed")
    if timed is None or "outs" not in loc or "idx" not in loc:
        return F.gelu(x)
    _ver.clear()
    for t in timed:
        _ver[id(t[0])] = t[0]._version
    _st["idx"] = loc["idx"]
    return torch.empty_like(x)
