"""hotkernel's kernel sandbox: applied by the harness first, before its inputs, CUDA context and
the candidate, while its thread is the process's only one.

What the kernel enforces from then on, for this process and everything it starts (the rules are
inherited across fork and exec and cannot be lifted):

- Landlock (syscalls 444-446 through ctypes): reading and executing stay allowed everywhere;
  writing, creating, removing, renaming and truncating only beneath the run's scratch folder and
  the role's compiler caches (handed in by hotkernel), plus writing the character devices a run
  opens read-write (/dev/null, /dev/zero, /dev/full, the NVIDIA devices) and the process's own
  /proc/<pid> entries (cuInit writes there; PROC_GRANT). Everything else, the
  target's folder, the user site directory, every __pycache__ and hotkernel's cache included, is
  read-only. LANDLOCK_ACCESS_FS_IOCTL_DEV is not handled, so the CUDA driver's ioctls still work.
- On Landlock ABI >= 6: signals and abstract Unix sockets scoped to the run (no signal to the
  fork server, hotkernel or any process outside the run; no connection to an abstract socket
  outside it).
- no_new_privs (needed by Landlock without CAP_SYS_ADMIN; no set-uid escape either).
- Resource limits, only ever lowered: no core files, a file-size limit, no POSIX message queues
  (they would outlive the run). RLIMIT_NPROC is left alone: it counts threads.
- A seccomp filter (on x86_64 and aarch64, every thread of the process): no SysV semaphore or
  message queue can be made or opened (EPERM), no process's memory or descriptors reached through
  ptrace, process_vm_readv/writev or pidfd_getfd (EPERM; its own either), no namespace made or
  entered (unshare, setns, a clone with a CLONE_NEW* flag: EPERM; clone3: ENOSYS, on which glibc
  uses clone), no key in the kernel's key store (add_key, request_key, keyctl: EPERM), no
  resource limit of another process read or set (prlimit64 of a pid but 0: EPERM), no seccomp
  filter with a listener installed and no SIGSYS handler set (EPERM: either answers the harness's
  own calls with the candidate's data; FilterLedger counts any other filter), and no syscall
  of another ABI (32-bit or x32) runs. Semaphores, message queues and keys outlive every process,
  and unlike shared memory (swept after each run: hotkernel knows its maker) the kernel does not
  say who made them, so a run could count its runs or pass word to a later one through them.

landlock_restrict_self (and the capabilities' drop) binds the calling thread and the threads and
processes it starts later; threads already running would keep their old rights. The harness
applies it while it has no other thread; the record says how many there were (threads_before).

HOTKERNEL_TEST_NO_LANDLOCK=1 (read by read_test_switch(), before the harness scrubs HOTKERNEL_*
from the environment) makes apply() act as on a kernel without Landlock; it exists for the tests
of the refusal path and can only take protection away where the user also opts out.
"""
import builtins as _shared_builtins
__builtins__ = dict(vars(_shared_builtins))  # this module's own builtins (hotkernel_defences.own_builtins says why)

import ctypes
import os

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_REFER = 1 << 13
_TRUNCATE = 1 << 14
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
_SCOPE_SIGNAL = 1 << 1

# Largest file a run may write (a compiled extension is tens of MB; the limit stops a disk filler).
FSIZE_LIMIT = 4 << 30
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full")
FS_CONFINED = "read-only outside scratch"

_TEST_SWITCH = "HOTKERNEL_TEST_NO_LANDLOCK"


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def read_test_switch():
    """True when the tests ask for a machine without Landlock (see the module's docstring)."""
    return os.environ.get(_TEST_SWITCH) == "1"


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _syscall(libc, nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def landlock_abi(libc=None):
    """The kernel's Landlock ABI version; 0 where it has none (too old, or not enabled at boot)."""
    try:
        return int(_syscall(libc or _libc(), _SYS_CREATE_RULESET, ctypes.c_void_p(None), ctypes.c_size_t(0),
                            ctypes.c_uint32(_CREATE_RULESET_VERSION)))
    except (OSError, AttributeError):
        return 0


def _fs_rights(abi):
    """Every filesystem right this ABI knows but IOCTL_DEV (bits 0-12, REFER from 2, TRUNCATE from 3)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    return rights


def _attr_size(abi):
    # The struct grew with the ABI (net rights in 4, scopes in 6): give the size this kernel knows.
    return 24 if abi >= 6 else 16 if abi >= 4 else 8


def _add_rule(libc, ruleset, path, access):
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        attr = _PathBeneathAttr(access, fd)
        _syscall(libc, _SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr),
                 ctypes.c_uint32(0))
    finally:
        os.close(fd)


def _device_files():
    out = [p for p in DEVICE_FILES if os.path.exists(p)]
    try:
        out += sorted(os.path.join("/dev", n) for n in os.listdir("/dev") if n.startswith("nvidia"))
    except OSError:
        pass
    return out


def _landlock(libc, abi, writable):
    """Restricts this thread (and what it starts) to writes beneath `writable`; returns the scopes."""
    rights = _fs_rights(abi)
    scoped = (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if abi >= 6 else 0
    attr = _RulesetAttr(rights, 0, scoped)
    ruleset = int(_syscall(libc, _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(_attr_size(abi)),
                           ctypes.c_uint32(0)))
    try:
        _add_rule(libc, ruleset, "/", _EXECUTE | _READ_FILE | _READ_DIR)
        for d in writable:
            _add_rule(libc, ruleset, d, rights)
        file_rights = _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
        for p in _device_files():
            # A folder (/dev/nvidia-caps) takes the same file rights for what is beneath it.
            _add_rule(libc, ruleset, p, file_rights)
        _syscall(libc, _SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return scoped


def _limit(resource, which, value):
    soft, hard = resource.getrlimit(which)
    new = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (new if soft == resource.RLIM_INFINITY else min(soft, new), new))
    return new


def _rlimits():
    import resource
    out = {}
    for name, which, value in (("core", resource.RLIMIT_CORE, 0), ("fsize", resource.RLIMIT_FSIZE, FSIZE_LIMIT),
                               ("msgqueue", getattr(resource, "RLIMIT_MSGQUEUE", None), 0)):
        if which is None:
            continue
        try:
            out[name] = _limit(resource, which, value)
        except (OSError, ValueError):
            out[name] = "unchanged"
    return out


_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _capabilities_held():
    """This thread's effective capabilities, as /proc says them (0 when it cannot be read)."""
    try:
        with open("/proc/thread-self/status", errors="replace") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def _drop_capabilities(libc):
    """Every capability this process holds, gone for good: its bounding set emptied, the ambient
    set cleared, and its effective, permitted and inheritable sets zeroed (capset). A run as root
    keeps root's uid, but none of what root may do besides that: setting the clock (adjtimex),
    locking memory that outlives the run, raising a priority, and the rest. Returns "dropped",
    "none held", or what failed."""
    held = _capabilities_held()
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)) != 0 and ctypes.get_errno() == 22:  # EINVAL: past the last one
            break
    libc.prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), ctypes.c_ulong(0), ctypes.c_ulong(0),
               ctypes.c_ulong(0))

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(_LINUX_CAPABILITY_VERSION_3, 0), (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        return "capset failed: %s" % os.strerror(ctypes.get_errno())
    if _capabilities_held():
        return "some capabilities are still held"
    return "dropped" if held else "none held"


# seccomp: the architectures the filter knows, as (AUDIT_ARCH_*, semget, msgget, seccomp(2)).
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 64, 68, 317), "aarch64": (0xC00000B7, 190, 186, 277)}
_X32_BIT = 0x40000000  # x86_64's x32 ABI: the same arch, syscall numbers with this bit set
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000  # | errno: the call fails with it, unrun
_SECCOMP_RET_ERRNO_EPERM = _SECCOMP_RET_ERRNO | 1
_SECCOMP_RET_ERRNO_ENOSYS = _SECCOMP_RET_ERRNO | 38
SYSV_IPC_DENIED = "semaphores and message queues denied"
# setsid and setpgid do nothing and return 0: every process a run makes stays in the run's
# process group, where the harness counts its CPU (a helper forked at import computes outside the
# calls) and the sweep after the run finds it. A library that detaches a child still runs.
_GROUP_CALLS = {"x86_64": (112, 109), "aarch64": (157, 154)}
_SECCOMP_RET_ERRNO_NONE = _SECCOMP_RET_ERRNO  # errno 0: the call returns 0 without running
GROUP_KEPT = "kept (setsid and setpgid do nothing)"
# Another process's memory or descriptors, this one's through them: ptrace, process_vm_readv,
# process_vm_writev, pidfd_getfd. A write through process_vm_writev on the run's own pid raises
# no audit event: it rewrote time.perf_counter's C function behind the harness's saved reference
# (cheats/process_vm_clock.py). No honest kernel calls them.
# And userfaultfd: outputs in memory whose pages are filled on their first read, by a thread of
# the candidate's, return at once and are computed only when the checks read them, in time no call
# reports (a red team's candidate read 20x with every check passed; test_kernel_sandbox.py).
# /dev/userfaultfd makes one too: Landlock keeps it
# read-only, and a userfaultfd needs it read-write.
_MEMORY_CALLS = {"x86_64": (101, 310, 311, 438, 323), "aarch64": (117, 270, 271, 438, 282)}
MEMORY_DENIED = "denied (ptrace, process_vm_readv, process_vm_writev, pidfd_getfd, userfaultfd)"
# Namespaces: unshare and setns, and a clone with a CLONE_NEW* flag. A child forked at import made
# thousands of network namespaces whose cleanup, in the kernel's own threads when the run ended,
# ran into the next run's time (no sweep or CPU count sees a kernel worker). No kernel needs one.
_NAMESPACE_CALLS = {"x86_64": (272, 308), "aarch64": (97, 268)}
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
_CLONE_NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
NAMESPACES_DENIED = "denied (unshare, setns, clone of a namespace)"
# Making a process: fork, vfork (x86_64 only), clone without CLONE_THREAD; clone3 answers ENOSYS,
# on which glibc makes its threads with clone.
_SPAWN_CALLS = {"x86_64": (57, 58, 56, 435), "aarch64": (None, None, 220, 435)}
_CLONE_THREAD = 0x00010000
NEW_PROCESSES_DENIED = "denied from the timed samples on"
# The kernel's key store: add_key, request_key, keyctl. A key in the user's keyring outlives every
# process and names no run: a red team's candidate kept a run counter there across verifies, each
# with a fresh HOME, as SysV semaphores allowed before they were denied. No kernel needs one.
_KEYRING_CALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}
KEYRING_DENIED = "denied (add_key, request_key, keyctl)"
# prlimit64 on any process but the caller's own (pid 0, as glibc's getrlimit and setrlimit ask):
# it needs no capability, only the same user, and no Landlock scope covers it. A red team's
# candidate set the kept fork server's soft RLIMIT_CPU to 1 s, so the kernel killed it (and any
# process of the user: another verify's runs, the CLI) with SIGXCPU, and its RLIMIT_NOFILE to 10,
# so the next run could not be started. EPERM.
_PRLIMIT = {"x86_64": 302, "aarch64": 261}
LIMITS_OWN = "own only (prlimit64 of another process denied)"


# A seccomp filter of the candidate's with a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER), or one
# that traps to a SIGSYS handler, answers the harness's own system calls with data of its choosing:
# a red team's filter sent each getrandom(6) of the harness's thread to a thread of its own, which
# wrote the same bytes every time, so every fresh round drew the same set and a memo of the output
# read 3.2x faster, clean. Both EPERM: seccomp(2) with that flag, and a SIGSYS handler set
# (rt_sigaction of SIGSYS with an action; reading it is allowed). A filter of another kind can
# still make a call fail or return 0 without running: the harness counts the process's filters
# (FilterLedger) and proves its own spawn filter is in force by a canary only it can know.
_SECCOMP_FILTER_FLAG_NEW_LISTENER = 8
_SIGACTION = {"x86_64": 13, "aarch64": 134}
_SIGSYS = 31  # x86_64 and aarch64
# The spawn filter's canary: getpid with this first argument answers ENOTRECOVERABLE (131 on both),
# which a filter made before the number was drawn cannot know to give for it alone.
_GETPID = {"x86_64": 39, "aarch64": 172}
_CANARY_ERRNO = 131
SECCOMP_GUARDED = "guarded (no listener, no SIGSYS handler)"


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06


def _assemble(lines):
    """A BPF program from (code, jt, jf, k) lines whose jt/jf may name a label; ("label", name)
    lines mark where they go. Jumps are forward only, as BPF's are."""
    where, n = {}, 0
    for line in lines:
        if line[0] == "label":
            where[line[1]] = n
        else:
            n += 1
    prog = []
    for line in lines:
        if line[0] == "label":
            continue
        code, jt, jf, k = line
        i = len(prog)
        prog.append((code, where[jt] - i - 1 if isinstance(jt, str) else jt,
                     where[jf] - i - 1 if isinstance(jf, str) else jf, k))
    return prog


def _head(arch):
    """Another ABI, or x86_64's x32 numbers: denied; else the syscall's number loaded."""
    return [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, "ours", 0, arch), (_RET_K, 0, 0, _SECCOMP_RET_ERRNO_EPERM),
            ("label", "ours"), (_LD_W_ABS, 0, 0, 0), (_JGE_K, "deny", 0, _X32_BIT)]


def _sysv_ipc_filter(arch, denied, ignored, clone, clone3, own_pid_only=(), seccomp=None, sigaction=None):
    """The BPF program: EPERM for each syscall in `denied` (semget, msgget, ...), x32 numbers and
    any other ABI; 0 without running it for each in `ignored` (setsid, setpgid); EPERM for each in
    `own_pid_only` (prlimit64) whose first argument is a pid other than 0 (the caller); EPERM for a
    clone whose flags make a namespace, ENOSYS for clone3 (its flags are behind a pointer; glibc
    then uses clone); EPERM for `seccomp` (its number) with SECCOMP_FILTER_FLAG_NEW_LISTENER in its
    flags and for `sigaction` (rt_sigaction's) setting an action for SIGSYS; the rest allowed.
    An argument's low 32 bits are at 16 + 8 i in seccomp_data, its high ones 4 further."""
    guards = []
    if seccomp is not None:
        guards += [("label", "seccomp"), (_LD_W_ABS, 0, 0, 24),
                   (_JSET_K, "deny", "allow", _SECCOMP_FILTER_FLAG_NEW_LISTENER)]
    if sigaction is not None:
        guards += [("label", "sigaction"), (_LD_W_ABS, 0, 0, 16), (_JEQ_K, "sigsys", "allow", _SIGSYS),
                   ("label", "sigsys"), (_LD_W_ABS, 0, 0, 24), (_JEQ_K, "act_high", "deny", 0),
                   ("label", "act_high"), (_LD_W_ABS, 0, 0, 28), (_JEQ_K, "allow", "deny", 0)]
    return _assemble(_head(arch) + [(_JEQ_K, "deny", 0, nr) for nr in denied] +
                     [(_JEQ_K, "ignore", 0, nr) for nr in ignored] +
                     [(_JEQ_K, "own_pid", 0, nr) for nr in own_pid_only] +
                     ([(_JEQ_K, "seccomp", 0, seccomp)] if seccomp is not None else []) +
                     ([(_JEQ_K, "sigaction", 0, sigaction)] if sigaction is not None else []) +
                     [(_JEQ_K, "nosys", 0, clone3)] +
                     _clone_flags(clone, "deny", "allow", _CLONE_NEW_NAMESPACES,
                                  extra=[("label", "own_pid"), (_LD_W_ABS, 0, 0, 16), (_JEQ_K, "allow", "deny", 0)]
                                  + guards) +
                     [("label", "ignore"), (_RET_K, 0, 0, _SECCOMP_RET_ERRNO_NONE)] + _NOSYS)


def _spawn_filter(arch, fork, vfork, clone, clone3, canary=None):
    """The BPF program: EPERM for fork, vfork and a clone without CLONE_THREAD (a process, not a
    thread), ENOSYS for clone3 (its flags are behind a pointer), and the head's denials. canary:
    (getpid's number, a 32-bit value): getpid with that first argument answers _CANARY_ERRNO."""
    never = 0xFFFFFFFF  # a number no syscall has: where the architecture has no fork or vfork
    check = []
    if canary is not None:
        check = [(_JEQ_K, 0, "not_getpid", canary[0]), (_LD_W_ABS, 0, 0, 16),
                 (_JEQ_K, 0, "allow_getpid", canary[1]), (_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _CANARY_ERRNO),
                 ("label", "allow_getpid"), (_RET_K, 0, 0, _SECCOMP_RET_ALLOW), ("label", "not_getpid")]
    return _assemble(_head(arch) + check + [
        (_JEQ_K, "nosys", 0, clone3),
        (_JEQ_K, "deny", 0, never if fork is None else fork),
        (_JEQ_K, "deny", 0, never if vfork is None else vfork)] +
        _clone_flags(clone, "allow", "deny", _CLONE_THREAD) + _NOSYS)


def _clone_flags(clone, when_set, when_clear, flags, extra=()):
    """The tail both filters share: any other syscall allowed; clone judged by its flags (args[0],
    its low 32 bits) against `flags`, going to the label `when_set` or `when_clear`; `extra` lines
    (which may jump to the next two); the "allow" and "deny" (EPERM) labels."""
    return [(_JEQ_K, "clone", 0, clone),
            (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
            ("label", "clone"), (_LD_W_ABS, 0, 0, 16),
            (_JSET_K, when_set, when_clear, flags)] + list(extra) + [
            ("label", "allow"), (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
            ("label", "deny"), (_RET_K, 0, 0, _SECCOMP_RET_ERRNO_EPERM)]


_NOSYS = [("label", "nosys"), (_RET_K, 0, 0, _SECCOMP_RET_ERRNO_ENOSYS)]


def _install(libc, prog, nr_seccomp):
    filters = (_SockFilter * len(prog))(*[_SockFilter(c, t, f, k) for c, t, f, k in prog])
    fprog = _SockFprog(len(prog), ctypes.cast(filters, ctypes.POINTER(_SockFilter)))
    _syscall(libc, nr_seccomp, ctypes.c_ulong(_SECCOMP_SET_MODE_FILTER), ctypes.c_ulong(_SECCOMP_FILTER_FLAG_TSYNC),
             ctypes.byref(fprog))


def _deny_sysv_ipc(libc):
    """Installs the seccomp filter on every thread (TSYNC): SysV semaphores and message queues
    denied, other processes' memory and descriptors too (_MEMORY_CALLS), new sessions and process
    groups not made. Returns SYSV_IPC_DENIED or why not."""
    machine = os.uname().machine
    if machine not in _SECCOMP_ARCH:
        return "not on %s (seccomp filter for x86_64 and aarch64 only)" % machine
    arch, semget, msgget, nr_seccomp = _SECCOMP_ARCH[machine]
    try:
        _install(libc, _sysv_ipc_filter(arch, (semget, msgget) + _MEMORY_CALLS[machine] + _NAMESPACE_CALLS[machine]
                                        + _KEYRING_CALLS[machine], _GROUP_CALLS[machine],
                                        clone=_SPAWN_CALLS[machine][2], clone3=_SPAWN_CALLS[machine][3],
                                        own_pid_only=(_PRLIMIT[machine],), seccomp=nr_seccomp,
                                        sigaction=_SIGACTION[machine]), nr_seccomp)
    except OSError as e:
        return "seccomp failed: %s" % e.strerror
    return SYSV_IPC_DENIED


def deny_new_processes():
    """From the timed samples on, no process of the run makes another (fork, vfork, clone of a
    process; threads still can): a helper born and gone inside the samples, its CPU counted
    nowhere the harness can read, cannot be. Needs no_new_privs (the sandbox set it). Returns
    NEW_PROCESSES_DENIED or why not."""
    machine = os.uname().machine
    if machine not in _SECCOMP_ARCH:
        return "not on %s (seccomp filter for x86_64 and aarch64 only)" % machine
    libc = _libc()
    # Drawn now, after everything the candidate ran: no filter it made before can answer for it.
    value = int.from_bytes(os.urandom(4), "little")
    try:
        _install(libc, _spawn_filter(_SECCOMP_ARCH[machine][0], *_SPAWN_CALLS[machine],
                                     canary=(_GETPID[machine], value)), _SECCOMP_ARCH[machine][3])
    except (AttributeError, OSError) as e:
        return "seccomp failed: %s" % (getattr(e, "strerror", None) or e)
    return NEW_PROCESSES_DENIED if _canary_answers(libc, _GETPID[machine], value) else NOT_IN_FORCE


NOT_IN_FORCE = ("the spawn filter the harness installed is not in force (its canary got no answer): a seccomp "
                "filter of the candidate's made the harness's own seccomp call return without running")


def _canary_answers(libc, getpid, value):
    """Whether getpid(value) answers _CANARY_ERRNO and getpid(another value) the pid: the spawn
    filter drawn with `value` is in force."""
    def call(arg):
        ctypes.set_errno(0)
        r = libc.syscall(ctypes.c_long(getpid), ctypes.c_ulong(arg))
        return r, ctypes.get_errno()
    r, e = call(value)
    r2, _ = call(value ^ 0x5A5A5A5A)
    return r == -1 and e == _CANARY_ERRNO and r2 == os.getpid()


def seccomp_filters():
    """The number of seccomp filters in force on this thread (/proc/self/status, Linux 5.9 on), or
    None where the kernel does not say."""
    try:
        with open("/proc/thread-self/status", "rb") as f:
            text = f.read()
    except OSError:
        return None
    for line in text.split(b"\n"):
        if line.startswith(b"Seccomp_filters:"):
            try:
                return int(line.split(b":", 1)[1])
            except ValueError:
                return None
    return None


class FilterLedger:
    """The seccomp filters this process should have: the sandbox's (counted when it is made, right
    after the sandbox and before the candidate's import) and each spawn filter the harness installs
    (own_added). foreign() says why not when the count differs: a filter of the candidate's can make
    any system call of the harness's fail, or return 0 without running (its own seccomp call, a
    signal mask), which no check of the harness's could tell from the call's success."""

    def __init__(self):
        self.expected = seccomp_filters()

    def own_added(self):
        if self.expected is not None:
            self.expected += 1

    def foreign(self):
        """None when the filters in force are the harness's; else a sentence saying what is not."""
        if self.expected is None:
            return None
        now = seccomp_filters()
        if now == self.expected:
            return None
        if now is None:
            return ("the run's seccomp filters could no longer be counted (/proc/thread-self/status): something "
                    "made the harness's own reads fail")
        return ("%d seccomp filter(s) are in force where the sandbox and the harness installed %d: the candidate "
                "installed its own, which can make the harness's system calls fail or return without running"
                % (now, self.expected))


def _threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


# The part of the process's own /proc entries a run may write (PROC_GRANTS names each choice).
# The CUDA driver's initialisation writes there (cuInit failed with error 304 on an H200 with
# none). "task", its threads' entries only, would leave the process's own (autogroup,
# oom_score_adj, timerslack_ns) read-only, where through autogroup a run can lower the priority of
# every later run of its fork server (the server puts it back and voids the run,
# cheats/autogroup_nice.py); it becomes the default once bench/probes/sandbox_proc_probe.py has
# shown on a GPU that CUDA, CUPTI and Triton work under it.
PROC_GRANTS = {"task": "/proc/%d/task", "process": "/proc/%d", "none": None}
PROC_GRANT = "process"


def flush_writes(dirs):
    """Writes the run before this one left in the page cache, on the filesystems of the folders a
    run may write (its scratch folder, the compiler caches), flushed now (syncfs), before this run
    times anything: a red team's candidate wrote 3 GB into its compiler cache as it exited, and the
    kernel's writeback of it ran during the next run's samples (the baseline's, 3.2x slower in
    one). Returns the seconds it took."""
    import time
    t0 = time.perf_counter()
    try:
        syncfs, seen = _libc().syncfs, set()
    except (OSError, AttributeError):  # no such call in this C library: nothing to flush with
        return time.perf_counter() - t0
    for d in dirs:
        try:
            dev = os.stat(d).st_dev
            if dev in seen:
                continue
            seen.add(dev)
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        except (OSError, TypeError, ValueError):
            continue
        try:
            syncfs(fd)
        finally:
            os.close(fd)
    return time.perf_counter() - t0


def apply(scratch, caches, no_landlock=False, proc_grant=PROC_GRANT):
    """Applies the sandbox to this process; returns the record of what is in force:
    {"landlock_abi": N or 0, "fs": "read-only outside scratch" or "none", "signals": "scoped" or
    "none", "abstract_unix_sockets": ..., "no_new_privs": bool, "rlimits": {...}, "capabilities",
    "sysv_ipc": SYSV_IPC_DENIED or why not, "process_group": GROUP_KEPT or why not,
    "process_memory": MEMORY_DENIED or why not, "namespaces": NAMESPACES_DENIED or why not,
    "keyring": KEYRING_DENIED or why not, "limits": LIMITS_OWN or why not, "threads_before": N, "error": why (only when Landlock was there but could not be applied)}.
    scratch: the run's folder (TMPDIR points there); caches: the role's compiler cache folders;
    proc_grant: which of the process's own /proc entries may be written (PROC_GRANTS)."""
    rec = {"landlock_abi": 0, "fs": "none", "signals": "none", "abstract_unix_sockets": "none",
           "no_new_privs": False}
    libc = _libc()
    try:
        rec["no_new_privs"] = libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0),
                                         ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (AttributeError, OSError):
        pass
    rec["rlimits"] = _rlimits()
    try:
        rec["capabilities"] = _drop_capabilities(libc)
    except (AttributeError, OSError) as e:
        rec["capabilities"] = "could not be dropped: %s" % e
    try:
        rec["sysv_ipc"] = _deny_sysv_ipc(libc) if rec["no_new_privs"] else "allowed (no no_new_privs for seccomp)"
    except (AttributeError, OSError) as e:
        rec["sysv_ipc"] = "allowed (%s)" % e
    rec["process_group"] = GROUP_KEPT if rec["sysv_ipc"] == SYSV_IPC_DENIED else "not kept (%s)" % rec["sysv_ipc"]
    rec["process_memory"] = MEMORY_DENIED if rec["sysv_ipc"] == SYSV_IPC_DENIED else "allowed (%s)" % rec["sysv_ipc"]
    rec["namespaces"] = NAMESPACES_DENIED if rec["sysv_ipc"] == SYSV_IPC_DENIED else "allowed (%s)" % rec["sysv_ipc"]
    rec["keyring"] = KEYRING_DENIED if rec["sysv_ipc"] == SYSV_IPC_DENIED else "allowed (%s)" % rec["sysv_ipc"]
    rec["limits"] = LIMITS_OWN if rec["sysv_ipc"] == SYSV_IPC_DENIED else "any process (%s)" % rec["sysv_ipc"]
    rec["seccomp"] = SECCOMP_GUARDED if rec["sysv_ipc"] == SYSV_IPC_DENIED else "unguarded (%s)" % rec["sysv_ipc"]
    rec["threads_before"] = _threads()  # running now: not bound by the Landlock domain below
    abi = 0 if no_landlock else landlock_abi(libc)
    rec["landlock_abi"] = abi
    if abi <= 0:
        rec["missing"] = "Landlock (the kernel has none, or it is not enabled at boot)"
        return rec
    writable = [d for d in [scratch] + list(caches) if d and os.path.isdir(d)]
    if not scratch or scratch not in writable:
        rec["error"] = "no scratch folder was handed in (%r)" % (scratch,)
        return rec
    # The process's own /proc entries the CUDA driver's initialisation writes (PROC_GRANT).
    own_proc = PROC_GRANTS[proc_grant] % os.getpid() if PROC_GRANTS[proc_grant] else None
    granted = own_proc is not None and os.path.isdir(own_proc)
    try:
        scoped = _landlock(libc, abi, writable + ([own_proc] if granted else []))
    except OSError as e:
        rec["error"] = "Landlock could not be applied: %s" % e
        return rec
    rec["fs"] = FS_CONFINED
    rec["writable"] = (["scratch"] + (["compiler_caches"] if len(writable) > 1 else []) + ["devices"]
                       + (["own_proc_threads" if proc_grant == "task" else "own_proc"] if granted else []))
    rec["signals"] = "scoped" if scoped & _SCOPE_SIGNAL else "none"
    rec["abstract_unix_sockets"] = "scoped" if scoped & _SCOPE_ABSTRACT_UNIX_SOCKET else "none"
    return rec


def point_temp_at(scratch):
    """TMPDIR, TMP, TEMP and tempfile's cached folder at the scratch folder (a forked run inherits
    tempfile.tempdir from the fork server)."""
    import tempfile
    for k in ("TMPDIR", "TMP", "TEMP"):
        os.environ[k] = scratch
    tempfile.tempdir = scratch


def refusal(rec):
    """The reason a trusted run is refused when nothing could be applied, or None when it may go."""
    if rec.get("fs") == FS_CONFINED:
        return None
    what = rec.get("error") or ("no %s" % rec.get("missing", "Landlock"))
    return ("the kernel sandbox could not be applied: %s (Landlock ABI %s); without it the candidate could write "
            "outside its run (the baseline's file, the user site, hotkernel's cache). Fix: run on Linux >= 5.13 with "
            "Landlock enabled (CONFIG_SECURITY_LANDLOCK=y and 'landlock' in the lsm= boot list), or pass "
            "allow_unsandboxed: true (CLI --allow-unsandboxed) to measure without it"
            % (what, rec.get("landlock_abi", 0)))
