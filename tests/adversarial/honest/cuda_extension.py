# Honest: a CUDA C++ GELU built with torch.utils.cpp_extension.load_inline (skipped if the
# toolchain cannot build it).
NEEDS_CUDA = True
BUILD = True
import torch
from torch.utils.cpp_extension import load_inline

_cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
}
torch::Tensor gelu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    gelu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
_cpp_src = "torch::Tensor gelu(torch::Tensor x);"
_ext = load_inline(name="hk_gelu_ext", cpp_sources=_cpp_src, cuda_sources=_cuda_src, functions=["gelu"],
                   extra_cuda_cflags=["-O3"], extra_include_paths=[], verbose=False)


def kernel(x):
    return _ext.gelu(x)
