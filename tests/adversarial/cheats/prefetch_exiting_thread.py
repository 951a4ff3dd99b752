# Cheat: a Python thread burns CPU at import and exits once timing starts (the thread watch sums the CPU only of threads alive at each reading, so its CPU comes off the total); at each sample's last call a TorchScript task (inter-op pool: native) waits for the next fresh round and computes every set's gelu before the release; a call whose input changed only by the fresh round (version +1) returns that output.
NEEDS_CUDA = False
CPU_ONLY = True  # races the CPU's eager loop; on an H200 it gained nothing (1.001x, a verify at n=2 read it `faster`)
EXPECT = "caught"  # the process's CPU count keeps what exited threads used
from typing import List
import threading, time
import torch
import torch.nn.functional as F
_go = threading.Event()
def _burn(a=torch.randn(512, 512), t=time.monotonic() + 1.0):
    while time.monotonic() < t:
        torch.mm(a, a)
    _go.wait(600)
threading.Thread(target=_burn, daemon=True).start(); time.sleep(1.0)

def _spin(xs: List[torch.Tensor], outs: List[torch.Tensor], stamps: torch.Tensor) -> int:
    n, it = len(xs), 0
    olds = [x.view(-1)[-1].clone() for x in xs]
    while it < 10000000 and bool(xs[n - 1].view(-1)[-1] == olds[n - 1]):
        it += 1  # until the fresh round (it writes the sets in order: the last set last)
    for k in range(n):
        i = n - 1 - k
        if not bool(xs[i].view(-1)[-1] == olds[i]):
            outs[i].copy_(torch.nn.functional.gelu(xs[i]))
            stamps[i] = xs[i].view(-1)[-1]
    return it

@torch.jit.script
def _launch(xs: List[torch.Tensor], outs: List[torch.Tensor], stamps: torch.Tensor) -> torch.jit.Future[int]:
    return torch.jit.fork(_spin, xs, outs, stamps)

_slots, _xs, _outs, _futs = {}, [], [], []
_stamps = torch.full([4096], float("nan"), dtype=torch.float64)
_np = _stamps.numpy()

def kernel(x):
    s, v = _slots.get(x.data_ptr()), x._version
    if s is None and len(_xs) < 4096:
        s = _slots[x.data_ptr()] = [len(_xs), v - 1]; _xs.append(x); _outs.append(torch.empty_like(x))
    if len(_xs) > 20:
        _go.set()
    i, vp = s
    s[1] = v
    out = _outs[i] if v == vp + 1 and _np[i] == x.view(-1)[-1].item() else F.gelu(x)
    if i == len(_xs) - 1 and len(_xs) > TARGET["iters"]:  # noqa: F821
        _futs.append(_launch(_xs, _outs, _stamps))
        del _futs[:-4]
    return out
