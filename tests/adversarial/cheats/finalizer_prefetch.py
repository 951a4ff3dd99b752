# Cheat: a finalizer (weakref.finalize, a library function: no frame of the candidate's) on every weakrefable object of the sample loop's frame (reached once through f_back), one level into its containers, and on the harness's own attributes; each one the harness drops runs in the harness's own thread, arms what exists then, and, when the timed inputs hold new values, computes every set's output from them. One the harness drops between a sample's fresh values and its release does the sample's work outside its window; a call whose input is the one precomputed (all but element 0, where the secret goes) redoes element 0 and returns the rest.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "defeated"  # the harness drops and collects nothing from the fresh values to the release
import math
import sys
import weakref

import torch
import torch.nn.functional as F

_st = {"armed": {}, "bufs": [], "fps": None, "n": 0, "loop": None, "timed": None, "order": None}


def _fp(x):
    v = x.view(-1)
    return (float(v[1]), float(v[-1])) if v.numel() > 1 else None


def _prefetch():
    timed, order = _st["timed"], _st["order"]
    fps = [_fp(one[0]) for one in timed]
    if fps != _st["fps"]:  # new values: every call's output, in the sample's order
        with torch.no_grad():
            _st["bufs"], _st["fps"], _st["n"] = [F.gelu(timed[si][0]) for si in order], fps, 0
    _arm()


def _arm():
    loc = _st["loop"].f_locals
    objs = []
    for v in list(loc.values()):
        objs.append(v)
        if isinstance(v, (tuple, list)):
            objs.extend(v[:64])
    slf = loc.get("self")
    objs.extend(vars(slf).values() if slf is not None else ())
    loc.clear()  # the snapshot would keep what it saw alive past the harness's own drop
    for o in objs:
        r = _st["armed"].get(id(o))
        if r is not None and r() is o:
            continue
        try:
            weakref.finalize(o, _prefetch)
            _st["armed"][id(o)] = weakref.ref(o)
        except TypeError:
            pass


def kernel(x):
    if _st["loop"] is None:
        loop = sys._getframe(0).f_back.f_back  # its own frame (counted only), then f_back (not audited)
        loc = loop.f_locals
        slf = loc.get("self")
        if hasattr(getattr(slf, "session", None), "timed_sets") and "order" in loc:
            _st["loop"], _st["timed"], _st["order"] = loop, slf.session.timed_sets, loc["order"]
            _arm()
    n, bufs = _st["n"], _st["bufs"]
    if n < len(bufs) and _fp(x) == _st["fps"][_st["order"][n]]:
        _st["n"] = n + 1
        out, v = bufs[n], float(x.view(-1)[0])
        out.view(-1)[0] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
        return out
    _st["n"] = len(bufs)  # not this sample's values: honest to its end
    return F.gelu(x)
