"""Shared helpers for the contract and `new` tests: the binary, the interpreters, running scripts.

Each test names the interpreter it needs: Debian's torch 1.13 (/usr/bin/python3) and a torch 2.x
venv. A missing interpreter (or one without torch) is skipped with a message saying which.
"""
import fcntl
import functools
import hashlib
import json
import os
import contextlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import torch_fork

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
    server = torch_fork.server(py)
    if server is None:
        return None
    if server.torch is not None:
        return server.torch
    r = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, timeout=120)
    return r.stdout.strip() if r.returncode == 0 else None


@pytest.fixture(scope="session", autouse=True)
def torch_fork_servers():
    """The per-interpreter fork servers (torch_fork.py) this worker started end with it."""
    yield
    torch_fork.close_all()


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


def shared_scaffold(tmp_path_factory, py, *args):
    """`hotkernel new ARGS --python py --json` run once per test session, in a folder that every
    xdist worker sees (under a lock: the first to ask scaffolds, the others wait and reuse it).
    Returns (folder new ran in, returncode, result, stderr). Shared read-only: a test that
    changes files works on a copy (shutil.copytree is milliseconds, `new` takes seconds)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the workers' basetemps are folders of one session's folder
    key = hashlib.sha256(json.dumps([py, *args]).encode()).hexdigest()[:16]
    folder = base / ("scaffold-" + key)
    with open(base / ("scaffold-%s.lock" % key), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = base / ("scaffold-%s.json" % key)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            rc, res, err = hk_new(py, *args, cwd=folder)
            done.write_text(json.dumps([rc, res, err]))
        rc, res, err = json.loads(done.read_text())
    return folder, rc, res, err


def alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def forked(py):
    """The fork server for `py` when it can fork (torch_fork.py), else None: start a process."""
    server = torch_fork.server(py)
    return server if server is not None and server.usable else None


def run_script(py, path, cwd=None, env=None, args=(), fresh=False):
    """Runs a target script as `py path args` would (forked from an interpreter that has imported
    torch unless `fresh`); returns (returncode, its JSON line or None, stderr)."""
    cwd = str(cwd or Path(path).parent)
    server = None if fresh else forked(py)
    if server is not None:
        rc, out, err = server.run(script=str(path), args=args, cwd=cwd, env=env, timeout=TIMEOUT)
        return rc, last_json_line(out), err
    full_env = dict(os.environ, **(env or {}))
    r = subprocess.run([py, str(path), *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, env=full_env)
    return r.returncode, last_json_line(r.stdout), r.stderr


def py_snippet(py, code, cwd):
    """Runs Python code as `py -c` would in cwd (cwd on sys.path; forked from an interpreter that
    has imported torch); asserts it exits 0; returns stdout."""
    code = "import sys; sys.path.insert(0, '.')\n" + code
    server = forked(py)
    if server is not None:
        rc, out, err = server.run(code=code, cwd=cwd, timeout=TIMEOUT)
    else:
        r = subprocess.run([py, "-c", code], cwd=str(cwd), capture_output=True, text=True, timeout=TIMEOUT)
        rc, out, err = r.returncode, r.stdout, r.stderr
    assert rc == 0, "snippet failed:\n%s\n%s" % (out, err)
    return out


def python_without_torch():
    """python3 on PATH when it lacks torch (pyenv's here), else None."""
    p = shutil.which("python3")
    if p is None:
        return None
    r = subprocess.run([p, "-c", "import torch"], capture_output=True, timeout=120)
    return p if r.returncode != 0 else None


@pytest.fixture()
def gelu(py, tmp_path_factory, tmp_path):
    """gelu scaffolded once per interpreter (64x128 bf16 on the CPU, 5 calls per sample), copied
    for this test."""
    src, rc, res, err = shared_scaffold(tmp_path_factory, py, "torch.nn.functional:gelu", "--shape", "64x128",
                                        "--iters", "5")
    assert rc == 0, err
    d = tmp_path / "gelu"
    shutil.copytree(src, d)
    return d


@contextlib.contextmanager
def kept_server(tmp_path):
    """A kept fork server (light: no torch) listening on tmp_path/fs.sock, started as hotkernel
    starts one; yields (its Popen, the socket's path) once it listens; killed with its group after."""
    sock_path = tmp_path / "fs.sock"
    env = dict(os.environ, HOTKERNEL_FORKSERVER_LIGHT="1", HOTKERNEL_FORKSERVER_SOCKET=str(sock_path),
               HOTKERNEL_FORKSERVER_IDLE_S="60")
    env.pop("HOTKERNEL_RESULT_FD", None)
    server = subprocess.Popen([sys.executable, str(ROOT / "python" / "hotkernel_forkserver.py")],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env, cwd=str(tmp_path), start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not sock_path.exists():
            assert time.monotonic() < deadline and server.poll() is None, "the kept server did not listen"
            time.sleep(0.05)
        yield server, sock_path
    finally:
        if server.poll() is None:
            os.killpg(server.pid, 9)
        server.wait()
