# Warm fork server: imports torch (and triton, the contract) once without initialising CUDA,
# then forks a fresh child per run that executes a script exactly as `python script.py` would.
#
# The other half of src/process/fork_server_runner.cpp (its codec: src/process/fork_protocol.cpp).
# Started by hotkernel as
# `python hotkernel_forkserver.py` with HOTKERNEL_RESULT_FD naming a private pipe. The wire
# protocol (one JSON object per line each way: a ready line, then a request and its answer per
# run) is written down once, in src/process/fork_protocol.h; a recorded transcript
# (tests/fixtures/fork_protocol/) is replayed against both halves.
# Kept mode (HOTKERNEL_FORKSERVER_SOCKET=<path>): started detached by hotkernel, the server
# listens on that Unix socket instead, serves one connection at a time (same protocol, both
# directions on the socket, a ready line per connection) and outlives the hotkernel that
# started it, so the next bench/verify skips the imports. It ends after
# HOTKERNEL_FORKSERVER_IDLE_S seconds without a connection, once it can take the lock file
# beside the socket (a client holds that lock while it connects and is served). It is the
# child subreaper of its runs: what a run leaves behind (a setsid'd daemon) is re-parented to
# it, killed after the run and reported in the answer's "strays".
# Why a fork and not a thread or exec: a forked child gets its own CUDA context and caching
# allocator (CUDA is first touched in the child), the same isolation as a new process, and
# skips the ~4 s of importing torch (tests/fixtures/h200/fork-probe.txt: 0.4 s vs 4.5 s).
# Forking is refused when it is unsafe: CUDA already initialised in this process (a forked
# CUDA context is unusable), or Python threads running (their locks would be copied held).
import sys

sys.dont_write_bytecode = True  # no bytecode of ours (or of a run's) is left for a later run

import base64
import json
import os
import signal
import time

_T0 = time.perf_counter()
_STARTED_AT = time.time()
_SERVER_PID = os.getpid()
_RESULT_FD = int(os.environ.get("HOTKERNEL_RESULT_FD", "1"))  # replaced in main() when unset
_IN_FD = 0
_ACTIVE_CHILD = [0]  # pid (== pgid) of the run in flight, 0 when idle
# Runs answered before they were reaped (closes_before_exit): pid -> the time by which they must
# be gone. A harness closes its pipes after its result and then exits, and the exit tears
# down its CUDA context (0.10-0.13 s on an H200): the next run starts meanwhile. Reaped before
# every fork, between requests, and at the end; killed with their group when late.
_EXITING = {}
EXIT_GRACE_S = 10.0
# Kept mode: what a run answered while exiting left that only came back to this server (its
# subreaper) with that run's exit; said with the next answer.
_LATE_STRAYS = []
_LISTEN_FD = [None]  # kept mode: the listening socket, closed in every child
_LISTEN = [None]  # kept mode: the listening socket object
_LOCK_FD = [None]  # kept mode: the lock file beside the socket, closed in every child (a run's flock
# on the server's own open file would outlive the run)
# Kept mode: connections taken from the queue while another client was served, admitted
# (_admit), each waiting its turn; closed in every child like the listening socket.
_PENDING = []
_IMPORT_S = [0.0]  # seconds the preload took (in every ready line)
_PR_SET_PDEATHSIG = 1
# sha256 of hotkernel's Python files, by name (HOTKERNEL_PY_SHA256, a JSON object), read in main().
_EXPECTED = {}
_PR_SET_CHILD_SUBREAPER = 36
# The child that keeps the GPU's driver initialised while this server lives (_hold_gpu), never a
# run's stray, and the server's end of its pipe (closed in every run's child).
_HOLDER = {"pid": None, "fd": None}


# The answers besides "done" (built in _serve_one) and "ready" (_ready_line), each in one place;
# the schema is src/process/fork_protocol.h's.
def _refused(run_id, reason):
    return {"event": "refused", "id": run_id, "reason": reason}


def _pong():
    reason = unforkable_reason()
    return {"event": "pong", "forkable": reason is None, "reason": reason}


def _send(obj):
    data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
    off = 0
    while off < len(data):
        off += os.write(_RESULT_FD, data[off:])


def _kill_group(pid, sig):
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _on_term(signum, frame):
    # hotkernel is ending the session: take the run in flight with us.
    if _ACTIVE_CHILD[0]:
        _kill_group(_ACTIVE_CHILD[0], signal.SIGKILL)
    for pid in list(_EXITING):
        _kill_group(pid, signal.SIGKILL)
    os._exit(0)


def _end_what_it_left(pid):
    """For a run answered while it exits: kills its group and every process below it now, as the
    sweep after a reaped run would, before the next run starts (a daemon it left must not run
    beside the next one). Returns 'pid N: command' for each process other than the run itself."""
    parent = _parents()
    below, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        below += kids
        todo += kids
    killed = []
    for d in below:
        cmd = _cmdline(d)
        _kill_group(d, signal.SIGKILL)
        try:
            os.kill(d, signal.SIGKILL)
            killed.append("pid %d: %s" % (d, cmd))
        except OSError:
            pass
    _kill_group(pid, signal.SIGKILL)  # the run itself is in its exit already
    return killed


def _hold_gpu():
    """Forks a child that initialises the CUDA driver (cuInit: no context, no memory) and waits
    for this server to end. Without persistence mode the driver tears a GPU down when its last
    client goes, and the next run's cuInit brings it up again: 0.13-0.26 s of every run's start
    on an H200, against 0.04 s while another process holds it (bench/probes/spare_probe.py). A
    held driver does nothing on the GPU: a process timing beside it sees no difference (there).
    The server itself never initialises CUDA (its forks could not use it). HOTKERNEL_HOLD_GPU:
    0 none, 1 one even without /dev/nvidiactl (its cuInit fails; tests), unset: where the device is."""
    want = os.environ.pop("HOTKERNEL_HOLD_GPU", "")
    if want == "0" or (want != "1" and not ("torch" in sys.modules and os.path.exists("/dev/nvidiactl"))):
        return  # none asked for, or a light server (no torch runs), or no NVIDIA driver here
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.closerange(3, r)
            os.closerange(r + 1, 1 << 16)  # nothing of the server's pipes or socket held open
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() == _SERVER_PID:
                try:
                    ctypes.CDLL("libcuda.so.1").cuInit(0)
                except OSError:  # no driver: nothing to hold, but waits all the same (one rule)
                    code = 2
                while os.read(r, 1):  # the server's end closes when it exits
                    pass
        except BaseException:
            code = 1
        os._exit(code)
    os.close(r)
    _HOLDER.update(pid=pid, fd=w)  # the pipe kept open: its close (the server's exit) ends the holder


def _once_each(strays):
    """'pid N: command' lines, each pid once (the first)."""
    seen, out = set(), []
    for line in strays:
        pid = line.split(":", 1)[0]
        if pid not in seen:
            seen.add(pid)
            out.append(line)
    return out


def _reap_exiting(wait=False):
    """Reaps the runs that were answered while exiting, and kills what their groups left behind
    (as for any run); one past its grace is killed with its group. wait=True: until all are gone."""
    reaped = False
    for pid, deadline in list(_EXITING.items()):
        while True:
            try:
                w, _ = os.waitpid(pid, 0 if wait else os.WNOHANG)
            except ChildProcessError:
                w = pid
            if w == pid:
                _kill_group(pid, signal.SIGKILL)
                del _EXITING[pid]
                reaped = True
                break
            if time.time() < deadline:
                break
            _kill_group(pid, signal.SIGKILL)
            wait = True  # killed: its exit is a moment away
    if reaped and _LISTEN_FD[0] is not None and not _ACTIVE_CHILD[0]:
        # Its exit handed this subreaper what it left (killed at the answer, or started since).
        _LATE_STRAYS.extend(_sweep_strays())


def _preload():
    """Imports what every run would import anyway; returns (versions, errors)."""
    info = {"torch": None, "triton": None, "contract": False, "preload": [], "light": False}
    errors = []
    if os.environ.get("HOTKERNEL_FORKSERVER_LIGHT") == "1":
        # The script never mentions torch, triton or the contract: a fresh interpreter starts in
        # ~0.05 s, so importing torch here (2-5 s) would only cost time.
        info["light"] = True
    else:
        _preload_heavy(info, errors)
    _preload_user(info, errors)
    return info, errors


def _preload_heavy(info, errors):
    try:
        import torch  # noqa: F401

        info["torch"] = torch.__version__
        _warm_dispatch_modes(torch)
    except Exception as ex:  # no torch in this interpreter: plain scripts still run warm
        errors.append("torch: %s" % ex)
    try:
        import triton  # noqa: F401

        info["triton"] = triton.__version__
    except Exception:
        pass
    _precompile()
    try:
        _load_contract_checked()  # its import must not initialise CUDA
        info["contract"] = True
    except Exception as ex:
        errors.append("hotkernel_contract: %s" % ex)


def _warm_dispatch_modes(torch):
    """Enters a torch dispatch mode once: the harness records the operators its preparation
    dispatches under one, and the first mode a process enters imports torch._dynamo (torch 2.x:
    1.8-3.6 s, measured), which every forked run would otherwise pay. On the CPU, without CUDA."""
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError:  # torch 1.x before dispatch modes: the harness records nothing
        return

    class _Pass(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with _Pass():
        torch.empty(1)


def _load_contract_checked():
    """Imports the binary's contract from beside this file by its bytes, checked against the sha256
    hotkernel sent (HOTKERNEL_PY_SHA256), never from a bytecode cache: what this server runs,
    every run forked from it inherits. Its runs drop it and load their own checked copy."""
    import types

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hotkernel_contract.py")
    with open(path, "rb") as f:
        data = f.read()
    want = _EXPECTED.get("hotkernel_contract.py")
    got = _sha256(data)
    if want is not None and want != got:
        raise RuntimeError("%s has sha256 %s, not the binary's %s; not loaded" % (path, got[:12], want[:12]))
    mod = types.ModuleType("hotkernel_contract")
    mod.__file__ = path
    sys.modules["hotkernel_contract"] = mod
    try:
        # The code _precompile made from these very bytes, else compiled now.
        exec(_COMPILED.get((path, got)) or compile(data, path, "exec", dont_inherit=True), mod.__dict__)
    except BaseException:
        sys.modules.pop("hotkernel_contract", None)
        raise


# Code objects of hotkernel's own files, compiled here once from their bytes: {(path, sha256): code}.
# A trusted run gets them instead of compiling the same bytes again (~0.1 s a run on a 2-core CPU).
# The run takes one only for a file whose bytes it read and checked have that sha256, so what runs
# is what was checked; a file changed since is compiled from its new bytes as before.
_HARNESS_FILES = ("hotkernel_harness.py", "hotkernel_contract.py", "hotkernel_defences.py", "hotkernel_sandbox.py",
                  "hotkernel_release.py")
_COMPILED = {}


def _sha256(data):
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _precompile():
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _HARNESS_FILES:
        path = os.path.join(here, name)
        try:
            with open(path, "rb") as f:
                data = f.read()
            _COMPILED[(path, _sha256(data))] = compile(data, path, "exec", dont_inherit=True)
        except (OSError, SyntaxError, ValueError):
            pass  # compiled by the run, which reports what is wrong with it
    # The torch names each code object reads (the harness's patch check), computed once with the
    # defences' own function, in a namespace of its own (nothing of it stays in sys.modules).
    defences = [c for (path, _), c in _COMPILED.items() if os.path.basename(path) == "hotkernel_defences.py"]
    if defences:
        try:
            ns = {"__name__": "hotkernel_defences_preload"}
            exec(defences[0], ns)
            _COMPILED["torch_names"] = ns["torch_name_table"](list(_COMPILED.values()))
            if "torch" in sys.modules:  # libtorch's kernel pointers' addresses: the same in every fork
                _COMPILED["native_stubs"] = ns["native_stubs"]()
        except Exception:
            pass  # the run computes them itself


def _run_script(script):
    """Runs `script` as runpy.run_path(script, run_name="__main__") does; hotkernel's harness from
    its precompiled code when the file's bytes are those it was compiled from, with the other
    files' code objects for it to take by their checked bytes."""
    import runpy

    run_code = getattr(runpy, "_run_module_code", None)
    path = os.path.abspath(script)
    if _COMPILED and run_code is not None and os.path.basename(path) == "hotkernel_harness.py":
        try:
            with open(path, "rb") as f:
                sha = _sha256(f.read())
        except OSError:
            sha = None
        code = _COMPILED.get((path, sha))
        if code is not None:
            handoff = {k: v for k, v in _COMPILED.items() if k != (path, sha)}
            _COMPILED.clear()
            run_code(code, {"_HOTKERNEL_COMPILED": handoff, "_HOTKERNEL_RAN_SHA256": sha}, "__main__",
                     pkg_name="", script_name=script)
            return
    runpy.run_path(script, run_name="__main__")


def _preload_user(info, errors):
    # HOTKERNEL_FORKSERVER_PRELOAD: more modules to import once (the user's heavy imports).
    for name in filter(None, (m.strip() for m in os.environ.get("HOTKERNEL_FORKSERVER_PRELOAD", "").split(","))):
        try:
            __import__(name)
            info["preload"].append(name)
        except Exception as ex:
            errors.append("%s: %s" % (name, ex))


def unforkable_reason():
    """Why forking this process now would not give a clean child; None when it is safe."""
    if not hasattr(os, "fork"):
        return "this platform has no os.fork"
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return "CUDA is already initialised in the fork server (a forked CUDA context is unusable)"
        except Exception:
            pass
    import threading

    if threading.active_count() > 1:
        names = ", ".join(t.name for t in threading.enumerate() if t is not threading.main_thread())
        return "the fork server runs Python threads (%s); forking a threaded process can deadlock" % names
    return None


# Modules the parent imported from its own folder; a child re-imports them from the script's
# folder instead (a target vendors its own hotkernel_contract.py and must get that copy).
_SERVER_DIR = os.path.dirname(os.path.realpath(__file__))


# Module file -> whether it lies in _SERVER_DIR (symlinks resolved), kept across runs: resolving
# every file of torch's ~1300 modules took ~0.06 s a run on a 2-core CPU.
_FILE_IN_SERVER_DIR = {}


def _server_module_names():
    """The modules the child drops (run in the server before each fork, so the cache above lives on)."""
    names = []
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None) or ""
        if name in ("hotkernel_contract", "hotkernel_forkserver"):
            names.append(name)
        elif f and isinstance(f, str):
            here = _FILE_IN_SERVER_DIR.get(f)
            if here is None:
                here = _FILE_IN_SERVER_DIR[f] = os.path.dirname(os.path.realpath(f)) == _SERVER_DIR
            if here:
                names.append(name)
    return names


def _drop_server_modules(names):
    for name in names:
        sys.modules.pop(name, None)


def _reseed():
    # A fresh process draws new OS entropy for these; forked children would all share the
    # parent's state, so give each child its own, as `python script.py` would have.
    rnd = sys.modules.get("random")
    if rnd is not None:
        rnd.seed()
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed()
        except Exception:
            pass


def _hand_over_exiting(env, harness):
    """The runs still exiting as this one starts (answered, not yet reaped: their pids cannot be
    reused), as pidfds for its harness to wait on before it times anything
    (HOTKERNEL_WAIT_PIDFDS): an exit overlaps the next run's start (a CUDA context's teardown,
    ~0.1 s), but a run that mapped a memfd many times made its exit take seconds of kernel time,
    which landed in the next run's samples. Only a harness (a run that closes its pipes before its
    exit) reads them: any other script gets none, as a fresh process would have none."""
    fds = []
    if harness and hasattr(os, "pidfd_open"):
        for pid in list(_EXITING):
            try:
                fds.append(os.pidfd_open(pid))
            except OSError:
                continue
    if fds:
        env["HOTKERNEL_WAIT_PIDFDS"] = ",".join(str(fd) for fd in fds)
    else:
        env.pop("HOTKERNEL_WAIT_PIDFDS", None)


def _forget_server_exit_work():
    """Exit handlers and finalizers the server registered are the server's: run in a child they
    would clean up the server's resources (a TemporaryDirectory made at import) and cost ~0.1 s
    a run in copy-on-write faults. The child runs only what its own script registers, plus the
    two process-local clean-ups a fresh interpreter always has."""
    import atexit
    import weakref

    atexit._clear()
    for info in list(getattr(weakref.finalize, "_registry", {}).values()):
        info.atexit = False
    log = sys.modules.get("logging")
    if log is not None:
        atexit.register(log.shutdown)
    mpu = sys.modules.get("multiprocessing.util")
    if mpu is not None and hasattr(mpu, "_exit_function"):
        atexit.register(mpu._exit_function)


def _child(req, stdin_fd, out_w, err_w, chan_w, close_fds, drop):
    """Runs in the forked child; never returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except Exception:
            pass
        if os.getppid() != _SERVER_PID:  # the server died before prctl took effect
            os._exit(1)
        # Signal state of a fresh interpreter: SIGINT raises KeyboardInterrupt, SIGPIPE ignored.
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_SETMASK, [])

        os.dup2(stdin_fd, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in close_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        env = os.environ
        if isinstance(req.get("env_full"), dict):  # the client's environment (a kept server's is older)
            env.clear()
            env.update(req["env_full"])
        env.pop("HOTKERNEL_RESULT_FD", None)
        env.pop("HOTKERNEL_FORKSERVER_PRELOAD", None)
        env.pop("HOTKERNEL_FORKSERVER_LIGHT", None)
        env.pop("HOTKERNEL_PY_SHA256", None)
        for k in req.get("env_unset") or []:
            env.pop(k, None)
        for k, v in (req.get("env_set") or {}).items():
            env[k] = v
        if chan_w is not None:
            os.set_inheritable(chan_w, True)  # as posix_runner does for a fresh process: exec'd helpers may write it too
            env[req.get("result_fd_env") or "HOTKERNEL_RESULT_FD"] = str(chan_w)

        import io

        unbuffered = bool(env.get("PYTHONUNBUFFERED"))
        enc = sys.stdout.encoding if sys.stdout else "utf-8"
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=enc)
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding=enc, write_through=unbuffered
        )
        sys.stderr = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding=enc, errors="backslashreplace",
            line_buffering=True, write_through=unbuffered,
        )
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr

        cwd = req.get("cwd")
        if cwd:
            os.chdir(cwd)
        script = req["script"]
        sys.argv = list(req.get("argv") or [script])
        # `python script.py` puts the script's folder (symlinks resolved) first on sys.path;
        # `python -I script.py` (this server started isolated) does not.
        if not sys.flags.isolated:
            sys.path[0] = os.path.dirname(os.path.realpath(script))
        _drop_server_modules(drop)
        _reseed()
        _forget_server_exit_work()
        _hand_over_exiting(env, bool(req.get("closes_before_exit")))
        import gc

        if hasattr(gc, "unfreeze"):
            gc.unfreeze()

        import traceback

        try:
            _run_script(script)
            code = 0
        except SystemExit as ex:
            if ex.code is None:
                code = 0
            elif isinstance(ex.code, int):
                code = ex.code & 0xFF
            else:
                print(ex.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        # What interpreter shutdown does: join threads, run atexit handlers, flush.
        try:
            import threading

            threading._shutdown()
        except Exception:
            pass
        try:
            import atexit

            atexit._run_exitfuncs()
        except Exception:
            pass
    except BaseException:
        try:
            import traceback

            traceback.print_exc()
        except Exception:
            pass
        code = 1
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(code)


class _Tail:
    """Keeps the last `limit` bytes written to it."""

    def __init__(self, limit):
        self.limit = max(1, int(limit))
        self.buf = bytearray()
        self.truncated = False

    def add(self, data):
        self.buf += data
        if len(self.buf) > self.limit + self.limit // 2:
            del self.buf[: len(self.buf) - self.limit]
            self.truncated = True

    def value(self):
        if len(self.buf) > self.limit:
            del self.buf[: len(self.buf) - self.limit]
            self.truncated = True
        return bytes(self.buf)


class _Requests:
    """Line reader over fd 0 that also notices EOF (hotkernel gone) while a run is waited on."""

    def __init__(self):
        self.buf = b""
        self.eof = False

    def feed(self):
        data = os.read(_IN_FD, 65536)
        if not data:
            self.eof = True
        self.buf += data

    def line(self):
        nl = self.buf.find(b"\n")
        if nl < 0:
            return None
        line, self.buf = self.buf[:nl], self.buf[nl + 1 :]
        return line

    def take_cancel(self, run_id):
        """True when {"op": "cancel", "id": run_id} has come in; that line is taken out."""
        if b'"cancel"' not in self.buf:
            return False
        lines = self.buf.split(b"\n")
        rest = lines.pop()  # not complete yet
        kept, found = [], False
        for line in lines:
            try:
                req = json.loads(line)
            except ValueError:
                req = None
            if isinstance(req, dict) and req.get("op") == "cancel" and req.get("id") == run_id:
                found = True
            else:
                kept.append(line + b"\n")
        self.buf = b"".join(kept) + rest
        return found


def _stdin_source(data):
    if not data:
        return os.open(os.devnull, os.O_RDONLY)
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("hotkernel-stdin")
    else:
        import tempfile

        f = tempfile.TemporaryFile()
        fd = os.dup(f.fileno())
        f.close()
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _serve_one(req, requests):
    import select

    _reap_exiting()
    reason = unforkable_reason()
    if reason:
        return _refused(req.get("id"), reason)
    script = req.get("script")
    if not script:
        return _refused(req.get("id"), "the request names no script")
    limit = int(req.get("max_capture_bytes") or (4 << 20))
    timeout_s = float(req.get("timeout_s") or 0)
    grace_s = float(req.get("kill_grace_s") if req.get("kill_grace_s") is not None else 2.0)

    stdin_fd = _stdin_source(base64.b64decode(req.get("stdin_b64") or ""))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    chan_r, chan_w = os.pipe() if req.get("result_channel") else (None, None)
    close_in_child = [fd for fd in (out_r, err_r, chan_r, stdin_fd, out_w, err_w) if fd is not None]
    close_in_child += [_RESULT_FD, _IN_FD] if _RESULT_FD not in (0, 1, 2) else []
    close_in_child += [_LISTEN_FD[0]] if _LISTEN_FD[0] is not None else []
    close_in_child += [_LOCK_FD[0]] if _LOCK_FD[0] is not None else []
    close_in_child += [c.fileno() for c in _PENDING]
    close_in_child += [_HOLDER["fd"]] if _HOLDER["fd"] is not None else []
    for f in (sys.stdout, sys.stderr):
        f.flush()
    drop = _server_module_names()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        _child(req, stdin_fd, out_w, err_w, chan_w, [fd for fd in close_in_child if fd not in (0, 1, 2)], drop)
    _ACTIVE_CHILD[0] = pid
    try:
        os.setpgid(pid, pid)  # both sides set it, so a kill right after fork hits the group
    except OSError:
        pass
    for fd in (stdin_fd, out_w, err_w, chan_w):
        if fd is not None:
            os.close(fd)

    tails = {out_r: _Tail(limit), err_r: _Tail(limit)}
    if chan_r is not None:
        tails[chan_r] = _Tail(limit)
    open_fds = set(tails)
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
    deadline = start + timeout_s if timeout_s > 0 else None
    kill_at = None
    timed_out = False
    cancelled = False
    status = None
    drain_until = None
    gone = False
    exiting = False
    closes_first = bool(req.get("closes_before_exit"))
    while True:
        now = time.perf_counter()
        if status is None and not cancelled and requests.take_cancel(req.get("id")):
            # The call was cancelled: this run's group goes as at a timeout; the server stays.
            cancelled = True
            if not timed_out:
                _kill_group(pid, signal.SIGTERM)
                kill_at = now + grace_s
        if status is None and deadline is not None and not timed_out and now >= deadline:
            timed_out = True
            _kill_group(pid, signal.SIGTERM)
            kill_at = now + grace_s
        if kill_at is not None and now >= kill_at and status is None:
            _kill_group(pid, signal.SIGKILL)
            kill_at = None
        if status is None:
            w, st = os.waitpid(pid, os.WNOHANG)
            if w == pid:
                status = st
                end = time.perf_counter()
                # Whatever is left in its group (a daemonised grandchild) goes too.
                _kill_group(pid, signal.SIGKILL)
                drain_until = end + 2.0
        if status is not None and (not open_fds or time.perf_counter() >= drain_until):
            break
        if status is None and closes_first and not open_fds and not timed_out:
            # It closed every pipe after its result: what is left is its exit.
            end = time.perf_counter()
            exiting = True
            break
        waits = list(open_fds)
        if not requests.eof:
            waits.append(_IN_FD)
        if _LISTEN_FD[0] is not None:
            waits.append(_LISTEN_FD[0])  # a connection made meanwhile is vetted at once (_take_waiting)
        if pidfd is not None and status is None:
            waits.append(pidfd)
        # With a pidfd the child's exit wakes us at once; without one, poll waitpid often.
        now = time.perf_counter()
        step = 1.0 if pidfd is not None else 0.005
        if status is None and deadline is not None and not timed_out:
            step = min(step, deadline - now)
        if kill_at is not None:
            step = min(step, kill_at - now)
        if status is not None:
            step = min(step, drain_until - now)
        ready, _, _ = select.select(waits, [], [], max(0.0, step))
        for fd in ready:
            if fd == _LISTEN_FD[0]:
                _take_waiting()
            elif fd == _IN_FD:
                requests.feed()
                if requests.eof:  # hotkernel went away: do not leave its run behind
                    _kill_group(pid, signal.SIGKILL)
                    if _LISTEN_FD[0] is None:
                        os._exit(0)
                    gone = True  # kept mode: the connection is gone, the server stays
                    break

            elif fd == pidfd:
                continue
            else:
                data = os.read(fd, 65536)
                if data:
                    tails[fd].add(data)
                else:
                    open_fds.discard(fd)
        if gone:
            break
    _ACTIVE_CHILD[0] = 0
    for fd in list(tails) + ([pidfd] if pidfd is not None else []):
        try:
            os.close(fd)
        except OSError:
            pass
    if gone:
        if status is None:
            os.waitpid(pid, 0)
        _sweep_strays()
        return None
    left = []
    if exiting:
        _EXITING[pid] = time.time() + EXIT_GRACE_S
        left = _end_what_it_left(pid)
    ans = {
        "event": "done",
        "id": req.get("id"),
        "pid": pid,
        "exiting": exiting,
        "exit_code": None if exiting else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1),
        "signal": 0 if exiting else (os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0),
        "timed_out": timed_out,
        "cancelled": cancelled,
        "wall_s": end - start,
        "stdout_b64": base64.b64encode(tails[out_r].value()).decode(),
        "stderr_b64": base64.b64encode(tails[err_r].value()).decode(),
        "stdout_truncated": tails[out_r].truncated,
        "stderr_truncated": tails[err_r].truncated,
    }
    if chan_r is not None:
        ans["channel_b64"] = base64.b64encode(tails[chan_r].value()).decode()
    changed = _scheduling_restored()
    if changed:
        ans["server_changed"] = changed
    if _LISTEN_FD[0] is not None:
        ans["strays"] = _once_each(_LATE_STRAYS + left + _sweep_strays())  # killed at the answer, reaped by the sweep
        del _LATE_STRAYS[:]
    elif left:
        ans["strays"] = left
    return ans


# This server's scheduling as it started: policy and its parameters, nice value, CPU affinity,
# and its autogroup's nice value. A run may change them for its parent (sched_setscheduler,
# setpriority, sched_setaffinity on getppid() need no signal and no file) or for the autogroup it
# shares with the server (a run cannot leave the server's session: its own /proc/<pid>/autogroup,
# which the sandbox lets it write, since cuInit needs its own /proc entries), and every later run
# forked from here would inherit them: checked and put back at every answer (_scheduling_restored).
_SCHEDULING = [None]
_AUTOGROUP = "/proc/self/autogroup"


def _autogroup_nice():
    """This process's autogroup's nice value ("/autogroup-N nice X"); None without autogroups."""
    try:
        with open(_AUTOGROUP, "rb") as f:
            return int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def _scheduling_now():
    try:
        return (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority, os.getpriority(os.PRIO_PROCESS, 0),
                frozenset(os.sched_getaffinity(0)), _autogroup_nice())
    except (AttributeError, OSError):
        return None


def _scheduling_restored():
    """'' when this server's scheduling is as it started; else what a run changed, put back (the
    answer says so, and hotkernel voids that run). A change it cannot undo (a nice value only a
    privileged process may lower) ends the server once it has answered: no run forks from it again."""
    was, now = _SCHEDULING[0], _scheduling_now()
    if was is None or now is None or now == was:
        return ""
    what = []
    if now[:2] != was[:2]:
        what.append("scheduling policy %d (priority %d), was %d (%d)" % (now[0], now[1], was[0], was[1]))
    if now[2] != was[2]:
        what.append("nice %d, was %d" % (now[2], was[2]))
    if now[3] != was[3]:
        what.append("CPUs %s, was %s" % (sorted(now[3])[:16], sorted(was[3])[:16]))
    if now[4] != was[4]:
        what.append("autogroup nice %s, was %s" % (now[4], was[4]))
    try:
        os.sched_setscheduler(0, was[0], os.sched_param(was[1]))
        os.setpriority(os.PRIO_PROCESS, 0, was[2])
        os.sched_setaffinity(0, was[3])
        if now[4] != was[4]:
            with open(_AUTOGROUP, "w") as f:
                f.write(str(was[4]))
    except OSError:
        pass
    if _scheduling_now() != was:
        _END_AFTER_ANSWER[0] = True
        what.append("not undone: this fork server ends")
    return "a run changed the fork server's " + "; ".join(what)


_END_AFTER_ANSWER = [False]


def _parents():
    """{pid: parent pid} of every process, from /proc."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d, "rb") as f:  # bytes: a name need not be UTF-8
                    out[int(d)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return out


def _read_proc(pid, name):
    try:
        with open("/proc/%d/%s" % (pid, name), "rb") as f:
            return f.read()
    except OSError:
        return b""


def _is_zombie(pid):
    stat = _read_proc(pid, "stat")
    return stat.rsplit(b")", 1)[-1].split()[:1] == [b"Z"]


def _cmdline(pid):
    """pid's command line, cut to 200 characters; "?" for a zombie or a process gone. A process
    in the middle of its exec has none yet (its parent already runs on after a vfork): it gets a
    moment to finish, then its name in brackets, as ps writes it."""
    for _ in range(20):
        cmd = _read_proc(pid, "cmdline").replace(b"\0", b" ").decode("utf-8", "replace").strip()
        if cmd:
            return cmd[:200]
        if _is_zombie(pid) or not os.path.exists("/proc/%d" % pid):
            return "?"
        time.sleep(0.002)
    comm = _read_proc(pid, "comm").decode("utf-8", "replace").strip()
    return "[%s]" % comm[:200] if comm else "?"


def _children():
    """(pid, command line) of every process whose parent is this server; a zombie's command line
    is "?"."""
    me = os.getpid()
    return [(pid, _cmdline(pid)) for pid, pp in _parents().items() if pp == me]


def _sweep_strays():
    """Kills and reaps what the last run left re-parented to this server (it is their subreaper);
    returns 'pid N: command' for each, as hotkernel's own sweep reports them."""
    killed = []
    for _ in range(20):
        kids = [(pid, cmd) for pid, cmd in _children()
                if pid not in _EXITING and pid != _HOLDER["pid"]]  # those are reaped apart; the holder stays
        if not kids:
            break
        for pid, cmd in kids:
            _kill_group(pid, signal.SIGKILL)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            if cmd != "?":  # a zombie: killed already (and said) by _end_what_it_left
                killed.append("pid %d: %s" % (pid, cmd))
        for pid, _ in kids:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
    return killed


def _ready_line(info, errors):
    reason = unforkable_reason()
    return {
        "event": "ready",
        "pid": os.getpid(),
        "python": sys.executable,
        "version": sys.version.split()[0],
        "import_s": _IMPORT_S[0],
        "forkable": reason is None,
        "reason": reason,
        "import_errors": errors,
        **info,
    }


def _serve(requests):
    """Answers requests until the client goes (EOF) or says quit; True for quit."""
    while True:
        line = requests.line()
        if line is None:
            if requests.eof:
                return False
            import select

            if _EXITING:  # a run answered while exiting: reap it while the client thinks
                if not select.select([_IN_FD], [], [], 0.05)[0]:
                    _reap_exiting()
                    continue
            if _LISTEN_FD[0] is not None:  # kept: while the client thinks, connections are vetted at once
                if _LISTEN_FD[0] in select.select([_IN_FD, _LISTEN_FD[0]], [], [])[0]:
                    _take_waiting()
                    continue
            requests.feed()
            continue
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as ex:
            _send(_refused(None, "bad request line: %s" % ex))
            continue
        op = req.get("op")
        if op == "quit":
            return True
        if op == "ping":
            _send(_pong())
            continue
        if op == "cancel":  # for a run answered already
            continue
        try:
            ans = _serve_one(req, requests)
        except Exception as ex:
            ans = _refused(req.get("id"), "the fork server failed: %r" % (ex,))
        if ans is None:  # the client went away during the run
            return False
        _send(ans)
        if _END_AFTER_ANSWER[0]:
            return True  # as a quit: a kept server stops listening, a private one ends


def _import_stamp():
    """What the imports came from on disk: a kept server whose torch or triton was reinstalled
    since must not fork runs that mix old modules in memory with new files on disk."""
    stamp = []
    for name in ("torch", "triton", "hotkernel_contract"):
        f = getattr(sys.modules.get(name), "__file__", None)
        try:
            st = os.stat(f) if f else None
        except OSError:
            st = None
        stamp.append((name, f, st.st_mtime_ns if st else None, st.st_ino if st else None))
    return stamp


def _listen_kept(path):
    """Kept mode, before the imports: listens on the Unix socket at `path` at once, so a client
    that comes while torch is still importing (the bench right after the `new` that started this
    server) connects and waits for the ready line instead of starting a second server.
    Returns (socket, lock fd, the socket file's inode)."""
    import socket

    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:
        pass
    lock_fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    _LOCK_FD[0] = lock_fd
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(path)  # a dead server's socket; the client that started us holds the lock
    except OSError:
        pass
    old_umask = os.umask(0o177)
    try:
        srv.bind(path)
    finally:
        os.umask(old_umask)
    srv.listen(8)
    _LISTEN_FD[0], _LISTEN[0] = srv.fileno(), srv
    return srv, lock_fd, os.stat(path).st_ino


def _sandboxed(pid):
    """Whether a process runs with no_new_privs, as every measured run does once the kernel
    sandbox is applied (hotkernel_sandbox.py). A server started without it refuses such a peer;
    one started with it (the whole session under no_new_privs) cannot tell. Unknown: True."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("NoNewPrivs:"):
                    return line.split()[1] != "0"
    except (OSError, IndexError, ValueError):
        pass
    return True


def _admit(conn):
    """Whether a connection may be served: its peer is the user who started this server and not
    inside a measured run (a sandboxed candidate asking for an unsandboxed child). Not admitted,
    it is closed, and with it anything it sent and nobody read."""
    import socket
    import struct

    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        peer_pid, peer_uid = struct.unpack("3i", creds)[:2]
    except OSError:
        peer_pid, peer_uid = 0, -1
    if peer_uid != os.getuid() or (_sandboxed(peer_pid) and not _sandboxed(os.getpid())):
        conn.close()
        return False
    return True


def _take_waiting():
    """Kept mode, while a client is served: takes one connection from the queue and vets it now.
    A measured run could connect to this server's socket (Landlock does not cover connecting to a
    socket by its path) and park its descriptors there, in a message no one reads, while the queue
    waited for the client to finish: a lock, or a GiB of memfd, outlived the run that made it
    until the verify ended. Its connection is closed here, and what it sent goes with it; one
    that is admitted waits its turn in _PENDING."""
    import socket

    _LISTEN[0].setblocking(False)  # the one select saw may be gone already: never wait here
    try:
        conn, _ = _LISTEN[0].accept()
    except BlockingIOError:
        return
    except (OSError, socket.timeout):
        time.sleep(0.05)  # out of descriptors (EMFILE): the socket stays readable; no busy loop beside a run
        return
    finally:
        _LISTEN[0].setblocking(True)
    conn.setblocking(True)
    if _admit(conn):
        _PENDING.append(conn)


def _serve_kept(path, listening, idle_s, info, errors):
    """Kept mode: one connection at a time on the socket _listen_kept opened, until idle; those
    that came while another was served were vetted then (_take_waiting) and go first."""
    global _IN_FD, _RESULT_FD
    import fcntl
    import select

    srv, lock_fd, inode = listening
    stamp = _import_stamp()
    started, served = _STARTED_AT, 0

    def still_ours():
        try:
            return os.stat(path).st_ino == inode
        except OSError:
            return False

    def unlisten():
        """Removes the socket, unless a newer server has put its own at that path."""
        if still_ours():
            os.unlink(path)

    while True:
        if _PENDING:  # admitted while another client was served: its turn
            conn = _PENDING.pop(0)
            ready = True
        elif _EXITING:  # reap the last run's exit promptly, then wait as before
            ready, _, _ = select.select([srv], [], [], 0.05)
            _reap_exiting()
            if not ready:
                continue
        else:
            ready, _, _ = select.select([srv], [], [], idle_s)
        if not ready:
            # Idle: end, unless a client holds the lock (it is about to connect).
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue
            if select.select([srv], [], [], 0)[0]:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)
                continue
            unlisten()
            _reap_exiting(wait=True)
            return
        if _import_stamp() != stamp:
            # Reinstalled under us: stop listening first, so the caller's next try starts a new server.
            for waiting in _PENDING + ([conn] if ready is True else []):
                waiting.close()
            del _PENDING[:]
            unlisten()
            return
        if ready is not True:
            conn, _ = srv.accept()
            # Only the user who started it may run code through it, and never from inside a
            # measured run: a sandboxed candidate asking for an unsandboxed child.
            if not _admit(conn):
                continue
        served += 1
        _IN_FD = _RESULT_FD = conn.fileno()
        try:
            _send(dict(_ready_line(info, errors), kept=True, age_s=round(time.time() - started, 3),
                       connection=served))
            quit_asked = _serve(_Requests())
        except OSError:
            quit_asked = False
        conn.close()
        _IN_FD, _RESULT_FD = -1, -1
        if quit_asked or not still_ours():
            unlisten()
            _reap_exiting(wait=True)
            return


def main():
    global _RESULT_FD
    signal.signal(signal.SIGTERM, _on_term)
    try:
        _EXPECTED.update(json.loads(os.environ.pop("HOTKERNEL_PY_SHA256", "") or "{}"))
    except ValueError:
        pass
    kept = os.environ.pop("HOTKERNEL_FORKSERVER_SOCKET", None)
    idle_s = float(os.environ.pop("HOTKERNEL_FORKSERVER_IDLE_S", "600") or 600)
    if "HOTKERNEL_RESULT_FD" not in os.environ and not kept:  # run by hand: answer on the real stdout
        _RESULT_FD = os.dup(1)
    # The protocol runs on the private pipe; anything an import prints goes to stderr.
    try:
        os.dup2(2, 1)
    except OSError:
        pass
    listening = _listen_kept(kept) if kept else None
    info, errors = _preload()
    _IMPORT_S[0] = time.perf_counter() - _T0
    _SCHEDULING[0] = _scheduling_now()
    import gc

    if hasattr(gc, "freeze"):  # fewer copy-on-write page faults in each child
        gc.collect()
        gc.freeze()
    _hold_gpu()
    info["gpu_held"] = _HOLDER["pid"] is not None
    if kept:
        _serve_kept(kept, listening, idle_s, info, errors)
        return
    _send(_ready_line(info, errors))
    _serve(_Requests())
    _reap_exiting(wait=True)


if __name__ == "__main__":
    main()
