# Bad input and faults: scripts that hang, crash, flood stdout or print invalid
# UTF-8; a results/ folder with corrupt files; record into an unwritable or full place; a
# target folder whose vendored contract is stale or edited. Nothing may crash or hang, and
# every error must say which run failed and how.
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("HOTKERNEL_BIN", str(ROOT / "build" / "hotkernel"))
# Plain bench-contract scripts need no torch: any Python runs them.
PY = sys.executable


def hk(*args, timeout=120, cwd=None, env=None):
    """Runs the binary; returns (exit code, stdout, stderr)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, timeout=timeout, cwd=cwd, env=full_env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def write(path, text):
    path.write_text(text)
    return str(path)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie counts as dead: it has exited and only waits to be reaped by its parent.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# ---------------------------------------------------------------- hangs ----

def test_hang_kills_the_whole_process_group_and_names_the_run(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    script = write(tmp_path / "hang.py", f"""
import subprocess, sys, time
# A grandchild that would outlive us if only the direct child were killed.
g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open({str(pidfile)!r}, "w").write(str(g.pid))
print("started", flush=True)
time.sleep(600)
""")
    t0 = time.monotonic()
    rc, out, err = hk("--python", PY, "bench", script, "--n", "3", "--timeout-s", "3", timeout=60)
    elapsed = time.monotonic() - t0
    assert rc == 1, (rc, out, err)
    assert elapsed < 30, f"bench took {elapsed:.1f} s to give up on a 3 s timeout"
    assert "run 1 of 3" in err and "timed out" in err, err
    assert "--timeout-s" in err, "the error should say how to raise the limit (as the CLI spells it): " + err
    gpid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while pid_alive(gpid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = pid_alive(gpid)
    if alive:
        os.kill(gpid, signal.SIGKILL)
    assert not alive, "the grandchild survived the timeout: the process group was not killed"


@pytest.mark.parametrize("warm", ["--warm", "--no-warm"])
def test_a_setsid_process_left_behind_is_killed_after_its_run_and_said(tmp_path, warm):
    # A daemon outside the run's process group (start_new_session = setsid) would live on and
    # could load the machine while the next run is timed: hotkernel, the subreaper, kills it.
    pidfile = tmp_path / "daemon.pid"
    script = write(tmp_path / "leaves_a_daemon.py", """
import json, subprocess, sys
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
open(%r, "w").write(str(p.pid))
print(json.dumps({"ms": 1.0, "ok": True}))
""" % str(pidfile))
    args = ["--json", "bench", script, "--n", "1", "--python", PY]
    if warm == "--no-warm":
        args.append("--no-warm")
    code, out, err = hk(*args)
    assert code == 0, err
    pid = int(pidfile.read_text())
    assert not pid_alive(pid), "the daemon outlived the bench"
    res = json.loads(out)
    assert any(w["id"] == "stray_processes" and "left 1 process(es) running" in w["message"]
               and "time.sleep(300)" in w["message"] for w in res["warnings"]), res["warnings"]
    assert res["runs"][0]["strays_killed"][0].startswith("pid %d:" % pid)


def test_two_benches_at_once_take_turns_run_by_run(tmp_path):
    # Two measurements sharing a GPU time each other's kernels: hotkernel holds a machine-wide
    # lock per GPU set around every run, so runs of concurrent benches never overlap.
    log = tmp_path / "intervals.log"
    script = write(tmp_path / "k.py", """
import json, os, time
t0 = time.time()
time.sleep(0.3)
with open(%r, "a") as f:
    f.write("%%f %%f\\n" %% (t0, time.time()))
print(json.dumps({"ms": 1.0, "ok": True}))
""" % str(log))
    env = {"CUDA_VISIBLE_DEVICES": "hk-test-%d" % os.getpid()}  # a lock of this test's own
    procs = [subprocess.Popen([BIN, "--json", "bench", script, "--n", "3", "--python", PY], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={**os.environ, **env}) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e.decode() for _, e in outs]
    spans = sorted(tuple(map(float, line.split())) for line in log.read_text().splitlines())
    assert len(spans) == 6
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        assert b0 >= a1 - 0.005, "runs overlapped: %s" % spans
    waited = [r.get("waited_for_gpu_s", 0) for o, _ in outs for r in json.loads(o)["runs"]]
    assert sum(waited) > 0.2, waited


def test_an_unusable_gpu_lock_is_said_and_the_bench_still_runs(tmp_path):
    # Another user's lock file, a full /tmp: measuring goes on without the lock and says so.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / "hotkernel-measure-gpu-all.lock").mkdir()  # a folder where the lock file should be
    script = write(tmp_path / "k.py", "import json\nprint(json.dumps({'ms': 1.0, 'ok': True}))\n")
    env = {"TMPDIR": str(tmp)}
    env_unset = dict(os.environ)
    env_unset.pop("CUDA_VISIBLE_DEVICES", None)
    p = subprocess.run([BIN, "--json", "bench", script, "--n", "2", "--python", PY], capture_output=True, text=True,
                       timeout=120, env={**env_unset, **env})
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert any(w["id"] == "measured_without_lock" for w in res["warnings"]), res["warnings"]
    assert "cannot open the lock file" in res["runs"][0]["gpu_lock"]


def test_hang_before_any_output_in_a_later_run(tmp_path):
    counter = tmp_path / "count"
    script = write(tmp_path / "late_hang.py", f"""
import os, time
p = {str(counter)!r}
n = int(open(p).read()) + 1 if os.path.exists(p) else 1
open(p, "w").write(str(n))
if n == 2:
    time.sleep(600)
print('{{"ms": 1.0, "ok": true}}')
""")
    rc, out, err = hk("--python", PY, "bench", script, "--n", "3", "--timeout-s", "3", timeout=60)
    assert rc == 1
    assert "run 2 of 3" in err and "timed out" in err, err


# --------------------------------------------------------------- crashes ----

@pytest.mark.parametrize(
    "body, expect",
    [
        ("import ctypes; ctypes.string_at(0)", "SIGSEGV"),
        ("import os; os._exit(7)", "status 7"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL"),
        ("raise RuntimeError('boom in the kernel')", "boom in the kernel"),
    ],
    ids=["segfault", "os-exit", "sigkill", "exception"],
)
def test_crash_mid_run_is_an_error_naming_the_run(tmp_path, body, expect):
    counter = tmp_path / "count"
    script = write(tmp_path / "crash.py", f"""
import os, sys
p = {str(counter)!r}
n = int(open(p).read()) + 1 if os.path.exists(p) else 1
open(p, "w").write(str(n))
print("partial output before the crash", flush=True)
sys.stderr.write("about to fail\\n"); sys.stderr.flush()
if n == 2:
    {body}
print('{{"ms": 1.0, "ok": true}}')
""")
    rc, out, err = hk("--python", PY, "--json", "bench", script, "--n", "3", "--timeout-s", "30")
    assert rc == 1, (rc, out, err)
    assert "run 2 of 3" in err, err
    assert expect in err, err
    assert "Traceback" not in out and out.strip() == "", "no half result may be printed: " + out


def test_crash_after_printing_a_good_line_is_still_a_failure(tmp_path):
    # A result line followed by a crash must not be averaged: the run did not finish.
    script = write(tmp_path / "late_crash.py", """
import ctypes
print('{"ms": 0.001, "ok": true}', flush=True)
ctypes.string_at(0)
""")
    rc, out, err = hk("--python", PY, "bench", script, "--n", "2", "--timeout-s", "30")
    assert rc == 1
    assert "run 1 of 2" in err and "SIGSEGV" in err, err


# ------------------------------------------------------- floods of output ----

def test_hundreds_of_megabytes_of_stdout_are_bounded_and_the_last_line_found(tmp_path):
    script = write(tmp_path / "flood.py", """
import sys
chunk = ("x" * 1023 + "\\n") * 1024          # 1 MiB
for _ in range(300):
    sys.stdout.write(chunk)
sys.stdout.write('{"ms": 2.5, "ok": true}\\n')
""")
    t0 = time.monotonic()
    rc, out, err = hk("--python", PY, "--json", "bench", script, "--n", "2", "--timeout-s", "120", timeout=300)
    assert rc == 0, err
    r = json.loads(out)
    assert r["samples_ms"] == [2.5, 2.5]
    assert time.monotonic() - t0 < 120
    # The capture is bounded: the result object must not carry the flood.
    assert len(out) < 2_000_000, f"the result is {len(out)} bytes: the capture is not bounded"


def test_flood_without_a_result_line_says_it_is_missing(tmp_path):
    script = write(tmp_path / "flood_no_line.py", """
import sys
chunk = ("y" * 1023 + "\\n") * 1024
for _ in range(200):
    sys.stdout.write(chunk)
""")
    rc, out, err = hk("--python", PY, "bench", script, "--n", "1", "--timeout-s", "120", timeout=300)
    assert rc == 1
    assert "run 1 of 1" in err and "ms" in err, err
    assert len(err) < 200_000, "the error must show a tail, not the flood"


def test_flood_on_stderr_does_not_block_or_bloat(tmp_path):
    script = write(tmp_path / "flood_err.py", """
import sys
chunk = ("e" * 1023 + "\\n") * 1024
for _ in range(200):
    sys.stderr.write(chunk)
print('{"ms": 1.25}')
""")
    rc, out, err = hk("--python", PY, "--json", "bench", script, "--n", "1", "--timeout-s", "120", timeout=300)
    assert rc == 0, err[-2000:]
    assert json.loads(out)["samples_ms"] == [1.25]
    assert len(out) < 2_000_000


def test_invalid_utf8_is_replaced_and_said(tmp_path):
    script = write(tmp_path / "bad_utf8.py", r"""
import sys
sys.stdout.buffer.write(b"garbage \xff\xfe\xc3\x28 here\n")
sys.stdout.buffer.write(b'{"ms": 3.0, "ok": true, "note": "caf\xe9"}\n')
sys.stderr.buffer.write(b"err \xff\xff\n")
""")
    rc, out, err = hk("--python", PY, "--json", "bench", script, "--n", "1")
    assert rc == 0, err
    r = json.loads(out)  # the result itself is valid UTF-8 JSON
    assert r["samples_ms"] == [3.0]
    assert any(w["id"] == "invalid_utf8" for w in r["warnings"]), r["warnings"]


def test_invalid_utf8_without_a_result_line_is_a_clean_error(tmp_path):
    script = write(tmp_path / "only_bad.py", r"""
import sys
sys.stdout.buffer.write(b"\xff\xfe\xfd" * 1000 + b"\n")
""")
    rc, out, err = hk("--python", PY, "bench", script, "--n", "1")
    assert rc == 1
    assert "run 1 of 1" in err
    err.encode("utf-8")  # decodable; no raw bytes leak through


def test_nan_ms_is_refused(tmp_path):
    script = write(tmp_path / "nan.py", 'print(\'{"ms": NaN, "ok": true}\')\n')
    rc, out, err = hk("--python", PY, "bench", script, "--n", "1")
    assert rc == 1
    assert "NaN" in err or "finite" in err, err


# ------------------------------------------------- results/ and record ----

def verify_result(tmp_path):
    """A real verify result of two trivial plain scripts (A/A)."""
    a = write(tmp_path / "a.py", 'import random\nprint(\'{"ms": %f, "ok": true}\' % (1 + random.random() * 0.01))\n')
    b = write(tmp_path / "b.py", 'import random\nprint(\'{"ms": %f, "ok": true}\' % (1 + random.random() * 0.01))\n')
    rc, out, err = hk("--python", PY, "--json", "verify", a, b, "--n", "3", "--warmup", "1")
    if rc == 2 and "verify" in err and "unknown" in err.lower():
        pytest.skip("verify is not built into this binary yet")
    assert rc == 0, err
    path = tmp_path / "verify.json"
    path.write_text(out)
    return path


def record(result_path, results_dir, leaderboard=None, note="fault test", extra=()):
    args = ["--json", "record", "--result", str(result_path), "--note", note, "--who", "hand-written by tests/cli/test_faults.py",
            "--results-dir", str(results_dir)]
    if leaderboard:
        args += ["--leaderboard", str(leaderboard)]
    return hk(*args, *extra)


def record_params():
    rc, out, err = hk("list-tools")
    if rc != 0:
        pytest.skip("list-tools failed: " + err)
    tools = {t["name"]: t for t in json.loads(out)["tools"]}
    if "record" not in tools:
        pytest.skip("record is not built yet")
    return set(tools["record"]["inputSchema"].get("properties", {}))


def test_corrupt_results_are_skipped_and_named(tmp_path):
    props = record_params()
    res = verify_result(tmp_path)
    results = tmp_path / "results"
    rc, out, err = record(res, results, tmp_path / "LEADERBOARD.md") if "leaderboard" in props else record(res, results)
    assert rc == 0, err
    target_dir = next(p for p in results.iterdir() if p.is_dir())
    (target_dir / "garbage.json").write_bytes(b"\x00\xff{not json")
    (target_dir / "truncated.json").write_text('{"verdict": "faster", "speedup": ')
    (target_dir / "array.json").write_text("[1, 2, 3]")
    (target_dir / "empty.json").write_text("")
    (results / "notes.txt").write_text("a foreign file")
    rc, out, err = record(res, results, tmp_path / "LEADERBOARD.md") if "leaderboard" in props else record(res, results)
    assert rc == 0, err
    text = out + err
    for name in ("garbage.json", "truncated.json", "array.json", "empty.json"):
        assert name in text, f"{name} was not named as skipped: {text[-3000:]}"
    assert len([p for p in target_dir.glob("*.json")]) == 6  # two good + four corrupt, none deleted


def test_record_into_an_unwritable_place_is_a_clear_error_and_keeps_earlier_results(tmp_path):
    props = record_params()
    res = verify_result(tmp_path)
    results = tmp_path / "results"
    lb = tmp_path / "LEADERBOARD.md"
    rc, out, err = record(res, results, lb) if "leaderboard" in props else record(res, results)
    assert rc == 0, err
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}
    assert before

    # root ignores permission bits, so the unwritable place is a results/ whose target folder
    # path runs through a regular file: mkdir fails with ENOTDIR for root too.
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a folder should be")
    rc, out, err = record(res, blocked / "results", lb) if "leaderboard" in props else record(res, blocked / "results")
    assert rc == 1, (rc, out, err)
    assert "results" in err and ("directory" in err.lower() or "folder" in err.lower() or "not a" in err.lower()), err
    assert "Traceback" not in err and "terminate" not in err

    if os.geteuid() != 0:
        # Without root, also a genuinely read-only folder.
        os.chmod(results, stat.S_IRUSR | stat.S_IXUSR)
        for d in results.iterdir():
            if d.is_dir():
                os.chmod(d, stat.S_IRUSR | stat.S_IXUSR)
        try:
            rc, out, err = record(res, results, lb) if "leaderboard" in props else record(res, results)
            assert rc == 1, (rc, out, err)
        finally:
            for d in [results, *[d for d in results.iterdir() if d.is_dir()]]:
                os.chmod(d, stat.S_IRWXU)
    after = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}
    assert after == before, "earlier results changed after a failed record"


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a really full filesystem: a 512 KiB tmpfs (needs root and mount rights; the
    CI container has them). Yields (folder, fill) where fill() uses up the remaining space."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (%s); the RLIMIT_FSIZE test covers a failing write" % p.stderr.strip())

    def fill():
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)

    try:
        yield mnt, fill
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_record_onto_a_full_disk_is_a_clear_error_and_keeps_earlier_results(tmp_path, full_disk):
    props = record_params()
    res = verify_result(tmp_path)
    mnt, fill = full_disk
    results = mnt / "results"
    lb = mnt / "LEADERBOARD.md"
    rc, out, err = record(res, results, lb) if "leaderboard" in props else record(res, results)
    assert rc == 0, err
    before = {p: p.read_bytes() for p in mnt.rglob("*") if p.is_file()}
    fill()
    rc, out, err = record(res, results, lb) if "leaderboard" in props else record(res, results)
    assert rc == 1, (rc, out, err)
    assert "space" in err.lower() or "full" in err.lower(), "the error should say the disk is full: " + err
    assert "Traceback" not in err and "terminate" not in err and "Sanitizer" not in err
    after = {p: p.read_bytes() for p in mnt.rglob("*") if p.is_file() and p.name != "filler"}
    assert after == {p: b for p, b in before.items() if p.name != "filler"}, \
        "a failed record changed or left files behind: %s" % sorted(set(map(str, after)) ^ set(map(str, before)))


def test_record_with_a_failing_write_is_a_clear_error(tmp_path):
    # Without root: a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes every write past
    # 1 KiB fail with EFBIG, as a full disk fails with ENOSPC.
    import resource
    props = record_params()
    res = verify_result(tmp_path)
    results = tmp_path / "results"
    lb = tmp_path / "LEADERBOARD.md"
    rc, out, err = record(res, results, lb) if "leaderboard" in props else record(res, results)
    assert rc == 0, err
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "results" in p.parts}

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    args = [BIN, "--json", "record", "--result", str(res), "--note", "n", "--who", "test", "--results-dir", str(results)]
    if "leaderboard" in props:
        args += ["--leaderboard", str(lb)]
    p = subprocess.run(args, capture_output=True, text=True, preexec_fn=limit, timeout=60)
    assert p.returncode == 1, (p.returncode, p.stdout[-500:], p.stderr[-500:])
    assert "large" in p.stderr.lower() or "write" in p.stderr.lower() or "space" in p.stderr.lower(), p.stderr
    after = {q: q.read_bytes() for q in tmp_path.rglob("*") if q.is_file() and "results" in q.parts}
    assert after == before, "a failed record changed or left files under results/"


# ---------------------------------------- stale or edited vendored contract ----

def torch_python():
    for py in (os.environ.get("HOTKERNEL_TORCH_PYTHON"), "/usr/bin/python3", "/opt/hotkernel-dev/torch2/bin/python"):
        if py and os.path.exists(py):
            if subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
                return py
    return None


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory):
    py = torch_python()
    if py is None:
        pytest.skip("no interpreter with torch (set HOTKERNEL_TORCH_PYTHON)")
    out = tmp_path_factory.mktemp("target")
    rc, o, err = hk("--python", py, "--json", "new", "--from", "torch.nn.functional:gelu", "--shape", "64x64",
                    "--dtype", "fp32", "--device", "cpu", "--out-dir", str(out), "--name", "gelu", timeout=300)
    if rc == 2 and "new" in err:
        pytest.skip("new is not built yet: " + err)
    assert rc == 0, err
    return py, out


def test_edited_vendored_contract_is_said_clearly(scaffold, tmp_path):
    py, base = scaffold
    target = tmp_path / "t"
    shutil.copytree(base, target)
    vendored = target / "hotkernel_contract.py"
    vendored.write_text(vendored.read_text() + "\n# edited by hand\n")
    rc, out, err = hk("--python", py, "--json", "bench", str(target / "gelu_baseline.py"), "--n", "1", timeout=600)
    assert rc == 0, err
    r = json.loads(out)
    differs = [w["message"] for w in r["warnings"] if w["id"] == "vendored_contract_differs"]
    assert len(differs) == 1, r["warnings"]
    assert "binary's copy" in differs[0] and "new --force" in differs[0], differs
    assert r.get("trusted") is True, r
    assert r.get("vendored_contract", {}).get("status") == "edited", r.get("vendored_contract")


def test_stale_vendored_contract_is_said_clearly(scaffold, tmp_path):
    py, base = scaffold
    target = tmp_path / "t"
    shutil.copytree(base, target)
    (target / "hotkernel_contract.py").write_text("# an old contract\nPROTOCOL = 2\n")
    rc, out, err = hk("--python", py, "--json", "bench", str(target / "gelu_baseline.py"), "--n", "1", timeout=600)
    assert rc == 0, err
    r = json.loads(out)
    differs = [w["message"] for w in r["warnings"] if w["id"] == "vendored_contract_differs"]
    assert len(differs) == 1 and "protocol 2" in differs[0], r["warnings"]
    assert r.get("vendored_contract", {}).get("status") == "stale", r.get("vendored_contract")


def test_missing_vendored_contract_still_runs_trusted(scaffold, tmp_path):
    py, base = scaffold
    target = tmp_path / "t"
    shutil.copytree(base, target)
    (target / "hotkernel_contract.py").unlink()
    rc, out, err = hk("--python", py, "--json", "bench", str(target / "gelu_baseline.py"), "--n", "1", timeout=600)
    assert rc == 0, err
    r = json.loads(out)
    assert r.get("trusted") is True
    assert r.get("vendored_contract", {}).get("status") == "missing", r.get("vendored_contract")
