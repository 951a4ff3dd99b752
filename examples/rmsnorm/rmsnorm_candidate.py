# rmsnorm candidate: a fused one-pass Triton RMSNorm (one program per row: read x once, write y once).
# Started as the file `hotkernel new` wrote; kernel(x, w) returns what the baseline returns.
# Without CUDA or Triton (a CPU-only CI machine) it runs the baseline's code, so verify there
# compares the baseline with itself and should say 'inconclusive'.
# Check and time it: hotkernel verify rmsnorm_baseline.py rmsnorm_candidate.py
import hotkernel_contract as hk

TARGET = {
    "name": "rmsnorm",
    "from": "./rmsnorm.py:rmsnorm",
    "shape": [512, 4096],
    "extra": {"w": [4096]},
    "rotate": ["x"],
    "derive": None,
    "inputs": None,
    "reference": None,
    "flops": 8388608,
    "min_bytes": None,
    "dtype": "bf16",
    "device": "auto",
    "seed": 0,
    "iters": 20,
    "samples": 10,
    "warmup_s": "auto",
    "timer": "auto",
}

_baseline = hk.load_callable(TARGET["from"], __file__)

try:  # Triton is optional: absent on Debian's torch 1.13 and on CPU-only machines
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:

    @triton.jit
    def _rmsnorm_row(x_ptr, w_ptr, y_ptr, row_stride, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def kernel(x, w):
    """Fused RMSNorm over the last dimension; the same fp32 math as the baseline, in one pass."""
    if triton is None or not x.is_cuda:
        return _baseline(x, w)  # no GPU kernel possible here: the baseline's own code
    import torch

    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    y = torch.empty_like(x2)
    n_cols = x2.shape[1]
    block = triton.next_power_of_2(n_cols)
    num_warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    _rmsnorm_row[(x2.shape[0],)](x2, w, y, x2.stride(0), n_cols, 1e-6, BLOCK=block, num_warps=num_warps)
    return y.reshape(x.shape)


if __name__ == "__main__":
    hk.main(TARGET, kernel, role="candidate")
