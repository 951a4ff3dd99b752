"""The fork server's answer for a run that closes its pipes before it exits (the harness,
whose exit tears down a CUDA context): answered at the close, reaped before the next fork or
while the client is quiet, and waited for when the server ends. Driven over the server's own
line protocol, light mode (no torch)."""
import json
import os
import subprocess
import sys
import time

from conftest import ROOT, alive, kept_server

SERVER = ROOT / "python" / "hotkernel_forkserver.py"

# Closes stdout and stderr, then takes `delay` seconds to exit with `code` (as a run whose exit is slow).
SLOW_EXIT = """import os, sys, time
print("result", flush=True)
null = os.open(os.devnull, os.O_WRONLY)
os.dup2(null, 1)
os.dup2(null, 2)
time.sleep(float(sys.argv[1]))
os._exit(int(sys.argv[2]))
"""


class Server:
    def __init__(self, tmp_path):
        env = dict(os.environ, HOTKERNEL_FORKSERVER_LIGHT="1")
        env.pop("HOTKERNEL_RESULT_FD", None)
        self.p = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, cwd=str(tmp_path))
        assert self.read()["event"] == "ready"
        self.script = tmp_path / "slow_exit.py"
        self.script.write_text(SLOW_EXIT)
        self.ids = 0

    def read(self):
        line = self.p.stdout.readline()
        assert line, "the fork server ended"
        return json.loads(line)

    def run(self, delay, code, closes_before_exit):
        self.ids += 1
        req = {"id": self.ids, "script": str(self.script), "argv": [str(self.script), str(delay), str(code)],
               "timeout_s": 30, "closes_before_exit": closes_before_exit}
        t0 = time.monotonic()
        self.p.stdin.write((json.dumps(req) + "\n").encode())
        self.p.stdin.flush()
        while True:
            ans = self.read()
            if ans.get("id") == self.ids and ans.get("event") == "done":
                return ans, time.monotonic() - t0

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def gone_within(pid, seconds):
    deadline = time.monotonic() + seconds
    while alive(pid) or os.path.exists("/proc/%d" % pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_run_that_closes_its_pipes_is_answered_before_its_slow_exit(tmp_path):
    s = Server(tmp_path)
    try:
        ans, took = s.run(1.5, 3, closes_before_exit=True)
        assert ans["exiting"] is True and ans["exit_code"] is None, ans
        assert took < 1.0, "answered after %.2f s: it waited for the exit" % took
        first = ans["pid"]
        # The next run starts while the first still exits; the first is reaped later, by the server.
        ans2, _ = s.run(0, 0, closes_before_exit=False)
        assert ans2["exit_code"] == 0 and not ans2["exiting"]
        assert gone_within(first, 5), "the server did not reap the run it answered early"
    finally:
        s.close()


def test_without_the_promise_the_server_waits_for_the_exit_and_its_status(tmp_path):
    s = Server(tmp_path)
    try:
        ans, took = s.run(0.6, 3, closes_before_exit=False)
        assert ans["exiting"] is False and ans["exit_code"] == 3 and took >= 0.6
    finally:
        s.close()


def test_the_server_waits_for_an_exiting_run_before_it_ends(tmp_path):
    s = Server(tmp_path)
    try:
        ans, _ = s.run(1.0, 0, closes_before_exit=True)
        pid = ans["pid"]
        s.p.stdin.write(b'{"op": "quit"}\n')
        s.p.stdin.flush()
        s.p.wait(timeout=10)
        assert not os.path.exists("/proc/%d" % pid), "the server ended and left its exiting run behind"
    finally:
        s.close()


def test_what_an_exiting_run_left_is_killed_before_the_answer(tmp_path):
    # A daemon in a session of its own, started by the run: answered early, it must not live on
    # beside the next run (tests/adversarial/cheats/slow_the_baseline.py does this to slow the baseline).
    s = Server(tmp_path)
    pidfile = tmp_path / "daemon.pid"
    s.script.write_text("import subprocess, pathlib\n"
                        "p = subprocess.Popen(['sleep', '300'], start_new_session=True, stdout=subprocess.DEVNULL,\n"
                        "                     stderr=subprocess.DEVNULL)\n"
                        "pathlib.Path(%r).write_text(str(p.pid))\n" % str(pidfile) + SLOW_EXIT)
    try:
        ans, _ = s.run(1.0, 0, closes_before_exit=True)
        assert ans["exiting"] is True
        daemon = int(pidfile.read_text())
        deadline = time.monotonic() + 1.0  # SIGKILL was sent before the answer; its delivery takes a moment
        while alive(daemon) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not alive(daemon), "the run's daemon outlived the answer"
        assert any(("pid %d:" % daemon) in st and "sleep" in st for st in ans.get("strays", [])), ans.get("strays")
    finally:
        s.close()


def zombies_of(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d, "rb") as f:  # bytes: a name need not be UTF-8
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == b"Z" and int(fields[1]) == pid:
                out.append(int(d))
    return out


def test_a_kept_server_reaps_what_an_exiting_run_left(tmp_path):
    # Kept mode: the server is its runs' subreaper, so what a run left comes back to it when the run
    # exits (after the answer). It must not stay behind as zombies until some later run.
    import socket
    script = tmp_path / "leaves_two.py"
    script.write_text("import subprocess\n"
                      "for _ in range(2):\n"
                      "    subprocess.Popen(['sleep', '300'], start_new_session=True, stdout=subprocess.DEVNULL,\n"
                      "                     stderr=subprocess.DEVNULL)\n" + SLOW_EXIT)
    with kept_server(tmp_path) as (server, sock_path):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(sock_path))
        f = conn.makefile("rwb")
        assert json.loads(f.readline())["event"] == "ready"
        req = {"id": 1, "script": str(script), "argv": [str(script), "0.5", "0"], "timeout_s": 30,
               "closes_before_exit": True}
        f.write((json.dumps(req) + "\n").encode())
        f.flush()
        ans = json.loads(f.readline())
        assert ans["event"] == "done" and ans["exiting"] is True, ans
        assert sum("sleep" in st for st in ans["strays"]) == 2, ans["strays"]
        # "No zombie now" is not "reaped": the run may still be dying. Wait until the run and what it
        # left are gone from /proc (a zombie keeps its entry there), which only the server's reaping does.
        left = [ans["pid"]] + [int(st.split(":", 1)[0].split()[1]) for st in ans["strays"]]
        deadline = time.monotonic() + 5
        while any(os.path.exists("/proc/%d" % p) for p in left) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not zombies_of(server.pid), "the kept server left zombies of its last run"
        assert not [p for p in left if os.path.exists("/proc/%d" % p)], "the kept server did not reap its last run"
        f.write(b'{"op": "quit"}\n')
        f.flush()
        server.wait(timeout=10)


def test_the_server_answers_the_recorded_request_as_recorded(tmp_path):
    # The transcript the C++ codec is tested against (tests/unit/fork_protocol_test.cpp): the
    # server must read that request and answer with the same fields and the same bytes.
    import base64
    lines = [json.loads(x) for x in (ROOT / "tests" / "fixtures" / "fork_protocol" / "transcript.jsonl")
             .read_text().splitlines() if x.strip()]
    recorded_dir = "/tmp/hk-fork-transcript"
    req = json.loads(json.dumps(lines[0]["line"]).replace(recorded_dir, str(tmp_path)))
    want = lines[1]["line"]
    (tmp_path / "echo.py").write_text(
        "import os, sys\n"
        "data = sys.stdin.read()\n"
        "print(\"out:\" + data + \":\" + \" \".join(sys.argv[1:]))\n"
        "sys.stderr.write(\"err\\xff\")\n"
        "os.write(int(os.environ[\"HOTKERNEL_RESULT_FD\"]), b\"chan\\n\")\n"
        "sys.exit(3)\n")
    s = Server(tmp_path)
    try:
        s.p.stdin.write((json.dumps(req) + "\n").encode())
        s.p.stdin.flush()
        while True:
            ans = s.read()
            if ans.get("event") == "done":
                break
    finally:
        s.close()
    assert set(ans) == set(want)
    for k in ("id", "exiting", "exit_code", "signal", "timed_out", "stdout_truncated", "stderr_truncated"):
        assert ans[k] == want[k], k
    for k in ("stdout_b64", "stderr_b64", "channel_b64"):
        assert base64.b64decode(ans[k]) == base64.b64decode(want[k]).replace(recorded_dir.encode(), str(tmp_path).encode()), k


def test_the_server_answers_the_recorded_exchanges_with_the_recorded_fields(tmp_path):
    # The rest of the transcript: the ready line, a bad request line refused, a ping answered.
    lines = [json.loads(x) for x in (ROOT / "tests" / "fixtures" / "fork_protocol" / "transcript.jsonl")
             .read_text().splitlines() if x.strip()]
    ready = next(x["line"] for x in lines[2:] if x["to"] == "client" and x["line"]["event"] == "ready")
    exchanges = []
    rest = lines[2:]
    for i, x in enumerate(rest):
        if x["to"] == "server":
            exchanges.append((x.get("raw") or json.dumps(x["line"]), rest[i + 1]["line"]))
    assert len(exchanges) == 2
    s = Server.__new__(Server)
    env = dict(os.environ, HOTKERNEL_FORKSERVER_LIGHT="1")
    env.pop("HOTKERNEL_RESULT_FD", None)
    s.p = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, env=env, cwd=str(tmp_path))
    try:
        got = s.read()
        assert set(got) == set(ready) and got["event"] == "ready" and got["forkable"] == ready["forkable"]
        for sent, want in exchanges:
            s.p.stdin.write((sent + "\n").encode())
            s.p.stdin.flush()
            assert s.read() == want
    finally:
        s.close()


def test_the_next_run_waits_for_an_exiting_run_before_it_times_anything():
    # A run's exit overlaps the next run's start, not its samples: a run that made its exit take
    # seconds of kernel time (a memfd mapped many times, torn down after the server's kill) had it
    # land in the next run's samples. The server hands the next run a pidfd of each run still
    # exiting; its harness waits on them before its first timed sample.
    sys.path.insert(0, str(ROOT / "python"))
    import hotkernel_forkserver as fs
    import hotkernel_harness as h
    exiting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.8)"])
    try:
        fs._EXITING.clear()
        fs._EXITING[exiting.pid] = time.time() + 10
        env = {}
        fs._hand_over_exiting(env, harness=False)  # a script that is not a harness gets no pidfd
        assert "HOTKERNEL_WAIT_PIDFDS" not in env
        fs._hand_over_exiting(env, harness=True)
        os.environ["HOTKERNEL_WAIT_PIDFDS"] = env["HOTKERNEL_WAIT_PIDFDS"]
        fds = h._wait_pidfds()
        assert len(fds) == 1
        waited = h._previous_runs_gone(fds)
        assert 0.4 <= waited < 5, waited
        assert exiting.poll() is not None  # it has exited (a zombie until reaped)
        fs._EXITING.clear()
        fs._hand_over_exiting(env, harness=True)  # none exiting: nothing to wait on
        assert "HOTKERNEL_WAIT_PIDFDS" not in env
        assert h._previous_runs_gone([]) == 0.0
    finally:
        os.environ.pop("HOTKERNEL_WAIT_PIDFDS", None)
        fs._EXITING.clear()
        exiting.kill()
        exiting.wait()
