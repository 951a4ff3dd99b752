# Cheat (persistence): an honest gelu that, at import, opens a SysV semaphore under a fixed key (made by the first run) and counts each run in it: the semaphore outlives every process and names no maker, so a run would know which run of the verify it is (a warm-up, the first timed one) and could leave word for a later one.
NEEDS_CUDA = False
EXPECT = "clean"
PERSISTS = True  # it leaves something behind: test_persistence.py checks that nothing survives the verify
import ctypes

import torch.nn.functional as F

KEY = 0x686B7331  # "hks1"
_libc = ctypes.CDLL(None, use_errno=True)


class _Sembuf(ctypes.Structure):
    _fields_ = [("sem_num", ctypes.c_ushort), ("sem_op", ctypes.c_short), ("sem_flg", ctypes.c_short)]


_id = _libc.semget(KEY, 1, 0o1600)  # IPC_CREAT | 0600
if _id >= 0:
    _libc.semop(_id, ctypes.byref(_Sembuf(0, 1, 0)), 1)  # this run, counted
    RUNS_BEFORE = _libc.semctl(_id, 0, 12) - 1  # GETVAL


def kernel(x):
    return F.gelu(x)
