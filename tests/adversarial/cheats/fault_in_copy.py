# Cheat: each call computes ~75% of its output and leaves the rest's pages unreadable (mprotect through libc's syscall, by number); a native SIGSEGV handler (a ctypes callback set with libc's signal(), which Python's signal module never sees) computes them when the harness's spot copy first reads them, inside the copy whose time the parent takes out of the window. The copy runs with every signal blocked, so the fault kills the run there, and the parent, which saw the copy's pause and no resume, names it.
NEEDS_CUDA = False
CPU_ONLY = True  # CPU outputs: a GPU's memory is not the process's pages
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import ctypes

import torch

_DEFER = 0.25
_PAGE = 4096
_libc = ctypes.CDLL(None, use_errno=True)
_sys = _libc.syscall
_sys.restype = ctypes.c_long
_sys.argtypes = [ctypes.c_long, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_long]
_MPROTECT = {"x86_64": 10, "aarch64": 226}[__import__("platform").machine()]  # the syscall's number
_pending = []


def _flush():
    while _pending:
        lo, n, src, dst = _pending.pop()
        _sys(_MPROTECT, lo, n, 3)  # read and write again
        torch._C._nn.gelu(src, out=dst)


_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int)(lambda sig: _flush())
_libc.signal.restype = ctypes.c_void_p
_libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
_libc.signal(11, ctypes.cast(_HANDLER, ctypes.c_void_p))


def kernel(x):
    _flush()
    out = torch.empty_like(x)
    xf, of = x.view(-1), out.view(-1)
    n, es, ptr = of.numel(), of.element_size(), out.data_ptr()
    lo = (ptr + int(n * (1 - _DEFER)) * es + _PAGE - 1) // _PAGE * _PAGE
    hi = (ptr + n * es) // _PAGE * _PAGE
    if hi <= lo:
        return torch._C._nn.gelu(x)
    a, b = (lo - ptr) // es, (hi - ptr) // es
    torch._C._nn.gelu(xf[:a], out=of[:a])
    torch._C._nn.gelu(xf[b:], out=of[b:])
    _pending.append((lo, hi - lo, xf[a:b], of[a:b]))
    _sys(_MPROTECT, lo, hi - lo, 0)  # no access
    return out
