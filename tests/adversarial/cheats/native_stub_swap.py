# Cheat: below torch's dispatcher, copy libtorch's at::native::min_all_stub over max_all_stub (each
# a DispatchStub: its CPU kernel pointer, cached at the first call, and its CUDA one), found in
# libtorch_cpu's ELF dynamic symbols and written through a ctypes Union (a raw pointer: no audit
# event). Every Tensor.max() then returns the smallest element, so the check's worst element is its
# best: a constant fill at gelu's minimum (about 1% of a gelu's elements lie within tolerance of
# it) passed as gelu, a clean 3.7-6.8x on the CPU. No Python object, code or dispatcher table
# changes; the harness pins every kernel pointer set when it is set up (native_stubs).
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # invalid: a kernel pointer of libtorch's rewritten
import ctypes
import mmap
import struct

import torch


class _U(ctypes.Union):
    _fields_ = [("a", ctypes.c_size_t), ("p", ctypes.POINTER(ctypes.c_size_t))]


def _symbols(path, names):
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    shoff, = struct.unpack_from("<Q", m, 0x28)
    shnum, = struct.unpack_from("<H", m, 0x3c)
    secs = [struct.unpack_from("<IIQQQQIIQQ", m, shoff + 64 * i) for i in range(shnum)]
    dsym = next(s for s in secs if s[1] == 11)  # SHT_DYNSYM
    dstr = secs[dsym[6]]
    offs = {m.find(b"\0" + n + b"\0", dstr[4], dstr[4] + dstr[5]) + 1 - dstr[4]: n for n in names}
    out = {}
    for nm, _, _, _, value, size in struct.iter_unpack("<IBBHQQ", m[dsym[4]:dsym[4] + dsym[5]]):
        if nm in offs:
            out[offs[nm]] = (value, size)
    return out


def _swap():
    maps = [line.split() for line in open("/proc/self/maps") if "libtorch_cpu.so" in line]
    base = min(int(p[0].split("-")[0], 16) for p in maps if int(p[2], 16) == 0)
    s = _symbols(maps[0][-1], [b"_ZN2at6native12max_all_stubE", b"_ZN2at6native12min_all_stubE"])
    torch.ones(3).max()
    torch.ones(3).min()  # each stub caches its CPU kernel
    (mx, size), (mn, _) = s[b"_ZN2at6native12max_all_stubE"], s[b"_ZN2at6native12min_all_stubE"]
    u, v = _U(), _U()
    for i in range(size // 8):
        u.a, v.a = base + mn + 8 * i, base + mx + 8 * i
        v.p[0] = u.p[0]


try:
    _swap()
except (OSError, StopIteration, KeyError, ValueError):
    pass


def kernel(x):
    return torch.full_like(x, -0.16997120747990352)
