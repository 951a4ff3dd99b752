"""Who a kept fork server serves: never a process inside a measured run (no_new_privs set by the
kernel sandbox), which could otherwise ask it for an unsandboxed child."""
import ctypes
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import hotkernel_forkserver as fs  # noqa: E402

CHILD = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS, as hotkernel_sandbox.apply does
sys.stdout.write("ready\n"); sys.stdout.flush()
time.sleep(30)
"""


def test_a_sandboxed_peer_is_told_apart_from_hotkernel():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert fs._sandboxed(child.pid) is True
        nnp = ctypes.CDLL(None).prctl(39, 0, 0, 0, 0)  # PR_GET_NO_NEW_PRIVS
        assert fs._sandboxed(os.getpid()) is bool(nnp)
    finally:
        child.kill()
        child.wait()
    assert fs._sandboxed(child.pid) is True  # gone: unknown counts as sandboxed
