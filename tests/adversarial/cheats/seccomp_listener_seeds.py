# Cheat: a seccomp filter with a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER), installed at import, sends every getrandom(6) of the harness's thread to a thread of the candidate's, which writes the same bytes each time (a raw write into the buffer: no audit event): every fresh round draws the same set, the references too, and a memo of the output passes every check (a red team's: a clean 3.2-3.3x at gelu 2048x2048 bf16, each call redoing a quarter of the rows). Should a listener be refused, a filter that traps getrandom to a SIGSYS handler would do the same; the sandbox refuses both (seccomp with a listener, a SIGSYS action), so the memo never hits.
NEEDS_CUDA = False
CPU_ONLY = True  # the same on the GPU's host side, but the suite's GPU table has no need of a second copy
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "defeated"
SHAPE = "512x512"  # at the suite's 128x128 the listener thread's CPU is over a tenth of the calls' time: invalid anyway
import ctypes
import os
import struct
import threading

import torch
from torch.nn.functional import gelu as _gelu

_libc = ctypes.CDLL(None, use_errno=True)
_NR = {"x86_64": (317, 318), "aarch64": (277, 278)}.get(os.uname().machine)  # seccomp, getrandom


class _U(ctypes.Union):
    _fields_ = [("i", ctypes.c_size_t), ("p", ctypes.POINTER(ctypes.c_ubyte))]


def _serve(fd):  # answers each getrandom(buf, 6) with the same 6 bytes
    u = _U()
    while True:
        req = ctypes.create_string_buffer(80)
        if _libc.ioctl(fd, ctypes.c_ulong(0xC0502100), req) != 0:  # SECCOMP_IOCTL_NOTIF_RECV
            continue
        nid, = struct.unpack_from("<Q", req.raw, 0)
        u.i, count = struct.unpack_from("<QQ", req.raw, 32)
        for k in range(count):
            u.p[k] = 7 + k
        resp = struct.pack("<QqiI", nid, count, 0, 0)
        _libc.ioctl(fd, ctypes.c_ulong(0xC0182101), ctypes.create_string_buffer(resp, 24))  # NOTIF_SEND


def _arm():
    if _NR is None:
        return None
    lines = [(0x20, 0, 0, 0), (0x15, 0, 3, _NR[1]), (0x20, 0, 0, 24), (0x15, 0, 1, 6),
             (0x06, 0, 0, 0x7FC00000), (0x06, 0, 0, 0x7FFF0000)]  # getrandom(_, 6): USER_NOTIF; else allow
    raw = ctypes.create_string_buffer(b"".join(struct.pack("<HBBI", *x) for x in lines))
    prog = ctypes.create_string_buffer(struct.pack("<HxxxxxxQ", len(lines), ctypes.addressof(raw)))
    fd = _libc.syscall(ctypes.c_long(_NR[0]), ctypes.c_ulong(1), ctypes.c_ulong(8), prog)  # NEW_LISTENER
    if fd >= 0:
        threading.Thread(target=_serve, args=(fd,), daemon=True).start()
    return raw, prog


_keep, _memo = _arm(), []


def kernel(x):
    probe = x.reshape(-1)[::997].clone()
    if _memo and torch.equal(probe, _memo[0]):  # the same set again: only the secret's row redone
        out = _memo[1].clone()
        out[:1] = _gelu(x[:1])
        return out
    out = _gelu(x)
    _memo[:] = [probe, out.clone()]
    return out
