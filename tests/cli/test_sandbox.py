"""The kernel sandbox end to end: a trusted bench says what was in force (on the result and on
each run), its scratch folder is gone after the run and its compiler caches are per role; where
no Landlock is there (simulated by HOTKERNEL_TEST_NO_LANDLOCK=1) the run is refused with what was
missing and the fix, unless allow_unsandboxed, which measures and warns."""
import json
import os
import subprocess
from pathlib import Path

import pytest

BIN = os.path.abspath(os.environ.get("HOTKERNEL_BIN", "build/hotkernel"))
PY = "/usr/bin/python3"  # Debian's, with torch


def _has_torch():
    try:
        return subprocess.run([PY, "-c", "import torch"], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = pytest.mark.skipif(not _has_torch(), reason="%s has no torch" % PY)


@pytest.fixture
def target(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               HOTKERNEL_KEEP_WARM_S="0", HOTKERNEL_CACHE_BYTES=str(1 << 20))
    p = subprocess.run([BIN, "--python", PY, "--json", "new", "--from", "torch.nn.functional:gelu", "--shape", "64x64",
                        "--dtype", "fp32", "--device", "cpu", "--iters", "8", "--name", "gelu", "--out-dir",
                        str(tmp_path / "t")], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    base = tmp_path / "t" / "gelu_baseline.py"
    text = base.read_text().replace('"samples": 10', '"samples": 2').replace('"warmup_s": "auto"', '"warmup_s": 0.05')
    base.write_text(text)
    return base, env, tmp_path / "cache" / "hotkernel"


def _bench(base, env, *extra):
    p = subprocess.run([BIN, "--python", PY, "--json", "bench", str(base), "--n", "1", *extra], capture_output=True,
                       text=True, timeout=300, env=env)
    return p.returncode, (json.loads(p.stdout) if p.returncode == 0 else None), p.stderr


def _landlock_abi():
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    import hotkernel_sandbox
    return hotkernel_sandbox.landlock_abi()


@pytest.mark.skipif(_landlock_abi() < 1, reason="this kernel has no Landlock")
def test_result_says_what_was_in_force_and_the_scratch_is_gone(target):
    base, env, cache = target
    # Two intra-op threads: on the CPU the harness starts torch's pool before the candidate's
    # import, and the sandbox must come before that pool to bind it.
    rc, res, err = _bench(base, dict(env, OMP_NUM_THREADS="2"))
    assert rc == 0, err
    box = res["sandbox"]
    assert box["fs"] == "read-only outside scratch" and box["landlock_abi"] == _landlock_abi()
    assert box["signals"] == ("scoped" if _landlock_abi() >= 6 else "none")
    assert box["no_new_privs"] is True and box["rlimits"]["core"] == 0
    assert all(dict(r["sandbox"], threads_before=None) == dict(box, threads_before=None) for r in res["runs"])
    # Applied while the harness's thread was the process's only one: every later thread (torch's
    # intra-op pool, CUDA's, CUPTI's) is bound by Landlock and has no capabilities either.
    assert "threads_before" not in box and all(r["sandbox"]["threads_before"] == 1 for r in res["runs"])
    assert not [w for w in res["warnings"] if w["id"] == "measured_unsandboxed"]
    assert list((cache / "scratch").iterdir()) == []  # removed after the run
    assert [d.name.split("-")[0] for d in (cache / "compile").iterdir()] == ["bench"]


def test_without_landlock_the_run_is_refused_with_the_fix(target):
    base, env, _ = target
    rc, res, err = _bench(base, dict(env, HOTKERNEL_TEST_NO_LANDLOCK="1"))
    assert rc != 0 and res is None
    assert "kernel sandbox could not be applied" in err and "no Landlock" in err, err[-2000:]
    assert "--allow-unsandboxed" in err


def test_allow_unsandboxed_measures_and_says_so(target):
    base, env, _ = target
    rc, res, err = _bench(base, dict(env, HOTKERNEL_TEST_NO_LANDLOCK="1"), "--allow-unsandboxed")
    assert rc == 0, err
    assert res["sandbox"]["fs"] == "none" and res["sandbox"]["landlock_abi"] == 0
    assert [w for w in res["warnings"] if w["id"] == "measured_unsandboxed"]
