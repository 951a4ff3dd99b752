# Honest: a Triton GELU kernel (erf form), one program per block of elements.
NEEDS_CUDA = True
import torch
import triton
import triton.language as tl


@triton.jit
def _gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)


def kernel(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    _gelu[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
    return y
