# Cheat (persistence): an honest gelu that, at import, creates a SysV shared-memory segment (64 MiB, touched, and SHM_LOCKed where the process may) and never removes it: Landlock does not cover SysV IPC and the segment outlives every process, so runs could pin the machine's memory for every later verify.
NEEDS_CUDA = False
EXPECT = "clean"
PERSISTS = True  # it leaves something behind: test_persistence.py checks that nothing survives the verify
import ctypes

import torch.nn.functional as F

_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_id = _libc.shmget(0, 64 << 20, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
if _id >= 0:
    _libc.shmctl(_id, 11, None)  # SHM_LOCK: resident until removed (needs CAP_IPC_LOCK)
    _at = _libc.shmat(_id, None, 0)
    if _at not in (None, ctypes.c_void_p(-1).value):
        ctypes.memset(_at, 1, 64 << 20)
        _libc.shmdt(ctypes.c_void_p(_at))


def kernel(x):
    return F.gelu(x)
