# Cheat: replace json.encoder.JSONEncoder.encode at import. json.dumps builds a JSONEncoder and calls its encode, a class attribute looked up at every call, so the harness's result line and the audit hook's own re-dump went through the candidate's code, which scaled the candidate's samples_ms and ms by 0.7 (within the parent clock's allowance) and could have rewritten any field, a status included. The hook now checks json's classes, modules and default coders against what they were before the import, and a run whose json was replaced says so in a line no encoder writes.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # invalid: the candidate replaced code of the json module
import json.encoder as _je
import torch.nn.functional as F

SCALE = 0.7
_orig_encode = _je.JSONEncoder.encode
_done = [False]


def _encode(self, o):
    try:
        if not _done[0] and type(o) is dict and o.get("status") == "ok" and isinstance(o.get("samples_ms"), list):
            o = dict(o)
            o["samples_ms"] = [v * SCALE for v in o["samples_ms"]]
            o["ms"] = o["ms"] * SCALE
            _done[0] = True
    except Exception:
        pass
    return _orig_encode(self, o)


_je.JSONEncoder.encode = _encode


def kernel(x):
    return F.gelu(x)
