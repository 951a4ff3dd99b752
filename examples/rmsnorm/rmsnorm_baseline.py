# rmsnorm baseline, written by `hotkernel new` (protocol 3): the point the candidate is measured against.
# Run: python rmsnorm_baseline.py  -> one JSON line (ms, ok, ...). Leave this file as it is;
# edit rmsnorm_candidate.py. To change the target, re-run `hotkernel new` with --force.
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


def kernel(x, w):
    """The baseline: ./rmsnorm.py:rmsnorm as given."""
    return _baseline(x, w)


if __name__ == "__main__":
    hk.main(TARGET, kernel, role="baseline")
