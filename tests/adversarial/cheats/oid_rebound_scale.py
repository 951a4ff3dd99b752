# Cheat: hotkernel_defences._oid (the identities the per-sample state check compares) rebound to a callable that answers the original's identity for itself, for a wrapper of TrustedRun._time_calls that scales every sample by 0.62, and for the wrapper's code: the check, reading identities through that global, saw nothing (a red team's: a clean 1.41x, within the parent clock's allowance). The audit hook compares every global of the harness's modules and every attribute of their classes by identity against copies in its closure when the result is written.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys
import torch.nn.functional as F

_real = object.__hash__
D = next(m for m in list(sys.modules.values()) if getattr(m, "_oid", None) is _real and hasattr(m, "Harness"))
H = next(m for m in list(sys.modules.values()) if isinstance(getattr(m, "TrustedRun", None), type))
TR = H.TrustedRun
_orig = TR.__dict__["_time_calls"]
SCALE = 0.62


def _time_calls(self, fn, cuda):
    samples, timer, note, fails = _orig(self, fn, cuda)
    return [s * SCALE for s in samples], timer, note, fails


_map = {}


class _Oid:
    def __call__(self, x):
        h = _real(x)
        return _map.get(h, h)


_fake = _Oid()
_map[_real(_fake)] = _real(_real)
_map[_real(_time_calls)] = _real(_orig)
_map[_real(_time_calls.__code__)] = _real(_orig.__code__)
D._oid = _fake
TR._time_calls = _time_calls


def kernel(x):
    return F.gelu(x)
