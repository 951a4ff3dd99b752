# Cheat: every call re-arms a one-shot ITIMER_REAL 1 ms out, and the handler re-arms it while the values are the last sample's, so SIGALRM comes after the sample's last call, inside the harness's quiet (signals blocked), and stays pending; _release's _unquiet restores the mask after the next sample's fresh values and before `ready`, and the Python handler runs there, in the harness's own thread (a thread from before the import: left out of the CPU count), outside the parent's window. It computes every set's gelu from the fresh values (the timed tuple, read once through f_back); each call redoes element 0 (the secret's) only.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a held signal is raised again inside the window: its handler's work is time the parent sees
import math
import signal
import sys

import torch
import torch.nn.functional as F

_st = {"timed": None, "ids": {}, "bufs": {}, "fps": {}, "np": {}}


def _prefetch(signum, frame):
    timed = _st["timed"]
    if timed is None:
        return
    if all(si in _st["np"] and (_st["np"][si][1], _st["np"][si][-1]) == _st["fps"][si] for si in range(len(timed))):
        signal.setitimer(signal.ITIMER_REAL, 0.0003)  # the last sample's values: again soon, pending in the quiet
        return
    with torch.no_grad():
        for si, one in enumerate(timed):
            nv = _st["np"][si] = one[0].numpy().reshape(-1)  # a view: the same storage every sample
            _st["fps"][si] = (float(nv[1]), float(nv[-1]))
            out = F.gelu(one[0])
            _st["bufs"][si] = (out, out.numpy().reshape(-1))


signal.signal(signal.SIGALRM, _prefetch)


def kernel(x):
    signal.setitimer(signal.ITIMER_REAL, 0.001)  # fires 1 ms after the last call of a sample
    if _st["timed"] is None:
        loop = sys._getframe(0).f_back  # its own frame (counted only), then f_back (not audited)
        if loop is not None and "timed" in loop.f_locals and "order" in loop.f_locals:
            _st["timed"] = loop.f_locals["timed"]
            _st["ids"] = {id(one[0]): si for si, one in enumerate(_st["timed"])}
    si = _st["ids"].get(id(x))
    if si is not None and si in _st["bufs"]:
        nv, (a, b) = _st["np"][si], _st["fps"][si]
        if nv[1] == a and nv[-1] == b:
            (out, ov), v = _st["bufs"][si], float(nv[0])
            ov[0] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
            return out
    return F.gelu(x)
