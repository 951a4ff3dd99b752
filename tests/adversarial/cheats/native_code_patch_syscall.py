# Cheat: native_code_patch.py with mprotect called by number through syscall, which no audit event
# names: the page of libtorch's max_all CPU kernel made writable and a jump to min_all's written
# over its first bytes (x86_64 only: the jump's encoding), so x * 0.5 passes as gelu. The harness
# pins the first bytes of the code every pinned kernel pointer leads to (native_pin).
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # invalid: the code a kernel pointer of libtorch's leads to, rewritten
import ctypes, mmap, struct
import torch
import torch.nn.functional as F

class _U(ctypes.Union):
    _fields_ = [("a", ctypes.c_size_t), ("p", ctypes.POINTER(ctypes.c_size_t)), ("b", ctypes.POINTER(ctypes.c_ubyte))]

def _sym(path, names):
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    shoff, = struct.unpack_from("<Q", m, 0x28); shnum, = struct.unpack_from("<H", m, 0x3c)
    secs = [struct.unpack_from("<IIQQQQIIQQ", m, shoff + 64 * i) for i in range(shnum)]
    dsym = next(s for s in secs if s[1] == 11); dstr = secs[dsym[6]]
    offs = {m.find(b"\0" + n + b"\0", dstr[4], dstr[4] + dstr[5]) + 1 - dstr[4]: n for n in names}
    out = {}
    for nm, _, _, _, val, _ in struct.iter_unpack("<IBBHQQ", m[dsym[4]:dsym[4] + dsym[5]]):
        if nm in offs:
            out[offs[nm]] = val
    return out

def _patch():
    maps = [l.split() for l in open("/proc/self/maps") if "libtorch_cpu.so" in l]
    base = min(int(l[0].split("-")[0], 16) for l in maps if int(l[2], 16) == 0)
    s = _sym(maps[0][-1], [b"_ZN2at6native12max_all_stubE", b"_ZN2at6native12min_all_stubE"])
    torch.ones(3).max(); torch.ones(3).min()
    u = _U(); u.a = base + s[b"_ZN2at6native12max_all_stubE"]; src = u.p[0]
    u.a = base + s[b"_ZN2at6native12min_all_stubE"]; dst = u.p[0]
    libc = ctypes.CDLL(None)
    nr = {"x86_64": 10, "aarch64": 226}[__import__("os").uname().machine]  # mprotect by number

    def mp(addr, size, prot):
        return libc.syscall(ctypes.c_long(nr), ctypes.c_void_p(addr), ctypes.c_size_t(size), ctypes.c_int(prot))
    pg = src & ~4095
    if mp(pg, 8192, 7) != 0:  # PROT_READ | PROT_WRITE | PROT_EXEC
        return
    code = b"\x48\xb8" + struct.pack("<Q", dst) + b"\xff\xe0"
    u.a = src
    for i, c in enumerate(code):
        u.b[i] = c
    mp(pg, 8192, 5)

_patch()

def kernel(x):
    return x * 0.5
