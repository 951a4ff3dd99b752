# Cheat: a setsid helper started at import escapes every sweep when the candidate kills its kept fork server, then stops and continues the baseline's runner so its timed calls take longer.
NEEDS_CUDA = False
EXPECT = "caught"
PERSISTS = True  # tests/adversarial/test_persistence.py (its helper outlives the verify)
import os
import signal
import subprocess
import sys

import torch.nn.functional as F

_HELPER = r'''
import os, signal, time


def baseline_runners():
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        if any(a.endswith(b"hotkernel_harness.py") for a in cmd) and b"baseline" in cmd:
            yield int(d)


end = time.time() + 60
while time.time() < end:
    for pid in list(baseline_runners()):
        try:  # stopped nine tenths of the time while it lives
            while True:
                os.kill(pid, signal.SIGSTOP)
                time.sleep(0.045)
                os.kill(pid, signal.SIGCONT)
                time.sleep(0.005)
        except OSError:
            pass
    time.sleep(0.03)
'''


def _parent_is_fork_server():
    try:
        with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
            return b"hotkernel_forkserver.py" in f.read()
    except OSError:
        return False


if _parent_is_fork_server():
    subprocess.Popen([sys.executable, "-c", _HELPER], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.kill(os.getppid(), signal.SIGKILL)  # its orphans go wherever the server's parent is


def kernel(x):
    return F.gelu(x)
