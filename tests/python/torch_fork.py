"""An interpreter that imports torch once and forks a child for each snippet or script a test runs.

torch's import takes seconds on the 2-core CI machine and the contract tests run a few dozen
snippets per interpreter, so each test worker keeps one such interpreter per torch generation.
A child starts from the state `python -c CODE` or `python SCRIPT` has right after `import torch`:
its own cwd, environment, argv, sys.path[0], a fresh __main__, stdin empty; the contract and the
target it imports itself. It has a process group of its own, a timeout, and dies with the server,
which dies with the test worker. Tests that assert how an interpreter starts (a result fd, a
script run from another folder) start a fresh process instead (conftest.run_script(fresh=True)).
"""
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

SERVER = r'''
import ctypes, json, os, select, signal, sys, time
def die_with_parent():
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass
die_with_parent()
import threading, torch
threads = threading.active_count()

def child(req):
    import atexit, runpy, traceback, types
    os.setpgid(0, 0)
    die_with_parent()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    sys.stdin = open(0, closefd=False)
    for fd, path in ((1, req["out"]), (2, req["err"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    os.chdir(req["cwd"])
    os.environ.update(req["env"])
    if "OMP_NUM_THREADS" in req["env"]:  # read when torch loads: what a fresh start would get
        torch.set_num_threads(int(req["env"]["OMP_NUM_THREADS"]))
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    code = 0
    try:
        if req.get("script"):
            path = req["script"]
            sys.argv = [path] + req["args"]
            sys.path[0] = os.path.dirname(os.path.realpath(path))
            runpy.run_path(path, run_name="__main__")
        else:
            sys.argv = ["-c"] + req["args"]
            sys.path[0] = ""
            exec(compile(req["code"], "<string>", "exec"), main.__dict__)
    except SystemExit as e:  # the interpreter's rule for sys.exit(x)
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:  # what interpreter shutdown does: join threads, run exit handlers, flush
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)

def wait_for(pid, timeout):
    """(wait status, timed out): the child's end, its group killed at the timeout."""
    try:
        fd = os.pidfd_open(pid)  # readable once the child has exited
    except (AttributeError, OSError):
        fd = None
    deadline = time.monotonic() + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status, False
            left = deadline - time.monotonic()
            if left <= 0:
                os.killpg(pid, signal.SIGKILL)
                return os.waitpid(pid, 0)[1], True
            if fd is not None:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(left, 0.005))
    finally:
        if fd is not None:
            os.close(fd)

def serve():
    requests = os.fdopen(0, "rb", buffering=0)
    out = sys.stdout
    out.write(json.dumps({"torch": torch.__version__, "threads": threads}) + "\n")
    out.flush()
    buf = b""
    while True:
        while b"\n" not in buf:
            chunk = requests.read(65536)
            if not chunk:
                return
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        req = json.loads(line)
        out.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                child(req)
            finally:
                os._exit(70)
        try:
            os.setpgid(pid, pid)  # also here: a kill right after the fork must reach the group
        except OSError:
            pass
        status, timed_out = wait_for(pid, req["timeout"])
        try:
            os.killpg(pid, signal.SIGKILL)  # whatever the child left in its group
        except OSError:
            pass
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        out.write(json.dumps({"rc": rc, "timed_out": timed_out}) + "\n")
        out.flush()

serve()
'''


class TorchFork:
    """One server: `run(...)` forks a child that runs code or a script, and returns
    (returncode, stdout, stderr) as subprocess.run would."""

    START_TIMEOUT_S = 240

    def __init__(self, py):
        self.py = py
        self.tmp = tempfile.mkdtemp(prefix="hk-torch-fork-")
        with open(os.path.join(self.tmp, "server.err"), "wb") as err:
            self.proc = subprocess.Popen([py, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         start_new_session=True)
        self.buf = b""
        self.calls = 0
        hello = self._reply(self.START_TIMEOUT_S)
        self.torch = hello and hello["torch"]
        # fork() copies the calling thread only: with Python threads running, a child could
        # inherit a lock one held, so such an interpreter is not used (hotkernel's fork server
        # has the same rule; torch's import starts none).
        self.usable = hello is not None and hello["threads"] == 1
        if not self.usable:
            self.close()

    def server_error(self):
        try:
            with open(os.path.join(self.tmp, "server.err"), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def _reply(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def run(self, code=None, script=None, args=(), cwd=".", env=None, timeout=240):
        assert self.usable, "this interpreter's fork server is closed"
        self.calls += 1
        out = os.path.join(self.tmp, "%d.out" % self.calls)
        err = os.path.join(self.tmp, "%d.err" % self.calls)
        req = {"code": code, "script": script and os.path.abspath(script), "args": [str(a) for a in args],
               "cwd": os.path.abspath(str(cwd)), "env": dict(env or {}), "out": out, "err": err, "timeout": timeout}
        self.proc.stdin.write(json.dumps(req).encode() + b"\n")
        self.proc.stdin.flush()
        ans = self._reply(timeout + 30)
        if ans is None:
            self.close()
            raise AssertionError("the torch fork server of %s did not answer: %s" % (self.py, self.server_error()))
        texts = []
        for path in (out, err):
            with open(path, "rb") as f:
                texts.append(f.read().decode("utf-8", "replace"))
            os.unlink(path)
        if ans["timed_out"]:
            raise subprocess.TimeoutExpired([self.py, script or "-c"], timeout, texts[0], texts[1])
        return ans["rc"], texts[0], texts[1]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.usable = False
        shutil.rmtree(self.tmp, ignore_errors=True)


_servers = {}


def server(py):
    """This worker's server for `py`, started on first use (None for a path that is no
    executable). `.torch` is its torch version (None without torch); `.usable` says whether it
    forks (not without torch, nor with threads running after the import)."""
    if py not in _servers:
        _servers[py] = TorchFork(py) if os.path.isfile(py) and os.access(py, os.X_OK) else None
    return _servers[py]


def close_all():
    for s in _servers.values():
        if s is not None:
            s.close()
    _servers.clear()
