"""Shared helpers for the contract and `new` tests: the binary, the interpreters, running scripts.

Each test names the interpreter it needs: Debian's torch 1.13 (/usr/bin/python3) and a torch 2.x
venv. A missing interpreter (or one without torch) is skipped with a message saying which.
"""
import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HOTKERNEL_BIN", str(ROOT / "build" / "hotkernel"))).resolve()
CONTRACT_SRC = ROOT / "python" / "hotkernel_contract.py"
INTERPRETERS = {
    "torch1.13-debian": "/usr/bin/python3",
    "torch2-venv": "/opt/hotkernel-dev/torch2/bin/python",
}
TIMEOUT = 240


@functools.lru_cache(maxsize=None)
def torch_version(py):
    """torch.__version__ in that interpreter, or None when it is missing or has no torch."""
    if not (os.path.isfile(py) and os.access(py, os.X_OK)):
        return None
    r = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, timeout=120)
    return r.stdout.strip() if r.returncode == 0 else None


@pytest.fixture(scope="module", params=list(INTERPRETERS.values()), ids=list(INTERPRETERS.keys()))
def py(request):
    """The interpreter under test (parametrised over both torch generations)."""
    path = request.param
    if not os.path.exists(path):
        pytest.skip("interpreter %s is missing on this machine: its torch generation is not tested here" % path)
    if torch_version(path) is None:
        pytest.skip("interpreter %s cannot import torch: its torch generation is not tested here" % path)
    return path


@pytest.fixture(scope="session", autouse=True)
def binary():
    if not (BIN.is_file() and os.access(BIN, os.X_OK)):
        pytest.fail("hotkernel binary %s not found: build it (cmake --build build) or set HOTKERNEL_BIN" % BIN)
    return BIN


def hk_new(py, *args, cwd, env=None, python_flag=True):
    """Runs `hotkernel new ... --json`; returns (returncode, result dict or None, stderr)."""
    cmd = [str(BIN), "new", *args, "--json"]
    if python_flag:
        cmd += ["--python", py]
    full_env = dict(os.environ, **(env or {}))
    r = subprocess.run(cmd, cwd=str(cwd), capture_output=True, text=True, timeout=TIMEOUT, env=full_env)
    try:
        result = json.loads(r.stdout) if r.returncode == 0 else None
    except ValueError:
        result = None
    return r.returncode, result, r.stderr


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def run_script(py, path, cwd=None, env=None, args=()):
    """Runs a target script; returns (returncode, its JSON line or None, stderr)."""
    full_env = dict(os.environ, **(env or {}))
    r = subprocess.run([py, str(path), *args], cwd=str(cwd or Path(path).parent), capture_output=True, text=True,
                       timeout=TIMEOUT, env=full_env)
    return r.returncode, last_json_line(r.stdout), r.stderr


def py_snippet(py, code, cwd):
    """Runs Python code in the interpreter (cwd on sys.path); asserts it exits 0; returns stdout."""
    r = subprocess.run([py, "-c", "import sys; sys.path.insert(0, '.')\n" + code], cwd=str(cwd), capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert r.returncode == 0, "snippet failed:\n%s\n%s" % (r.stdout, r.stderr)
    return r.stdout


def python_without_torch():
    """python3 on PATH when it lacks torch (pyenv's here), else None."""
    p = shutil.which("python3")
    if p is None:
        return None
    r = subprocess.run([p, "-c", "import torch"], capture_output=True, timeout=120)
    return p if r.returncode != 0 else None
