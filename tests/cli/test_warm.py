"""The warm fork server end to end: bench/verify runs forked from a warm interpreter give what
fresh processes give, --no-warm is honoured and said, an unforkable server falls back and says
why, a hanging forked run is killed at its timeout and named, and no child outlives hotkernel.

Most tests use the interpreter running pytest (no torch needed: the server then imports only
the standard library); one uses Debian's /usr/bin/python3, whose torch the server pre-imports.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from cli_support import McpSession

BIN = os.path.abspath(os.environ.get("HOTKERNEL_BIN", "build/hotkernel"))
PY = sys.executable

# Prints what a script can see of how it was started; a forked run must see the same.
PROBE = """\
import json, os, sys
MARK = 7
seen = {"argv": sys.argv[1:], "name": __name__, "path0": sys.path[0], "cwd": os.getcwd(),
        "file": os.path.basename(__file__), "role": os.environ.get("HOTKERNEL_ROLE"),
        "index": os.environ.get("HOTKERNEL_RUN_INDEX"), "warmup": os.environ.get("HOTKERNEL_WARMUP"),
        "stdin": sys.stdin.read(), "main_is_this": sys.modules["__main__"].__dict__.get("MARK") == 7}
# ms depends on everything seen, so any difference between warm and fresh changes the samples.
ms = 1.0 + (sum(map(ord, json.dumps(seen, sort_keys=True))) % 997) / 1e4
print(json.dumps({"ms": ms, "ok": True, "seed": 0, "seen": seen}))
"""


def hk(*args, env=None, timeout=120, python=PY, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BIN, "--python", python, *args, "--json"], capture_output=True, text=True, env=e,
                          timeout=timeout, cwd=cwd)


def write(dirpath, name, text):
    p = Path(dirpath) / name
    p.write_text(text)
    return str(p)


def procs_with_tag(tag):
    """Pids of live processes whose environment carries HK_WARM_TAG=tag."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
            state = (d / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if ("HK_WARM_TAG=" + tag).encode() in env.split(b"\0") and state != "Z":
            found.append(int(d.name))
    return found


def test_warm_and_fresh_runs_give_the_same_results(tmp_path):
    script = write(tmp_path, "probe.py", PROBE)
    warm = hk("bench", script, "--n", "3", "--args", "--size,4 k", cwd=tmp_path)
    fresh = hk("bench", script, "--n", "3", "--args", "--size,4 k", "--no-warm", cwd=tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert fresh.returncode == 0, fresh.stderr
    w, f = json.loads(warm.stdout), json.loads(fresh.stdout)
    assert w["launcher"] == "warm-fork", w.get("launcher_reason")
    assert f["launcher"] == "fresh-process"
    assert w["samples_ms"] == f["samples_ms"]
    assert [r["line"]["seen"] for r in w["runs"]] == [r["line"]["seen"] for r in f["runs"]]
    seen = w["runs"][1]["line"]["seen"]
    assert seen["argv"] == ["--size", "4 k"] and seen["name"] == "__main__" and seen["main_is_this"]
    assert seen["path0"] == os.path.realpath(tmp_path) and seen["index"] == "2" and seen["role"] == "bench"
    assert w["command"] == f["command"]  # the record names the same command either way
    assert "forked" in w["launcher_reason"]


def test_no_warm_is_honoured_and_said(tmp_path):
    script = write(tmp_path, "probe.py", PROBE)
    tag = uuid.uuid4().hex
    r = hk("bench", script, "--n", "2", "--no-warm", env={"HK_WARM_TAG": tag})
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["launcher"] == "fresh-process"
    assert "--no-warm" in res["launcher_reason"]
    assert not procs_with_tag(tag)


def test_verify_runs_warm_and_says_so(tmp_path):
    a = write(tmp_path, "a.py", PROBE)
    b = write(tmp_path, "b.py", PROBE)
    r = hk("verify", a, b, "--n", "3", "--warmup", "0")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    text = json.dumps(res)
    assert '"launcher": "warm-fork"' in text, text[:2000]
    assert "launcher_reason" in text
    r2 = hk("verify", a, b, "--n", "3", "--warmup", "0", "--no-warm")
    assert r2.returncode == 0, r2.stderr
    assert '"launcher": "fresh-process"' in r2.stdout


def test_an_unforkable_server_falls_back_and_says_why(tmp_path):
    # A preloaded module that leaves a thread running makes forking unsafe.
    write(tmp_path, "hk_bg_thread.py", "import threading, time\n"
                                       "threading.Thread(target=time.sleep, args=(600,), daemon=True, name='bg').start()\n")
    script = write(tmp_path, "probe.py", PROBE)
    r = hk("bench", script, "--n", "2",
           env={"HOTKERNEL_FORKSERVER_PRELOAD": "hk_bg_thread", "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["launcher"] == "fresh-process"
    assert "fell back" in res["launcher_reason"] and "thread" in res["launcher_reason"], res["launcher_reason"]
    assert res["samples_ms"] == json.loads(hk("bench", script, "--n", "2", "--no-warm").stdout)["samples_ms"]


def test_a_hanging_forked_run_is_killed_at_its_timeout_and_named(tmp_path):
    marker = tmp_path / "grandchild-survived"
    script = write(tmp_path, "hang.py", "import subprocess, time\nprint('started', flush=True)\n"
                                        "subprocess.Popen(['sh', '-c', 'sleep 4; touch %s'])\ntime.sleep(300)\n" % marker)
    t0 = time.time()
    r = hk("bench", script, "--n", "2", "--timeout-s", "2", timeout=60)
    took = time.time() - t0
    assert r.returncode == 1
    assert "run 1 of 2" in r.stderr and "timed out" in r.stderr, r.stderr
    assert took < 20, took
    time.sleep(4.5)
    assert not marker.exists(), "a grandchild of the timed-out run survived"


def kept_env(tmp_path, keep_s, tag=None):
    """Environment for a kept fork server of its own: a private socket folder (short: a Unix
    socket's path has at most 107 bytes), an idle limit."""
    xdg = Path(tempfile.mkdtemp(prefix="hkx"))
    (tmp_path / "xdg").symlink_to(xdg)
    env = {"XDG_RUNTIME_DIR": str(xdg), "HOTKERNEL_KEEP_WARM_S": str(keep_s)}
    if tag:
        env["HK_WARM_TAG"] = tag
    return env


def cmdline(pid):
    try:
        return Path("/proc/%d/cmdline" % pid).read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"


def is_server(pid):
    try:
        return b"hotkernel_forkserver.py" in Path("/proc/%d/cmdline" % pid).read_bytes()
    except OSError:
        return False


def kill_tagged(tag):
    for pid in procs_with_tag(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def tool_caller(session):
    """call(tool, args) -> the structuredContent of an MCP tool call that must succeed (bench and
    verify with detail=full: these tests read the runs and the launcher's record)."""
    def call(tool, args):
        if tool in ("bench", "verify"):
            args = {**args, "detail": "full"}
        res = session.call(tool, args)
        assert not res.get("isError"), res
        return res["structuredContent"]
    return call


def procs_left(tag, seconds):
    """The tagged processes still alive after waiting up to `seconds` for them to go."""
    deadline = time.monotonic() + seconds
    while procs_with_tag(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    return procs_with_tag(tag)


@pytest.mark.parametrize("keep_s", ["0", "30"])
def test_fork_server_children_do_not_outlive_hotkernel(tmp_path, keep_s):
    # Runs never outlive hotkernel; a kept server (HOTKERNEL_KEEP_WARM_S > 0) alone stays, idle.
    tag = uuid.uuid4().hex
    started = tmp_path / "started"
    script = write(tmp_path, "sleepy.py", "import pathlib, subprocess, time\n"
                                          "subprocess.Popen(['sleep', '300'])\n"
                                          "pathlib.Path(%r).write_text('x')\ntime.sleep(300)\n" % str(started))
    p = subprocess.Popen([BIN, "--python", PY, "bench", script, "--n", "1", "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=dict(os.environ, **kept_env(tmp_path, keep_s, tag)))
    try:
        for _ in range(300):
            if started.exists():
                break
            time.sleep(0.05)
        assert started.exists(), "the run never started"
        tagged = procs_with_tag(tag)
        assert len(tagged) >= 3, [cmdline(pid) for pid in tagged]  # hotkernel, the server, its child (+ the sleep)
        p.kill()  # no clean-up code runs in hotkernel: the server must notice by itself
        p.wait(10)
        left = [pid for pid in procs_with_tag(tag) if not (keep_s != "0" and is_server(pid))]
        for _ in range(100):
            if not left:
                break
            time.sleep(0.05)
            left = [pid for pid in procs_with_tag(tag) if not (keep_s != "0" and is_server(pid))]
        assert not left, "processes outlived hotkernel: %s" % left
        if keep_s != "0":
            assert [pid for pid in procs_with_tag(tag) if is_server(pid)], "the kept server should still be up"
    finally:
        if p.poll() is None:
            p.kill()
        kill_tagged(tag)


@pytest.mark.parametrize("keep_s", ["0", "ten"])
def test_normal_end_leaves_no_fork_server_unless_kept(tmp_path, keep_s):
    tag = uuid.uuid4().hex
    script = write(tmp_path, "probe.py", PROBE)
    r = hk("bench", script, "--n", "2", env=kept_env(tmp_path, keep_s, tag))
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["launcher"] == "warm-fork" and res["fork_server"]["kept"] is False
    assert not procs_with_tag(tag)
    # A value that is not a number is said, not silently read as "off".
    assert ("is not a number of seconds" in res["launcher_reason"]) == (keep_s == "ten"), res["launcher_reason"]


def test_a_kept_server_serves_the_next_hotkernel_and_ends_when_idle(tmp_path):
    # The second bench forks from the server the first one left: nothing imported again, and
    # what the second caller's environment says reaches its runs. Idle past the limit, it ends
    # and removes its socket.
    tag = uuid.uuid4().hex
    script = write(tmp_path, "env.py", "import json, os\n"
                                       "print(json.dumps({'ms': 1.0, 'ok': True, 'mark': os.environ.get('HK_MARK')}))\n")
    env = kept_env(tmp_path, 3, tag)
    try:
        first = hk("bench", script, "--n", "2", env=dict(env, HK_MARK="one"), cwd=tmp_path)
        second = hk("bench", script, "--n", "2", env=dict(env, HK_MARK="two"), cwd=tmp_path)
        assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
        a, b = json.loads(first.stdout), json.loads(second.stdout)
        assert a["fork_server"]["kept"] and not a["fork_server"]["reused"], a["launcher_reason"]
        assert "kept for the next bench/verify" in a["launcher_reason"]
        assert b["fork_server"]["kept"] and b["fork_server"]["reused"], b["launcher_reason"]
        assert "kept fork server" in b["launcher_reason"] and b["fork_server"]["age_s"] > 0
        assert [r["line"]["mark"] for r in a["runs"]] == ["one", "one"]
        assert [r["line"]["mark"] for r in b["runs"]] == ["two", "two"]
        socks = list((tmp_path / "xdg" / "hotkernel").glob("fs-*.sock"))
        assert len(socks) == 1 and oct(socks[0].stat().st_mode & 0o777) == "0o600"
        servers = [pid for pid in procs_with_tag(tag) if is_server(pid)]
        assert len(servers) == 1, servers
        deadline = time.monotonic() + 15
        while procs_with_tag(tag) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not procs_with_tag(tag), "the kept server did not end after its idle limit"
        assert not socks[0].exists()
    finally:
        kill_tagged(tag)


def test_a_busy_kept_server_is_not_shared(tmp_path):
    # Two benches at once: one gets the kept server, the other a private one, and says why.
    tag = uuid.uuid4().hex
    script = write(tmp_path, "slow.py", "import json, time\ntime.sleep(1.5)\nprint(json.dumps({'ms': 1.0, 'ok': True}))\n")
    env = dict(os.environ, **kept_env(tmp_path, 5, tag))
    cmd = [BIN, "--python", PY, "bench", script, "--n", "2", "--json"]
    try:
        ps = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
              for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in ps]
        assert all(p.returncode == 0 for p in ps), [o[1] for o in outs]
        res = [json.loads(o[0]) for o in outs]
        kept = [r["fork_server"]["kept"] for r in res]
        assert sorted(kept) == [False, True], [r["launcher_reason"] for r in res]
        private = res[kept.index(False)]
        assert "another hotkernel is using the kept fork server" in private["launcher_reason"]
    finally:
        kill_tagged(tag)


def test_a_kept_server_kills_and_reports_what_a_run_leaves_behind(tmp_path):
    # A run that starts a setsid'd sleeper: the kept server is its subreaper, kills it after the
    # run, and the result names it (as hotkernel's own sweep does for private servers).
    tag = uuid.uuid4().hex
    script = write(tmp_path, "leak.py", "import json, subprocess\n"
                                        "subprocess.Popen(['sleep', '301'], start_new_session=True)\n"
                                        "print(json.dumps({'ms': 1.0, 'ok': True}))\n")
    try:
        r = hk("bench", script, "--n", "1", env=kept_env(tmp_path, 5, tag))
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout)
        assert res["fork_server"]["kept"], res["launcher_reason"]
        killed = res["runs"][0].get("strays_killed", [])
        assert any("sleep 301" in k for k in killed), res["runs"][0]
        assert not [pid for pid in procs_with_tag(tag) if not is_server(pid)]
    finally:
        kill_tagged(tag)


def test_the_server_preimports_torch_without_initialising_cuda(tmp_path):
    script = write(tmp_path, "t.py", "import sys\npre = 'torch' in sys.modules\nimport json, torch\n"
                                     "print(json.dumps({'ms': float(torch.ones(3).sum()), 'ok': True,"
                                     " 'cuda_init': torch.cuda.is_initialized(), 'torch_before_script': pre}))\n")
    r = hk("bench", script, "--n", "3", python="/usr/bin/python3")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["launcher"] == "warm-fork", res["launcher_reason"]
    assert "torch 1.13" in res["launcher_reason"]
    assert res["samples_ms"] == [3.0, 3.0, 3.0]
    # Every run is forked from the server with torch imported already (its import is not paid
    # again), and none finds CUDA initialised.
    lines = [r["line"] for r in res["runs"]]
    assert all(ln["torch_before_script"] for ln in lines), lines
    assert not any(ln["cuda_init"] for ln in lines), lines


def test_an_mcp_session_keeps_its_fork_server_between_calls_and_ends_it_with_the_session(tmp_path):
    # The second bench of the session forks from the server the first one started (torch already
    # imported): no import cost, and the server is gone once the client closes the session.
    tag = uuid.uuid4().hex
    script = write(tmp_path, "t.py", "import sys\npre = 'torch' in sys.modules\nimport json, torch\n"
                                     "print(json.dumps({'ms': 1.0, 'ok': True, 'torch_before_script': pre}))\n")
    session = McpSession("--python", "/usr/bin/python3", env={"HK_WARM_TAG": tag}, timeout=120)

    call = tool_caller(session)
    try:
        first = call("bench", {"script": script, "n": 2})
        second = call("bench", {"script": script, "n": 2})
        assert first["launcher"] == second["launcher"] == "warm-fork"
        assert first["fork_server"]["reused"] is False
        assert second["fork_server"]["reused"] is True, second["launcher_reason"]
        assert "pooled from an earlier call" in second["launcher_reason"]
        # No second import of torch: the second call's runs found it imported (by the kept server).
        assert all(r["line"]["torch_before_script"] for r in second["runs"]), second["runs"]
        assert procs_with_tag(tag), "the fork server should be alive between calls"
    finally:
        session.close()
    assert not procs_left(tag, 5), "the fork server outlived the MCP session"


def test_a_kept_server_whose_torch_changed_on_disk_is_replaced(tmp_path):
    # torch reinstalled under a kept server: it stops listening instead of forking runs that would
    # mix old modules in memory with new files; that command gets a private server (and says so),
    # the next one a new kept server.
    tag = uuid.uuid4().hex
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '0.0-fake'\n")
    script = write(tmp_path, "t.py", "import json  # a torch script, as far as the server can tell\n"
                                     "print(json.dumps({'ms': 1.0, 'ok': True}))\n")
    env = dict(kept_env(tmp_path, 30, tag), PYTHONPATH=str(tmp_path / "site"))
    try:
        first = json.loads(hk("bench", script, "--n", "1", env=env).stdout)
        assert first["fork_server"]["kept"] and first["fork_server"]["torch"] == "0.0-fake", first["launcher_reason"]
        time.sleep(0.05)
        (fake / "__init__.py").write_text("__version__ = '0.1-fake'\n")
        r = hk("bench", script, "--n", "1", env=env)
        assert r.returncode == 0, r.stderr
        second = json.loads(r.stdout)
        assert second["launcher"] == "warm-fork" and not second["fork_server"]["kept"], second["launcher_reason"]
        assert "a kept one failed" in second["launcher_reason"]
        assert second["fork_server"]["torch"] == "0.1-fake"
        third = json.loads(hk("bench", script, "--n", "1", env=env).stdout)
        assert third["fork_server"]["kept"] and not third["fork_server"]["reused"], third["launcher_reason"]
        assert third["fork_server"]["torch"] == "0.1-fake"
    finally:
        kill_tagged(tag)


def test_new_starts_the_kept_server_the_next_bench_forks_from(tmp_path):
    # `new` starts the kept fork server (importing torch) for the bench/verify that follow it;
    # the bench forks from that same server. Nothing is started when keeping or warm is off.
    deb = "/usr/bin/python3"
    if subprocess.run([deb, "-c", "import torch"], capture_output=True).returncode != 0:
        pytest.skip("Debian's python3 has no torch here")
    tag = uuid.uuid4().hex
    (tmp_path / "a").mkdir()
    env = kept_env(tmp_path / "a", 30, tag)
    new_args = ("new", "torch.nn.functional:gelu", "--shape", "8x64", "--iters", "5", "--device", "cpu")
    try:
        r = hk(*new_args, "--out-dir", str(tmp_path / "t"), env=env, python=deb)
        assert r.returncode == 0, r.stderr
        fs = json.loads(r.stdout)["fork_server"]
        assert fs["started"] and fs["kept"] and "HOTKERNEL_KEEP_WARM_S" in fs["note"], fs
        servers = [pid for pid in procs_with_tag(tag) if is_server(pid)]
        assert len(servers) == 1, [cmdline(p) for p in procs_with_tag(tag)]  # new has exited; its server has not
        b = hk("bench", str(tmp_path / "t" / "gelu_baseline.py"), "--n", "1", env=env, python=deb)
        assert b.returncode == 0, b.stderr
        res = json.loads(b.stdout)
        assert res["launcher"] == "trusted-runner+warm-fork", res["launcher_reason"]
        assert res["fork_server"]["kept"] and res["fork_server"]["reused"], res["fork_server"]
        assert [pid for pid in procs_with_tag(tag) if is_server(pid)] == servers  # the same one, not a second
        # Another `new` finds it warm and starts nothing.
        r = hk(*new_args, "--out-dir", str(tmp_path / "t2"), env=env, python=deb)
        assert r.returncode == 0, r.stderr
        fs = json.loads(r.stdout)["fork_server"]
        assert not fs["started"] and fs["already_running"] and fs["kept"], fs
        assert [pid for pid in procs_with_tag(tag) if is_server(pid)] == servers
    finally:
        kill_tagged(tag)
    for keep, flag, says in (("0", (), "HOTKERNEL_KEEP_WARM_S=0"), ("30", ("--no-warm",), "--no-warm was given")):
        tag = uuid.uuid4().hex
        sub = tmp_path / ("off-" + keep)
        sub.mkdir()
        try:
            r = hk(*new_args, *flag, "--out-dir", str(sub / "t"), env=kept_env(sub, keep, tag), python=deb)
            assert r.returncode == 0, r.stderr
            fs = json.loads(r.stdout)["fork_server"]
            assert not fs["started"] and says in fs["reason"], fs
            assert not procs_with_tag(tag), [cmdline(p) for p in procs_with_tag(tag)]
        finally:
            kill_tagged(tag)


def test_new_in_an_mcp_session_leaves_the_server_for_the_next_bench(tmp_path):
    # In an MCP session `new` starts the fork server into the session's pool: the bench of the
    # scaffolded baseline forks from it (imports paid during `new`), and it ends with the session.
    tag = uuid.uuid4().hex
    session = McpSession("--python", "/usr/bin/python3", env={"HK_WARM_TAG": tag}, timeout=120)

    call = tool_caller(session)
    try:
        made = call("new", {"from": "torch.nn.functional:gelu", "shape": "8x64", "iters": 5, "device": "cpu",
                            "out_dir": str(tmp_path / "t")})
        assert made["fork_server"]["started"] and made["fork_server"]["pooled"], made["fork_server"]
        res = call("bench", {"script": made["files"]["baseline"], "n": 1})
        assert res["launcher"] == "trusted-runner+warm-fork", res["launcher_reason"]
        assert res["fork_server"]["reused"] is True, res["launcher_reason"]
    finally:
        session.close()
    assert not procs_left(tag, 5), "the fork server outlived the MCP session"


def test_without_a_runtime_dir_the_socket_goes_in_the_cache_folder(tmp_path):
    # No XDG_RUNTIME_DIR: the kept server's socket lives in run/ of hotkernel's cache folder
    # ($XDG_CACHE_HOME/hotkernel, where the embedded Python files go too), private to the user.
    tag = uuid.uuid4().hex
    cache = Path(tempfile.mkdtemp(prefix="hkc"))  # short: a socket path has at most 107 bytes
    script = write(tmp_path, "t.py", "import json\nprint(json.dumps({'ms': 1.0, 'ok': True}))\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), HOTKERNEL_KEEP_WARM_S="30", HK_WARM_TAG=tag)
    env.pop("XDG_RUNTIME_DIR", None)
    try:
        r = subprocess.run([BIN, "--python", PY, "bench", script, "--n", "1", "--json"], capture_output=True,
                           text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["fork_server"]["kept"], r.stdout
        run_dir = cache / "hotkernel" / "run"
        assert len(list(run_dir.glob("fs-*.sock"))) == 1, list(run_dir.iterdir())
        assert oct(run_dir.stat().st_mode & 0o777) == "0o700"
    finally:
        kill_tagged(tag)
        shutil.rmtree(cache, ignore_errors=True)
