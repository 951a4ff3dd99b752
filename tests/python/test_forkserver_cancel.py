"""The fork server's cancel op: {"op": "cancel", "id"} stops that run's process group (SIGTERM,
then SIGKILL after the grace) and answers its "done" with "cancelled"; the server stays and
forks the next run. A cancel for a run answered already is ignored. Driven over the server's
own line protocol, light mode (no torch)."""
import base64
import json
import os
import subprocess
import sys
import time

from conftest import ROOT

SERVER = ROOT / "python" / "hotkernel_forkserver.py"

# Prints its parent (the server) and a grandchild's pid in its group, then hangs.
HANG = """import os, subprocess, sys, time
kid = subprocess.Popen(['sleep', '300'])
print(os.getppid(), kid.pid, flush=True)
time.sleep(300)
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Server:
    def __init__(self, tmp_path):
        env = dict(os.environ, HOTKERNEL_FORKSERVER_LIGHT="1")
        env.pop("HOTKERNEL_RESULT_FD", None)
        self.p = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, cwd=str(tmp_path))
        ready = self.read()
        assert ready["event"] == "ready" and ready["forkable"], ready

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def read(self):
        line = self.p.stdout.readline()
        assert line, "the fork server ended"
        return json.loads(line)

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def test_cancel_stops_the_run_and_its_group_and_the_server_forks_the_next(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(HANG)
    quick = tmp_path / "quick.py"
    quick.write_text("import os\nprint(os.getppid())\n")
    s = Server(tmp_path)
    try:
        s.send({"id": 1, "script": str(script), "argv": [str(script)], "timeout_s": 60, "kill_grace_s": 1})
        time.sleep(1.5)  # the run prints, then hangs
        t0 = time.monotonic()
        s.send({"op": "cancel", "id": 1})
        ans = s.read()
        took = time.monotonic() - t0
        assert ans["event"] == "done" and ans["id"] == 1, ans
        assert ans["cancelled"] is True and ans["timed_out"] is False, ans
        assert took < 5, took

        server, kid = map(int, base64.b64decode(ans["stdout_b64"]).split())
        assert server == s.p.pid
        deadline = time.monotonic() + 3
        while alive(kid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(kid), "the cancelled run's group was left running"
        # A late cancel (for the run answered already) is ignored; the next run is forked as usual.
        s.send({"op": "cancel", "id": 1})
        s.send({"id": 2, "script": str(quick), "argv": [str(quick)], "timeout_s": 30})
        ans = s.read()
        assert (ans["event"], ans["id"], ans["cancelled"], ans["exit_code"]) == ("done", 2, False, 0), ans
        assert int(base64.b64decode(ans["stdout_b64"])) == s.p.pid
        s.send({"op": "ping"})
        assert s.read()["event"] == "pong"
    finally:
        s.close()


def test_a_cancel_that_comes_with_its_request_stops_the_run_at_once(tmp_path):
    # Both lines in one read: the cancel is already waiting when the run starts.
    script = tmp_path / "hang.py"
    script.write_text(HANG)
    s = Server(tmp_path)
    try:
        req = {"id": 7, "script": str(script), "argv": [str(script)], "timeout_s": 60, "kill_grace_s": 1}
        t0 = time.monotonic()
        s.p.stdin.write((json.dumps(req) + "\n" + json.dumps({"op": "cancel", "id": 7}) + "\n").encode())
        s.p.stdin.flush()
        ans = s.read()
        assert (ans["event"], ans["id"], ans["cancelled"]) == ("done", 7, True), ans
        assert time.monotonic() - t0 < 5
    finally:
        s.close()
