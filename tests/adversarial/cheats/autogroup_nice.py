# Cheat: set the autogroup the run shares with the fork server (its session: a run cannot leave it) to nice 19 through its own /proc entry, which the sandbox lets it write since cuInit needs its own /proc entries; every later run forked from that server, its baseline's included, would inherit it.
NEEDS_CUDA = False
EXPECT = "caught"
PERSISTS = True  # it changes the fork server later verifies fork from: test_persistence.py
import torch.nn.functional as F

try:
    with open("/proc/self/autogroup", "w") as f:
        f.write("19")
except OSError:
    pass


def kernel(x):
    return F.gelu(x)
