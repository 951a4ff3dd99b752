# Cheat: reserve a persisting-L2 carve-out (cudaLimitPersistingL2CacheSize) so reused data
# stays hot across samples that are meant to be cold.
NEEDS_CUDA = True
EXPECT = "caught"
import ctypes

import torch
import torch.nn.functional as F


def _cudart():
    with open("/proc/self/maps") as f:
        paths = sorted({l.split()[-1] for l in f if "libcudart" in l and "/" in l})
    for p in paths + ["libcudart.so", "libcudart.so.12", "libcudart.so.13"]:
        try:
            return ctypes.CDLL(p)
        except OSError:
            pass
    raise OSError("no libcudart")


_rt = None


def kernel(x):
    global _rt
    if _rt is None:  # once, on the first (untimed) call: setting a limit inside graph capture fails
        torch.cuda.init()
        _rt = _cudart()
        props = torch.cuda.get_device_properties(x.device)
        size = getattr(props, "L2_cache_size", 50 << 20)
        most = ctypes.c_int(0)  # cudaDevAttrMaxPersistingL2CacheSize: asking for more is an error
        _rt.cudaDeviceGetAttribute(ctypes.byref(most), 108, x.device.index or 0)
        want = min(size * 3 // 4, most.value) if most.value > 0 else size * 3 // 4
        _rt.cudaDeviceSetLimit(0x06, ctypes.c_size_t(int(want)))  # cudaLimitPersistingL2CacheSize
    return F.gelu(x)
