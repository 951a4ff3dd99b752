# Cheat: through a raw pointer (a ctypes Union of an int and a pointer: writing through it raises no audit event), point the slot of the constant 1.0 in the co_consts of hotkernel_contract.screen_read at a float 1e30, so every finite output passes check_quick's screen; the check call and the warm-up get gelu, the timed calls return zeros. The code object keeps its id, which is what the patch check compared: a clean 2.5-2.9x on the CPU, zeros passed as correct. The harness now digests its own code (bytecode, constants, names) by value at every sample and at the end.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # invalid: the harness's own code changed
import ctypes
import sys
import torch
import torch.nn.functional as F


class _U(ctypes.Union):
    _fields_ = [("a", ctypes.c_size_t), ("d", ctypes.POINTER(ctypes.c_double)), ("p", ctypes.POINTER(ctypes.c_size_t))]


_u = _U()
_keep = []
_st = {"done": False, "frame": None, "timed": False}


def _loosen():
    c = sys.modules["hotkernel_contract"].screen_read.__code__
    for i, k in enumerate(c.co_consts):
        if type(k) is float and k == 1.0:
            # the 1.0 is shared with the module's WARMUP_MAX_S (one constant a compile): point the
            # tuple's slot at a float of our own instead (kept alive here), leaving that 1.0 alone
            _keep.append(float("1e30"))
            _u.a = id(c.co_consts) + 24 + 8 * i
            _u.p[0] = id(_keep[-1])


def _me():
    try:
        raise ValueError
    except ValueError as e:
        return e.__traceback__.tb_frame.f_back


def kernel(x):
    if not _st["done"]:
        _st["done"] = True
        _loosen()
    fb = _me().f_back
    if fb is not _st["frame"]:
        _st["frame"] = fb
        _st["timed"] = "spot_odds" in fb.f_locals
    if _st["timed"]:
        return torch.zeros_like(x)
    return F.gelu(x)
