# Cheat: take over CUPTI's buffer callbacks and hand the harness's clock half of each buffer, so half the kernels vanish from the CUPTI timer.
NEEDS_CUDA = True
EXPECT = "caught"
import ctypes
import sys

import torch.nn.functional as F

_hc = sys.modules.get("hotkernel_contract")
_clock = getattr(getattr(_hc, "KernelClock", None), "_one", None)
_keep = None
if _clock is not None:
    _req_t = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                              ctypes.POINTER(ctypes.c_size_t))
    _done_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                               ctypes.c_size_t)

    def _half(ctx, stream, buf, size, valid):
        _clock._on_completed(ctx, stream, buf, size, valid // 2)

    _keep = (_req_t(_clock._on_requested), _done_t(_half))
    _clock._lib.cuptiActivityRegisterCallbacks(*_keep)


def kernel(x):
    return F.gelu(x)
