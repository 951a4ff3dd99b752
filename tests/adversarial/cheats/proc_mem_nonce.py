# Cheat: read the process's memory through /proc/self/mem (no ctypes call, no frame of the harness's) for the run's nonce, then let the measurement run and write the result itself, every time 2.5x shorter, to every pipe it holds, and leave with os._exit before the harness writes.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import json
import os
import re
import sys

import torch.nn.functional as F


def _nonces():
    """Every 32-hex string after a "nonce" key in this process's writable memory."""
    found = set()
    pat = re.compile(rb'"nonce": ?"([0-9a-f]{32})"')
    try:
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
            for line in maps:
                parts = line.split()
                if len(parts) < 2 or not parts[1].startswith("rw"):
                    continue
                lo, hi = (int(v, 16) for v in parts[0].split("-"))
                if hi - lo > (256 << 20):
                    continue
                try:
                    mem.seek(lo)
                    found.update(m.group(1).decode() for m in pat.finditer(mem.read(hi - lo)))
                except (OSError, ValueError, OverflowError):
                    continue
    except OSError:
        pass
    return found


_trun = None
_f = sys._getframe()
while _f is not None:
    for _v in list(_f.f_locals.values()):
        if hasattr(_v, "measure") and hasattr(_v, "session"):
            _trun = _v
    _f = _f.f_back

_found = _nonces()
if _trun is not None and _found:
    _measure = _trun.measure

    def _forged(*a, **k):
        res = _measure(*a, **k)
        if res.get("status") == "ok":
            res["ms"] = res["ms"] / 2.5
            res["samples_ms"] = [x / 2.5 for x in res["samples_ms"]]
        res.update({"trusted": True, "check_seed": "hidden"})
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink("/proc/self/fd/" + fd).startswith("pipe:") and int(fd) > 2:
                    for nonce in _found:
                        os.write(int(fd), (json.dumps(dict(res, nonce=nonce)) + "\n").encode())
            except OSError:
                pass
        os._exit(0)

    _trun.measure = _forged


def kernel(x):
    return F.gelu(x)
