# Cheat (a red team's first step): take a function of the interpreter's C API (PyErr_SetInterruptEx, which trips a Python signal handler with no signal: the handler then ran in the harness's own thread, between the samples) by calling the C library's dlsym through ctypes, so the ctypes.dlsym audit event names only "dlsym", not the Py* function the hook refuses. This body only takes the address and computes gelu honestly: before, a clean run. A ctypes call of dlsym or dlvsym by the candidate is now invalid.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import ctypes

import torch.nn.functional as F

_libc = ctypes.CDLL(None)
_libc.dlsym.restype = ctypes.c_void_p
_libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_name = bytes([80, 121]) + b"Err_SetInterruptEx"  # built at run time, as a red team's was
_addr = _libc.dlsym(None, _name)


def kernel(x):
    return F.gelu(x)
