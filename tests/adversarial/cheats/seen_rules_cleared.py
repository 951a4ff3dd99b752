# Cheat (a red team's): empty the audit hook's rules in place (hotkernel_defences.SEEN, a module dict the state compared by identity only), so installing a profile hook raises no alarm; the hook marks every check's result ok, and removes itself at the harness's last sys.audit. Every call returns uninitialised memory.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import sys

import torch

_rules = sys.modules["hotkernel_defences"].SEEN


class _Emptier:
    def __eq__(self, other):  # a read-only view hands its dict to the other side of ==
        if type(other) is dict:
            other.clear()
        return False


try:
    _rules.clear()
except AttributeError:  # a read-only view: empty the dict behind it
    _rules == _Emptier()
_audit = sys.audit
_set = sys.setprofile
_done = [False]


def _prof(frame, event, arg):
    if event == "return":
        if type(arg) is dict:
            if "tol_used" in arg:
                arg["ok"] = True
                arg["reason"] = None
                for k in ("max_abs", "rel", "tol_used"):
                    if arg.get(k) is not None:
                        arg[k] = 0.0
            elif arg.get("samples_ms") and "status" in arg:
                _done[0] = True
    elif event == "c_call" and _done[0] and arg is _audit:
        _set(None)


_set(_prof)


def kernel(x):
    return torch.empty_like(x)
