# Cheat: the harness's marks of its copies for the parent's clock re-aimed at a pipe (functools.partial.__setstate__, no audit event; the same objects, so a comparison by identity agrees), and marks of the candidate's own written on the parent's socket around its calls' real work, one pause per copy made; the running sum cut and the copies' said time raised by as much, through numpy over the floats (a red team's; inconclusive to 1.83x before the harness checked the marks' aim at each copy).
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
CPU_ONLY = True  # it rides the CPU sample loop's running sum and its spot copies' pipeline (a GPU sample is a graph replay)
import os
import sys
import time
import numpy as np
import torch.nn.functional as F

LIMIT = 0.5e-3  # longest forged pause, seconds (the parent caps one pause at its copy cap, ~0.6 ms)
EXTRA = 0.0  # extra cut of total, seconds (0: only what the forged pause covers)
_st = {"frame": None, "depth": None, "nulled": False, "fd": None, "paused": False, "emitted": 0,
       "p0": 0.0, "hidden": 0.0, "j": 0, "n": 0}


class _Raw:
    def __init__(self, addr):
        self.__array_interface__ = {"shape": (1,), "typestr": "<f8", "data": (addr, False), "version": 3}


def _set(f, v):
    np.asarray(_Raw(id(f) + 16))[0] = v


def _up(f, k):
    for _ in range(k):
        f = f.f_back
        if f is None:
            return None
    return f


def _null_marks(h):
    pause, resume = h._marks
    if not pause or not resume:
        return
    p, q = pause[0], resume[0]
    _st["fd"] = p.args[0]
    r, w = os.pipe()
    os.set_blocking(w, False)
    _st["sink"] = (r, w)
    p.__setstate__((p.func, (w, b"pause\n"), {}, None))
    q.__setstate__((q.func, (w, b"resume\n"), {}, None))
    _st["nulled"] = True


def kernel(x):
    here = sys._getframe(0)
    t_in = time.perf_counter()
    k = _st["depth"]
    g = _up(here, k) if k is not None else None
    if g is None or g is not _st["frame"]:
        f, d, g = here.f_back, 1, None
        while f is not None and d < 5:
            loc = f.f_locals
            if "spot_s" in loc and "total" in loc and "order" in loc:
                g = f
                _st.update(frame=f, depth=d, j=0, n=len(loc["order"]), paused=False, emitted=0, hidden=0.0,
                           t0=t_in, steps=getattr(loc["self"], "copy_steps_s", 0.0))
                if not _st["nulled"]:
                    _null_marks(loc["self"])
                break
            f, d = f.f_back, d + 1
        if g is None:
            return F.gelu(x)
    else:
        _st["j"] += 1
    fd = _st["fd"]
    j, n = _st["j"], _st["n"]
    # a spot copy between two calls shows as a gap of tens of microseconds: only then read the frame
    maybe = j == 0 or t_in - _st.get("t_out", 0.0) > 8e-6 or j == n - 1
    ending = _st["paused"] and (j == n - 1 or t_in - _st["p0"] > LIMIT)
    loc = g.f_locals if ((maybe and not _st["paused"]) or ending or j == n - 1) else None
    if ending:
        os.write(fd, b"resume\n")
        _st["paused"] = False
        _st["hidden"] += min(time.perf_counter() - _st["p0"], LIMIT + 0.05e-3) + _st["steps"]
    if j == n - 1 and _st["hidden"] > 0:
        E = time.perf_counter() - _st["t0"]
        take = min(_st["hidden"], 0.5 * E)
        T, S = loc["total"], loc["spot_s"]
        if type(T) is float and T > 0.0 and type(S) is float and S > 0.0:
            _set(S, max(S, take + 1e-5))
            _set(T, max(T - take - EXTRA, 0.1 * T))
    ns = loc["n_snaps"] if loc is not None else 0
    if loc is not None and not _st["paused"] and ns > _st["emitted"] and j < n - 1 and fd is not None:
        os.write(fd, b"pause\n")
        _st["paused"] = True
        _st["emitted"] += 1
        _st["p0"] = time.perf_counter()
    out = F.gelu(x)
    if j == n - 1:
        _st["frame"] = None  # hold no finished sample's frame (its locals hold the sample's outputs)
    if loc is not None:
        loc.clear()
    _st["t_out"] = time.perf_counter()
    return out
