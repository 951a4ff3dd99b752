# Cheat: a Triton gelu whose every block keeps a checksum of the input it last saw (one buffer per
# input tensor, made before the graph is captured) and skips its stores when the checksum is the
# same: in a replayed CUDA graph the outputs still hold the last replay's results, which are
# right if the inputs did not change. Replays on unchanged values would time loads only; fresh
# values before every timed replay make every block compute.
NEEDS_CUDA = True
EXPECT = "defeated"
import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _gelu_unless_same(x_ptr, y_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.sum(x * (1.0 + offs.to(tl.float32) * 1e-7), axis=0)
    if s != tl.load(sums_ptr + pid):
        tl.store(sums_ptr + pid, s)
        y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


_sums = {}


def kernel(x):
    x = x.contiguous()
    blocks = triton.cdiv(x.numel(), BLOCK)
    key = (x.data_ptr(), x.numel())
    sums = _sums.get(key)
    if sums is None:
        if torch.cuda.is_current_stream_capturing():  # never seen before capture: no memory to keep
            sums = torch.full((blocks,), float("nan"), device=x.device)
        else:
            sums = _sums[key] = torch.full((blocks,), float("nan"), device=x.device)
    y = torch.empty_like(x)
    _gelu_unless_same[(blocks,)](x, y, sums, x.numel(), BLOCK=BLOCK)
    return y
