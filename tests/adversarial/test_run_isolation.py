# Cheats whose trick outlives the run that played it: a file planted where later runs load from,
# a script rewritten between runs, a helper that escapes with the fork server it killed. The
# kernel sandbox stops each of them (test_persistence.py); these run without it (Landlock held
# off, --allow-unsandboxed), so that the run isolation behind it is what catches them. Each
# runs in a home, cache and socket folder of its own (nothing is written to the real ones), and
# every process it started is killed afterwards, found by a tag in its environment.
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

# A defeated trick's verify is an A/A one; a working one reads the candidate ~2-4x faster.
GAIN = 1.5
UNSANDBOXED = ("--allow-unsandboxed",)


def _tagged(tag):
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if ("HK_PERSIST_TAG=" + tag).encode() in (d / "environ").read_bytes().split(b"\0"):
                found.append(int(d.name))
        except OSError:
            continue
    return found


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home of its own for hotkernel and the interpreters it starts; the tagged processes are
    killed at the end (kept fork servers, escaped helpers)."""
    py = harness.torch_python()
    if py is None:
        pytest.skip("no interpreter with torch: set HOTKERNEL_TORCH_PYTHON")
    if not os.path.exists(harness.binary()):
        pytest.skip("no hotkernel binary at %s (set HOTKERNEL_BIN)" % harness.binary())
    tag = uuid.uuid4().hex
    runtime = tempfile.mkdtemp(prefix="hkp")  # short: a Unix socket's path has at most 107 bytes
    for k, v in {"HOME": tmp_path / "home", "XDG_CACHE_HOME": tmp_path / "cache", "PYTHONUSERBASE": tmp_path / "ub",
                 "XDG_RUNTIME_DIR": runtime}.items():
        Path(v).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(k, str(v))
    monkeypatch.setenv("HOTKERNEL_CACHE_BYTES", str(1 << 20))
    monkeypatch.setenv("HK_PERSIST_TAG", tag)
    monkeypatch.setenv("HOTKERNEL_TEST_NO_LANDLOCK", "1")  # the sandbox's test switch: no Landlock
    out = tmp_path / "gelu"
    out.mkdir()
    base = harness.scaffold(out, py, device="cpu", shape="128x128", iters=48, samples=3, warmup_s=0.1)
    yield py, out, base
    for pid in _tagged(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _ids(res, key):
    return [w.get("id") for w in res.get(key, [])]


def _speedup(res):
    s = res.get("speedup")
    return s if isinstance(s, (int, float)) else 1.0


def _gained(res):
    return res.get("verdict") == "faster" and not res.get("flags") and _speedup(res) >= GAIN


def _later_gained(res):
    """An honest, untouched pair read faster by GAIN over its means and its fastest runs too: a
    planted cache slows every baseline run; load on a 2-core machine slows some."""
    return _gained(res) and (harness.fastest_run_ratio(res) or 0) >= GAIN


def _reasons(res):
    return list(res.get("reasons", [])) + [(r.get("line") or {}).get("reason") or "" for r in res.get("runs", [])]


def test_a_planted_bytecode_cache_is_removed_and_never_loaded(home):
    py, out, base = home
    cand = harness.make_candidate(out, harness.CHEATS / "planted_pyc.py", base)
    rc, res, err = harness.verify(py, base, cand, n=3, flags=UNSANDBOXED)
    assert res is not None, err
    # An honest, untouched pair verified after it: nothing the cheat planted is loaded.
    blank = harness.make_candidate(out, harness.HONEST / "blank.py", base)
    rc, later, err = harness.verify(py, base, blank, n=2, flags=UNSANDBOXED)
    assert later is not None, err
    assert not _gained(res), "the planted contract slowed the baseline: %s" % harness._runs_text(res)
    assert not _later_gained(later), "a later honest verify read faster: %s" % harness._runs_text(later)
    assert "python_cache_tampered" in _ids(res, "warnings"), res.get("warnings")
    py_dir = Path(res["harness"]["contract_path"]).parent
    assert sorted(p.name for p in py_dir.iterdir()) == sorted(p.name for p in py_dir.glob("hotkernel_*.py"))


def test_the_baseline_rewritten_between_runs_voids_the_run(home):
    py, out, base = home
    cand = harness.make_candidate(out, harness.CHEATS / "rewrite_baseline_between_runs.py", base)
    rc, res, err = harness.verify(py, base, cand, n=3, flags=UNSANDBOXED)
    assert res is not None, err
    assert res.get("verdict") == "invalid", (res.get("verdict"), _reasons(res), harness._runs_text(res))
    said = [r for r in _reasons(res) if "gelu_baseline.py changed" in r]
    assert said, _reasons(res)


def test_a_helper_that_escapes_with_the_killed_fork_server_gains_nothing(home):
    py, out, base = home
    # `new` left a kept fork server whose parent is gone: what escapes its death goes to init.
    cand = harness.make_candidate(out, harness.CHEATS / "escape_helper.py", base)
    rc, res, err = harness.verify(py, base, cand, n=3, flags=UNSANDBOXED)
    assert res is not None, err
    assert not _gained(res), "the escaped helper slowed the baseline: %s" % harness._runs_text(res)
    assert res.get("verdict") == "invalid", (res.get("verdict"), _reasons(res), harness._runs_text(res))
    assert "fork_server_restarted" in _ids(res, "warnings"), res.get("warnings")
