# Cheat: a plain seccomp filter (prctl, no listener), installed at import, makes seccomp(2) return 0 without running, so the spawn filter the harness installs before the samples is never in force and the candidate could make processes inside them, whose CPU the harness's count of the run's group misses once they are gone (a red team's suggestion after the listener was refused). Such a filter can make any call of the harness's fail or pretend to succeed; the harness counts the process's filters (a foreign one: invalid) and proves its own spawn filter by a canary drawn after the import.
NEEDS_CUDA = False
CPU_ONLY = True  # the spawn filter is the CPU path's; the count is checked on the GPU too (tests/python/test_kernel_sandbox.py)
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import ctypes
import os
import struct

from torch.nn.functional import gelu as _gelu

_libc = ctypes.CDLL(None, use_errno=True)
_NR = {"x86_64": 317, "aarch64": 277}.get(os.uname().machine)  # seccomp


def _arm():
    if _NR is None:
        return None
    lines = [(0x20, 0, 0, 0), (0x15, 0, 1, _NR), (0x06, 0, 0, 0x00050000), (0x06, 0, 0, 0x7FFF0000)]
    raw = ctypes.create_string_buffer(b"".join(struct.pack("<HBBI", *x) for x in lines))
    prog = ctypes.create_string_buffer(struct.pack("<HxxxxxxQ", len(lines), ctypes.addressof(raw)))
    _libc.prctl(22, ctypes.c_ulong(2), prog, ctypes.c_ulong(0), ctypes.c_ulong(0))  # PR_SET_SECCOMP, FILTER
    return raw, prog


_keep = _arm()


def kernel(x):
    return _gelu(x)
