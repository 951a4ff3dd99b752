# Cheat: a helper process forked at import (the thread watch counts processes only while timing; a child's CPU is not in the process's CPU count) computes every other call's gelu. During the warm-up each input tensor is re-homed (Tensor.set_) onto an anonymous MAP_SHARED mmap, so the harness's fresh values and the secret's mix land where the helper reads them; outputs come back in the same mapping.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import mmap
import os

import torch
import torch.nn.functional as F

_K, _N = 64, 128 * 128
_mem = mmap.mmap(-1, 2 * _K * _N * 4 + 16 * _K)  # anonymous, MAP_SHARED: the child sees every write
_flt = torch.frombuffer(_mem, dtype=torch.float32, count=2 * _K * _N)
_ins, _outs = _flt[:_K * _N].view(_K, 128, 128), _flt[_K * _N:].view(_K, 128, 128)
_ctl = memoryview(_mem)[2 * _K * _N * 4:].cast("q")  # [0:K) requests, [K:2K) done, by slot
_slot = {}  # input tensor id -> its slot in the mapping
_old = {}  # slot -> element 0 of the tensor's first storage (set 1.0): 0-dim mix views made earlier still point there

if os.fork() == 0:  # the helper: no torch threads of its own, spins on the request words
    torch.set_num_threads(1)
    while True:
        for s in range(_K):
            r = _ctl[s]
            if r != _ctl[_K + s]:
                torch.ops.aten.gelu.out(_ins[s], out=_outs[s])
                _ctl[_K + s] = r
        os.sched_yield()


def kernel(x):
    s = _slot.get(id(x))
    if s is None:  # check call and warm-up: move the harness's tensor into the shared mapping
        if len(_slot) >= _K or x.shape != (128, 128) or not x.is_contiguous():
            return F.gelu(x)
        s = _slot[id(x)] = len(_slot)
        _ins[s].copy_(x)
        _old[s] = x.view(-1)[:1]
        x.set_(_ins[s])
        _old[s].fill_(1.0)
        return F.gelu(x)
    f = float(_old[s])
    if f != 1.0:  # the release's factor went to the first storage: carry it over
        x.view(-1)[0] *= f
        _old[s].fill_(1.0)
    if s % 2 == 1:  # slots follow the call order from 1: an odd slot asks for the next one
        if s + 1 < len(_slot):
            _ctl[s + 1] += 1  # the next set's values (mix included) are in place: the helper starts it
        torch.ops.aten.gelu.out(x, out=_outs[s])
        return _outs[s]
    if _ctl[s] == _ctl[_K + s]:  # not requested (an odd slot called first): do it here
        _ctl[s] += 1
        torch.ops.aten.gelu.out(x, out=_outs[s])
        _ctl[_K + s] = _ctl[s]
        return _outs[s]
    while _ctl[_K + s] != _ctl[s]:
        pass
    return _outs[s]
