# Cheat: a helper forked at import names itself with bytes that are not UTF-8 (prctl PR_SET_NAME); _group_cpu reads /proc/PID/stat in text mode, the UnicodeDecodeError is a ValueError it skips, so the helper's CPU is never counted nor its end seen. Inputs are re-homed onto a MAP_SHARED mapping (as helper_process_shared_inputs.py); the helper sees each fresh_round's values as they are written, before the release, and computes every set's gelu there; each call redoes element 0 (the secret's) only.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # /proc is read as bytes: the helper is in the group, and its CPU is counted
import ctypes
import math
import mmap
import os

import torch
import torch.nn.functional as F

_K, _N = 64, 128 * 128
_mem = mmap.mmap(-1, 2 * _K * _N * 4 + 8 * (2 * _K + 1))
_flt = torch.frombuffer(_mem, dtype=torch.float32, count=2 * _K * _N)
_ins, _outs = _flt[:_K * _N].view(_K, 128, 128), _flt[_K * _N:].view(_K, 128, 128)
_fv = memoryview(_mem)[:_K * _N * 4].cast("f")  # the inputs, cheap to read
_fp = memoryview(_mem)[2 * _K * _N * 4:].cast("d")  # [0]: slots in use; [1+2s], [2+2s]: slot s's done fingerprint
for _i in range(len(_fp)):
    _fp[_i] = float("nan")
_fp[0] = 0.0
_slot, _old = {}, {}

if os.fork() == 0:
    torch.set_num_threads(1)
    ctypes.CDLL(None).prctl(15, b"\xff\xfe\xfd", 0, 0, 0)  # PR_SET_NAME: /proc/PID/stat no longer decodes
    while True:
        for s in range(int(_fp[0])):
            a, b = _fv[s * _N + 1], _fv[s * _N + _N - 1]
            if a != _fp[1 + 2 * s] or b != _fp[2 + 2 * s]:
                _fp[1 + 2 * s] = float("nan")
                torch.ops.aten.gelu.out(_ins[s], out=_outs[s])
                _fp[2 + 2 * s] = b
                _fp[1 + 2 * s] = a
        os.sched_yield()


def kernel(x):
    s = _slot.get(id(x))
    if s is None:  # check call and warm-up: move the harness's tensor into the shared mapping
        if len(_slot) >= _K or x.shape != (128, 128) or not x.is_contiguous() or x.dtype != torch.float32:
            return F.gelu(x)
        s = _slot[id(x)] = len(_slot)
        _ins[s].copy_(x)
        _old[s] = x.view(-1)[:1]
        x.set_(_ins[s])
        _old[s].fill_(1.0)
        _fp[0] = float(len(_slot))
        return F.gelu(x)
    xv = x.view(-1)
    f = float(_old[s])
    if f != 1.0:  # the release's factor went to the first storage: carry it over
        xv[0] *= f
        _old[s].fill_(1.0)
    if _fv[s * _N + 1] == _fp[1 + 2 * s] and _fv[s * _N + _N - 1] == _fp[2 + 2 * s]:
        out, v = _outs[s], float(xv[0])
        out.view(-1)[0] = 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))
        return out
    return F.gelu(x)
