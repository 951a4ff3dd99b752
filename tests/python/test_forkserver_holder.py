"""The fork server's GPU holder (_hold_gpu): a child that keeps the CUDA driver initialised so each
run's cuInit is short. It must never be taken for a run's stray, never be reachable through a
run's descriptors, and die with the server. Driven over the server's line protocol, light mode
with HOTKERNEL_HOLD_GPU=1 (on a machine without a driver its cuInit fails and it waits all the
same: the same process rules)."""
import json
import os
import signal
import subprocess
import sys
import time

from conftest import ROOT, alive

SERVER = ROOT / "python" / "hotkernel_forkserver.py"

# Prints what each of its descriptors is (pipe:[inode], /dev/null, ...).
FDS = """import json, os
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink("/proc/self/fd/" + fd)
    except OSError:
        pass
print(json.dumps(fds), flush=True)
"""


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError):
                continue
    return out


def start(tmp_path, hold):
    env = dict(os.environ, HOTKERNEL_FORKSERVER_LIGHT="1", HOTKERNEL_HOLD_GPU=hold)
    env.pop("HOTKERNEL_RESULT_FD", None)
    p = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, cwd=str(tmp_path))
    ready = json.loads(p.stdout.readline())
    assert ready["event"] == "ready"
    return p, ready


def run(p, script, run_id):
    req = {"id": run_id, "script": str(script), "argv": [str(script)], "timeout_s": 30}
    p.stdin.write((json.dumps(req) + "\n").encode())
    p.stdin.flush()
    while True:
        ans = json.loads(p.stdout.readline())
        if ans.get("id") == run_id and ans.get("event") == "done":
            return ans


def test_the_holder_outlives_runs_unseen_and_dies_with_the_server(tmp_path):
    import base64

    script = tmp_path / "fds.py"
    script.write_text(FDS)
    p, ready = start(tmp_path, "1")
    try:
        assert ready["gpu_held"] is True
        kids = children(p.pid)
        assert len(kids) == 1, kids  # the holder, before any run
        holder = kids[0]
        deadline = time.monotonic() + 10
        while True:  # the holder closes what it inherited right after the fork
            held = set()
            for fd in os.listdir("/proc/%d/fd" % holder):
                try:
                    held.add(os.readlink("/proc/%d/fd/%s" % (holder, fd)))
                except OSError:
                    pass
            pipes = {x for x in held if x.startswith("pipe:")}
            if len(pipes) <= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert len(pipes) == 1, held  # its end of the server's pipe; nothing of the server's protocol
        for i in (1, 2):
            ans = run(p, script, i)
            assert ans["exit_code"] == 0 and not ans.get("strays"), ans  # not a stray of the run
            fds = json.loads(base64.b64decode(ans["stdout_b64"]).decode())
            assert not pipes & set(fds.values()), fds  # the run cannot reach the holder's pipe
            assert alive(holder)
        p.kill()
        p.wait()
        deadline = time.monotonic() + 10
        while alive(holder) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(holder), "the holder outlived its server"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_no_holder_when_asked_for_none(tmp_path):
    p, ready = start(tmp_path, "0")
    try:
        assert ready["gpu_held"] is False
        assert children(p.pid) == []
    finally:
        p.kill()
        p.wait()
