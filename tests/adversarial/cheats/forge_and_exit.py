# Cheat: take the nonce and the private result fd from the runner's frames, let the measurement
# run, then write the result itself (every time 2.5x shorter) with the nonce and leave with
# os._exit before the harness writes: the channel holds one message, with the right nonce.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "defeated"  # the nonce and the fd are in no frame the candidate can walk (the audit hook holds them)
import json
import os
import sys

import torch.nn.functional as F

_trun = _secret = _fd = None
_f = sys._getframe()
while _f is not None:
    _loc = _f.f_locals
    for _v in list(_loc.values()):
        if hasattr(_v, "measure") and hasattr(_v, "session"):
            _trun = _v
    if isinstance(_loc.get("secret"), dict) and "nonce" in _loc["secret"]:
        _secret = _loc["secret"]
    if isinstance(_loc.get("result_fd"), int):
        _fd = _loc["result_fd"]
    _f = _f.f_back

if _trun is not None and _secret is not None and _fd is not None:
    _measure = _trun.measure

    def _forged(*a, **k):
        res = _measure(*a, **k)
        if res.get("status") == "ok":
            res["ms"] = res["ms"] / 2.5
            res["samples_ms"] = [x / 2.5 for x in res["samples_ms"]]
        res.update({"trusted": True, "check_seed": "hidden", "harness_protocol": 1, "nonce": _secret["nonce"],
                    "checked": res.get("checked", []) + ["every_timed_call", "fresh_values_per_sample",
                                                         "inputs_unchanged"]})
        os.write(_fd, (json.dumps(res) + "\n").encode())
        os._exit(0)

    _trun.measure = _forged


def kernel(x):
    return F.gelu(x)
