"""The fork server's cancel op: {"op": "cancel", "id"} stops that run's process group (SIGTERM,
then SIGKILL after the grace) and answers its "done" with "cancelled"; the server stays and
forks the next run. A cancel for a run answered already is ignored. Driven over the server's
own line protocol, light mode (no torch)."""
import base64
import json
import time

from conftest import alive
from test_forkserver_exit import Server

# Prints its parent (the server) and a grandchild's pid in its group, then hangs.
HANG = """import os, subprocess, sys, time
kid = subprocess.Popen(['sleep', '300'])
print(os.getppid(), kid.pid, flush=True)
time.sleep(300)
"""


def send(server, *objs):
    server.p.stdin.write("".join(json.dumps(o) + "\n" for o in objs).encode())
    server.p.stdin.flush()


def test_cancel_stops_the_run_and_its_group_and_the_server_forks_the_next(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(HANG)
    quick = tmp_path / "quick.py"
    quick.write_text("import os\nprint(os.getppid())\n")
    s = Server(tmp_path)
    try:
        send(s, {"id": 1, "script": str(script), "argv": [str(script)], "timeout_s": 60, "kill_grace_s": 1})
        time.sleep(1.5)  # the run prints, then hangs
        t0 = time.monotonic()
        send(s, {"op": "cancel", "id": 1})
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
        send(s, {"op": "cancel", "id": 1})
        send(s, {"id": 2, "script": str(quick), "argv": [str(quick)], "timeout_s": 30})
        ans = s.read()
        assert (ans["event"], ans["id"], ans["cancelled"], ans["exit_code"]) == ("done", 2, False, 0), ans
        assert int(base64.b64decode(ans["stdout_b64"])) == s.p.pid
        send(s, {"op": "ping"})
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
        send(s, req, {"op": "cancel", "id": 7})
        ans = s.read()
        assert (ans["event"], ans["id"], ans["cancelled"]) == ("done", 7, True), ans
        assert time.monotonic() - t0 < 5
    finally:
        s.close()
