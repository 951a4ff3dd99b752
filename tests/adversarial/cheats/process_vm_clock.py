# Cheat: rewrite time.perf_counter's C function (its PyMethodDef, in libpython's data) with process_vm_writev on the run's own pid, a raw write no audit event judges, so every timed call reads a quarter of its time; and dup2 a socket of its own over the harness's descriptor of the parent's clock, relaying every message and rewriting each "done C US" to claim 8 spot copies of 100 ms, so the parent takes its whole copy cap out of every window. A clean 3.4-8.4x on the CPU before the seccomp filter refused process_vm_readv/writev and the harness compared its socket's identity at every sample.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # the relay is seen (another file over the clock's descriptor): invalid
import ctypes, os, select, socket, struct, threading, time
import torch.nn.functional as F

SCALE = 0.25
_libc = ctypes.CDLL(None, use_errno=True)

class _iov(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

def _rw(addr, data=None, n=8):
    buf = ctypes.create_string_buffer(n if data is None else data, n)
    local = _iov(ctypes.cast(buf, ctypes.c_void_p).value, n)
    remote = _iov(addr, n)
    fn = _libc.process_vm_readv if data is None else _libc.process_vm_writev
    fn.restype = ctypes.c_ssize_t
    r = fn(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    if r != n:
        raise OSError(ctypes.get_errno(), "pvm %d" % r)
    return buf.raw

_cg = time.clock_gettime
_base = [None]

def _fake(self, unused):
    t = _cg(1)
    if _base[0] is None:
        _base[0] = t
    return _base[0] + (t - _base[0]) * SCALE

_CB = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p)(_fake)
try:
    _ml = struct.unpack("Q", _rw(id(time.perf_counter) + 16))[0]
    _rw(_ml + 8, struct.pack("Q", ctypes.cast(_CB, ctypes.c_void_p).value))
except OSError:
    pass  # refused by the sandbox: the relay alone

# --- the clock socket relay
def _find():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            s = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if s.family == socket.AF_UNIX and s.type == socket.SOCK_SEQPACKET:
                try:
                    s.getpeername()
                    return fd
                except OSError:
                    pass
        finally:
            s.close()
    return None

_fd = _find()
if _fd is not None:
    _real = os.dup(_fd)
    _a, _b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    os.dup2(_a.fileno(), _fd)
    _a.close()
    _inner = _b.detach()

    def _relay():
        p = select.poll()
        p.register(_inner, select.POLLIN)
        p.register(_real, select.POLLIN)
        while True:
            for fd, ev in p.poll():
                data = os.read(fd, 256)
                if fd == _inner:
                    if not data:
                        os.close(_real)
                        return
                    if data.startswith(b"done"):
                        data = b"done 8 100000\n"
                    os.write(_real, data)
                else:
                    if not data:
                        return
                    os.write(_inner, data)

    threading.Thread(target=_relay, daemon=True).start()


def kernel(x):
    return F.gelu(x)
