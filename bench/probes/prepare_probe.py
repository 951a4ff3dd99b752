"""How long the harness's prepare takes with and without its operator recorder (a
TorchDispatchMode), on a CUDA gelu target; prints the slowest calls under the recorder."""
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import torch  # noqa: E402
import hotkernel_contract as hk  # noqa: E402
import hotkernel_harness as harness  # noqa: E402

t = hk.Target({"name": "g", "from": "torch.nn.functional:gelu", "shape": sys.argv[1] if len(sys.argv) > 1 else "16384x8192",
               "device": "cuda", "dtype": "bf16"})
torch.zeros(1, device="cuda")
for label in ("plain", "recorded", "plain", "recorded"):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if label == "plain":
        s = hk.prepare(t, seed=1)
    else:
        with harness._op_recorder(torch) as ops:
            s = hk.prepare(t, seed=1)
    torch.cuda.synchronize()
    print(label, round(time.perf_counter() - t0, 3), "s", sorted(ops) if label == "recorded" else "")
    del s
pr = cProfile.Profile()
pr.enable()
with harness._op_recorder(torch) as ops:
    s = hk.prepare(t, seed=1)
torch.cuda.synchronize()
pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(12)
