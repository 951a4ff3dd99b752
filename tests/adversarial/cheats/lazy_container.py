# Cheat: return a list subclass whose __iter__, __len__ and __getitem__ compute gelu(x) into an empty output only when read. Each element the checks see is a correct plain torch.Tensor, but unpacking the list runs the candidate's code: the harness's checks (after the window) and spot copies (time the parent takes out) did the work, and the timed call only allocated and spun ~5 us (a clean 4.5-5.2x on the CPU before outputs' containers had to be plain tuples or lists). A tuple subclass works the same way.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # a container subclass is the candidate's code: the output fails its check
import time

import torch
import torch.nn.functional as F

_perf = time.perf_counter


class Lazy(list):
    __slots__ = ("_x", "_y", "_done")

    def _get(self):
        if not self._done:
            self._y.copy_(F.gelu(self._x))
            self._done = True
        return self._y

    def __iter__(self):
        return iter((self._get(),))

    def __len__(self):
        return 1

    def __bool__(self):
        return True

    def __getitem__(self, i):
        return (self._get(),)[i]


def kernel(x):
    t = _perf() + 5e-6
    y = torch.empty_like(x)
    o = Lazy()
    o._x, o._y, o._done = x, y, False
    while _perf() < t:  # a little time of its own: stays under the 10x flag
        pass
    return o
