# Cheat (a red team's): a key of a str subclass put in each timed input's own __dict__; looking it up (the harness's check for attributes that shadow torch.Tensor's, run on the inputs after the sample's window and before its checks) hashed it, and its __hash__ walked f_back to the sample loop and filled every held output and the spot copies' bytes there. The timed calls return unwritten outputs.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys, warnings
import torch
import torch.nn.functional as F

_g = torch._C._nn.gelu
_done = {"outs": None}


def _fill():
    f = sys._getframe(0).f_back
    seen_done = False
    for _ in range(12):
        if f is None:
            return
        l = f.f_locals
        if "copy_s" in l and "c0" in l:
            seen_done = True
        if "timed" in l and "order" in l and "snaps" in l:
            break
        f = f.f_back
    else:
        return
    if not seen_done:
        return
    loc = f.f_locals
    outs = loc.get("outs")
    if outs is None or _done["outs"] is outs:
        return
    _done["outs"] = outs
    timed, order, idx, snaps = loc["timed"], loc["order"], loc["idx"], loc["snaps"]
    for j, o in zip(idx, outs):
        _g(timed[order[j]][0], out=o)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for j, si, snap, d, made in snaps:
            if made:
                torch.frombuffer(snap[0], dtype=torch.float32).copy_(_g(timed[si][0]).reshape(-1))


class K(str):
    def __hash__(self):
        try:
            _fill()
        except Exception:
            pass
        return 770077


def kernel(x):
    d = x.__dict__
    if not d:
        d[K("zq_note")] = 1
    if "timed" in sys._getframe(0).f_back.f_locals:
        return torch.empty_like(x)
    return F.gelu(x)
