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


PARKER = r"""
import ctypes, fcntl, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS: a measured run's
fd = os.open(sys.argv[2], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
try:
    s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(memoryview(ctypes.c_int(fd))))])
    print("parked", flush=True)
except (BrokenPipeError, ConnectionResetError):  # the server closed it first
    print("closed", flush=True)
"""


def test_a_runs_connection_to_a_busy_kept_server_is_closed_at_once_with_what_it_sent(tmp_path):
    # A measured run can connect to its kept server's socket by path (Landlock does not cover it)
    # and park descriptors in a message there: a lock or a GiB of memfd outlived the run, held by
    # the queue, until the verify's own client left. The server vets a connection as it comes,
    # even while it serves another client: the run's is closed, and the lock with it.
    import fcntl
    import json
    import socket
    import time
    if ctypes.CDLL(None).prctl(39, 0, 0, 0, 0):  # PR_GET_NO_NEW_PRIVS
        import pytest
        pytest.skip("this session runs under no_new_privs, as a measured run does: a server started from it "
                    "cannot tell one from hotkernel (_sandboxed), and admits both")
    from conftest import kept_server
    lock_path = tmp_path / "held"
    lock_path.write_text("")
    with kept_server(tmp_path) as (server, sock_path):
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(str(sock_path))
        f = client.makefile("rwb")
        assert json.loads(f.readline())["event"] == "ready"  # served: the server is busy with this client
        parker = subprocess.run([sys.executable, "-c", PARKER, str(sock_path), str(lock_path)],
                                capture_output=True, text=True, timeout=30)
        assert parker.stdout.strip() in ("parked", "closed"), parker.stderr
        # The run that took the lock is gone; the lock must be too, while the client is still served.
        fd = os.open(str(lock_path), os.O_RDWR)
        try:
            deadline, free = time.monotonic() + 5, False
            while not free and time.monotonic() < deadline:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    free = True
                except OSError:
                    time.sleep(0.05)
        finally:
            os.close(fd)
        assert free, "a descriptor a sandboxed peer sent stayed open in the kept server's queue"
        # hotkernel's next client, come while the first is served, is taken from the queue too and
        # served once the first has gone.
        second = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        second.connect(str(sock_path))
        time.sleep(0.2)
        f.close()
        client.close()
        g = second.makefile("rwb")
        assert json.loads(g.readline())["event"] == "ready"
        g.write(b'{"op": "quit"}\n')
        g.flush()
        server.wait(timeout=10)


def test_a_run_holds_none_of_the_kept_servers_descriptors(tmp_path):
    from conftest import kept_server
    # A run inherited the server's lock file (fd 3, open read-write): a flock a run took on that
    # open file would be the server's own, held after the run ended. A run holds only its own.
    import base64
    import json
    import socket
    script = tmp_path / "fds.py"
    script.write_text("import os\n"
                      "for fd in sorted(int(n) for n in os.listdir('/proc/self/fd')):\n"
                      "    try:\n"
                      "        print(fd, os.readlink('/proc/self/fd/%d' % fd))\n"
                      "    except OSError:\n"
                      "        pass\n")
    with kept_server(tmp_path) as (server, sock_path):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(sock_path))
        f = conn.makefile("rwb")
        assert json.loads(f.readline())["event"] == "ready"
        req = {"id": 1, "script": str(script), "argv": [str(script)], "timeout_s": 30}
        f.write((json.dumps(req) + "\n").encode())
        f.flush()
        ans = json.loads(f.readline())
        assert ans["event"] == "done" and ans["exit_code"] == 0, ans
        held = base64.b64decode(ans["stdout_b64"]).decode()
        f.write(b'{"op": "quit"}\n')
        f.flush()
        server.wait(timeout=10)
    assert str(sock_path) + ".lock" not in held, held
    assert "socket:" not in held.replace(str(sock_path), ""), held  # no socket of the server's either
