# Cheats whose harm outlives their own verify: what they write or do must not reach a later
# verify of an honest, untouched pair, nor anything outside the run. Each verify runs with HOME,
# PYTHONUSERBASE and XDG_CACHE_HOME (hotkernel's cache) under the test's tmp_path, and no kept
# fork server (each verify starts fresh interpreters, which is what these cheats feed on).
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

# A later honest verify whose baseline reads this much slower than its candidate was reached.
REACHED_RATIO = 2.0


@pytest.fixture
def pair(tmp_path):
    """(python, folder, baseline, env) for one test: a fresh target and home, so a cheat that
    rewrites the target or plants files affects nothing else."""
    py = harness.torch_python()
    if py is None:
        pytest.skip("no interpreter with torch: set HOTKERNEL_TORCH_PYTHON")
    if not os.path.exists(harness.binary()):
        pytest.skip("no hotkernel binary at %s (set HOTKERNEL_BIN)" % harness.binary())
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PYTHONUSERBASE": str(home / ".local"), "XDG_CACHE_HOME": str(home / ".cache"),
           "HOTKERNEL_CACHE_BYTES": str(1 << 20), "HOTKERNEL_KEEP_WARM_S": "0"}
    out = tmp_path / "gelu"
    out.mkdir()
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # harness.scaffold runs `hotkernel new` with os.environ
    try:
        base = harness.scaffold(out, py, device="cpu", shape="128x128", iters=48, samples=3, warmup_s=0.1)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return py, out, base, env


def _verify(pair, body):
    py, out, base, env = pair
    cand = harness.make_candidate(out, body, base)
    return harness.verify(py, base, cand, n=2, warmup=0, timeout_s=300, env=env)


def _honest_verify_unreached(pair):
    """A later verify of the untouched pair: it runs, and is no clean `faster` by REACHED_RATIO
    (the ratio alone is not enough: two pairs of a tiny CPU gelu on a loaded 2-core machine were
    seen at 1.8x, called inconclusive, and at 1.56x called faster, and one at 2.06x over its means;
    what the cheats plant makes every baseline run 3x slower, so the fastest runs carry it too)."""
    rc, res, err = _verify(pair, harness.HONEST / "blank.py")
    assert res is not None, "the later honest verify failed (%d): %s" % (rc, err[-1500:])
    ratio = res["baseline"]["mean_ms"] / res["candidate"]["mean_ms"]
    fastest = harness.fastest_run_ratio(res)
    assert not (res.get("verdict") == "faster" and ratio >= REACHED_RATIO and (fastest or 0) >= REACHED_RATIO), (
        "a later honest verify read the baseline %.2fx slower, %.2fx over the fastest runs (verdict %s): %s"
        % (ratio, fastest or 0, res.get("verdict"), harness._runs_text(res)))


def _hotkernels_record(root, rel, data):
    """Whether a file is one hotkernel itself writes beside a script: a verify's full record under
    .hotkernel/runs/ (it names itself in full_record) or that folder's .gitignore."""
    if rel == ".hotkernel/.gitignore":
        return data.startswith(b"# hotkernel's full records")
    if not (rel.startswith(".hotkernel/runs/") and rel.endswith(".json")):
        return False
    try:
        return json.loads(data).get("full_record") == str((Path(root) / rel).resolve())
    except ValueError:
        return False


def _files(root):
    """Every file under root (but bytecode caches of hotkernel's own imports, and the full records
    hotkernel writes beside a script): path -> bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for f in filenames:
            p = Path(dirpath) / f
            rel, data = str(p.relative_to(root)), p.read_bytes()
            if not _hotkernels_record(root, rel, data):
                out[rel] = data
    return out


def test_user_site_pth_does_not_outlive_the_verify(pair):
    _verify(pair, harness.CHEATS / "user_site_pth.py")  # its own verify may end any way
    planted = list(Path(pair[3]["PYTHONUSERBASE"]).rglob("*.pth"))
    assert not planted, "the candidate wrote start-up files into the user site: %s" % planted
    _honest_verify_unreached(pair)


def test_baseline_file_is_not_rewritten(pair):
    py, out, base, env = pair
    before = _files(out)
    _verify(pair, harness.CHEATS / "rewrite_baseline.py")
    after = _files(out)
    cand = "rewrite_baseline_cand.py"
    assert after.get(base.name) == before[base.name], "the candidate rewrote the baseline's file"
    assert sorted(set(after) - {cand}) == sorted(before), "files planted in the target's folder: %s" % sorted(
        set(after) - set(before) - {cand})
    _honest_verify_unreached(pair)


def test_hotkernel_cache_is_not_planted(pair):
    cache = Path(pair[3]["XDG_CACHE_HOME"]) / "hotkernel"
    _verify(pair, harness.HONEST / "blank.py")  # hotkernel writes its runner there
    before = {k: v for k, v in _files(cache).items() if k.startswith("py-")}
    assert before, "no cached runner under %s" % cache
    _verify(pair, harness.CHEATS / "poison_hotkernel_cache.py")
    after = {k: v for k, v in _files(cache).items() if k.startswith("py-")}
    assert sorted(after) == sorted(before), "files planted in hotkernel's cache: %s" % sorted(set(after) - set(before))
    assert after == before, "hotkernel's cached runner was rewritten"
    _honest_verify_unreached(pair)


def _state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def test_signals_do_not_reach_processes_outside_the_run(pair):
    # The stand-in for a baseline's runner or another user's job: nothing of the run's own.
    sentinel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "hotkernel-sentinel"],
                                start_new_session=True)
    try:
        time.sleep(0.2)
        _verify(pair, harness.CHEATS / "signal_outside.py")
        assert sentinel.poll() is None, "the candidate killed a process outside its run"
        assert _state(sentinel.pid) != "T", "the candidate stopped a process outside its run"
    finally:
        os.kill(sentinel.pid, signal.SIGCONT)
        sentinel.kill()
        sentinel.wait()


def _fork_servers_under(home):
    """pids of the kept fork servers whose hotkernel cache is under `home` (this test's own)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if "hotkernel_forkserver.py" in cmd and str(home) in cmd:
            pids.append(int(d))
    return pids


def _shm_segments():
    """The SysV shared memory segments that exist now: id -> size."""
    with open("/proc/sysvipc/shm") as f:
        rows = [line.split() for line in f.read().splitlines()[1:]]
    return {int(r[1]): int(r[3]) for r in rows if len(r) > 3}


def test_sysv_shared_memory_does_not_outlive_the_run(pair):
    # A segment outlives every process (Landlock does not cover SysV IPC): what a run made is
    # removed after it, and the result says so.
    before = _shm_segments()
    rc, res, err = _verify(pair, harness.CHEATS / "sysv_shared_memory_left.py")
    left = {i: size for i, size in _shm_segments().items() if i not in before and size == 64 << 20}
    assert not left, "segments the runs made survived the verify: %s" % left
    assert res is not None, err[-1500:]
    assert "stray_shared_memory" in [w["id"] for w in res["warnings"]], res["warnings"]
    removed = [x for r in res["runs"] for x in r.get("shared_memory_removed", [])]
    assert removed and all("67108864 bytes" in x for x in removed), removed


def _semaphore_keys():
    """The keys of the SysV semaphore sets that exist now."""
    with open("/proc/sysvipc/sem") as f:
        return {int(r[0]) for r in (line.split() for line in f.read().splitlines()[1:]) if r}


def test_no_sysv_semaphore_outlives_the_run(pair):
    # A semaphore names no maker, so no sweep could tell a run's from another's: a run cannot make
    # one (the sandbox's seccomp filter), and the honest gelu it wraps verifies clean.
    key = 0x686B7331  # the cheat's KEY
    assert key not in _semaphore_keys(), "a semaphore under the cheat's key exists before the verify"
    rc, res, err = _verify(pair, harness.CHEATS / "sysv_semaphore_counter.py")
    made = key in _semaphore_keys()
    if made:  # leave the machine as it was, then fail
        subprocess.run(["ipcrm", "-S", str(key)], capture_output=True)
    assert not made, "a run made a SysV semaphore that outlived the verify"
    assert res is not None, err[-1500:]
    assert all((r.get("sandbox") or {}).get("sysv_ipc") == "semaphores and message queues denied"
               for r in res["runs"]), [r.get("sandbox") for r in res["runs"]]
    assert res["verdict"] not in ("incorrect", "invalid"), res["reasons"]


def test_a_fork_servers_scheduling_changed_by_a_run_is_put_back_and_the_run_voided(pair):
    # With a kept fork server (what every later verify forks from), the candidate lowers its parent's
    # scheduling; that run is invalid, and the server runs every later fork as it started.
    py, out, base, env = pair
    env = dict(env, HOTKERNEL_KEEP_WARM_S="60")
    cand = harness.make_candidate(out, harness.CHEATS / "sched_idle_fork_server.py", base)
    try:
        rc, res, err = harness.verify(py, base, cand, n=2, warmup=0, timeout_s=300, env=env)
        assert res is not None, err[-1500:]
        dropped = [r for r in res["runs"] if (r.get("sandbox") or {}).get("capabilities") == "dropped"]
        if res["verdict"] != "invalid" and dropped:
            # A run as root holds no capability, and the kernel refuses it a change to a process
            # that holds some (cap_safe_nice): the fork server's scheduling was never changed
            # (checked below), and the verify is an A/A one, whose verdict chance decides.
            assert not any("scheduling" in r for r in res["reasons"]), res["reasons"]
        else:
            assert res["verdict"] == "invalid", res["reasons"]
            assert any("fork server's scheduling" in r or "own scheduling" in r for r in res["reasons"]), res["reasons"]
        servers = _fork_servers_under(env["XDG_CACHE_HOME"])
        for pid in servers:
            assert os.sched_getscheduler(pid) == os.SCHED_OTHER, "the kept fork server %d stayed under another policy" % pid
            assert os.getpriority(os.PRIO_PROCESS, pid) == 0, "the kept fork server %d kept its nice value" % pid
    finally:
        for pid in _fork_servers_under(env["XDG_CACHE_HOME"]):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_a_fork_servers_autogroup_changed_by_a_run_is_put_back_and_the_run_voided(pair):
    # The run shares its session's autogroup with the kept fork server, and may write its own
    # /proc entries (cuInit needs them): it sets that autogroup to nice 19. The run is invalid,
    # and the server's autogroup is as it was for every later fork.
    if not os.path.exists("/proc/self/autogroup"):
        pytest.skip("this kernel has no autogroups (CONFIG_SCHED_AUTOGROUP)")
    py, out, base, env = pair
    env = dict(env, HOTKERNEL_KEEP_WARM_S="60")
    cand = harness.make_candidate(out, harness.CHEATS / "autogroup_nice.py", base)
    try:
        rc, res, err = harness.verify(py, base, cand, n=2, warmup=0, timeout_s=300, env=env)
        assert res is not None, err[-1500:]
        assert res["verdict"] == "invalid", res["reasons"]
        assert any("autogroup nice 19" in r for r in res["reasons"]), res["reasons"]
        servers = _fork_servers_under(env["XDG_CACHE_HOME"])
        assert servers, "no kept fork server was found"
        for pid in servers:
            with open("/proc/%d/autogroup" % pid) as f:
                assert f.read().split()[-1] == "0", "the kept fork server %d kept its autogroup's nice value" % pid
    finally:
        for pid in _fork_servers_under(env["XDG_CACHE_HOME"]):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
