"""The harness's defences that stand apart from its timing (hotkernel_harness.py uses them).

Primitives: references to the timing primitives, taken before the candidate exists.
Harness: a snapshot of every function a candidate could patch to fake a time or a check.
ThreadWatch: counts the threads and processes a candidate starts.
L2Guard: keeps a candidate from carving out persisting L2.
install_watch: the harness's PEP 578 audit hook, holder of the run's secrets.

Embedded in the binary beside the harness and the contract (not vendored into targets), so it is
free to change with them; the Harness snapshot watches this module too.
"""
import builtins as _shared_builtins
# Python's builtins as they were when this file was imported, this module's own copy; each harness
# module takes one the same way (own_builtins says why).
__builtins__ = dict(vars(_shared_builtins))
import json
import marshal
import os
import re
import sys
import time
from types import CodeType, FunctionType, MappingProxyType

# An object's identity, as id() gives it but raising no audit event: id() raises builtins.id,
# and the state compared after every sample took ~3,000 of them, each a call of the harness's
# own audit hook (about half of a check's time on an H200's host). object's own hash is the
# object's address, rotated (a bijection); no type can replace it, and it runs no code of the
# object's class.
_oid = object.__hash__
_MAP, _TUPLE = map, tuple  # taken at import, as _oid: the state's comparison runs on these


class Primitives:
    """References to the timing primitives, taken before the candidate exists."""

    def __init__(self, torch):
        import gc
        import signal
        self.perf = time.perf_counter
        self.getprofile, self.gettrace = sys.getprofile, sys.gettrace  # a hook set after the import (_dispatch_intact)
        self.profile0, self.trace0 = sys.getprofile(), sys.gettrace()  # the run's own (a coverage tracer): not one
        # Quiet between a sample's end and the next one's release (TrustedRun._quiet): no
        # collection (gc callbacks, finalizers of cycles) and no signal handler can run the
        # candidate's code in this thread while the harness checks what the sample returned.
        self.gc_disable, self.gc_enable, self.gc_isenabled = gc.disable, gc.enable, gc.isenabled
        self.gc_collect = gc.collect
        self.gc_callbacks = gc.callbacks  # the list itself: what is in it is compared, not replaced
        # _signal's own functions, on plain numbers: signal's wrappers make an enum of each of the
        # 64 signals a mask holds, ~0.1 ms inside every sample's window (where the quiet ends and
        # begins), time the parent counts as the fixed cost of a sample.
        import _signal
        self.sigmask = getattr(_signal, "pthread_sigmask", None)
        self.all_signals = (tuple(int(s) for s in signal.valid_signals()) if hasattr(signal, "valid_signals")
                            else ())
        # Python handlers run in this thread whichever thread took the signal: held over the quiet.
        self.getsignal, self.setsignal, self.raise_signal = _signal.getsignal, _signal.signal, _signal.raise_signal
        self.default_int_handler = signal.default_int_handler
        self.handled = tuple(s for s in self.all_signals if s not in (int(signal.SIGKILL), int(signal.SIGSTOP)))
        # A spot copy on the CPU is one pipeline of C functions over the output's bytes
        # (TrustedRun._copy_timed): these, taken now, so the candidate's replacements of the
        # builtins are not them.
        import ctypes
        import functools
        import operator
        self.partial, self.map, self.tuple = functools.partial, map, tuple
        self.call = getattr(operator, "call", None) or operator.methodcaller("__call__")  # operator.call: 3.11+
        self.c_char, self.bytes = ctypes.c_char, bytes
        # What says a torch function or dispatch mode is active, as C functions in this order
        # (hotkernel_harness._modes_said reads their answers): one this torch lacks is `tuple`,
        # whose empty answer says nothing.
        C = torch._C
        self.mode_probes = tuple(f if callable(f) else tuple for f in (
            getattr(C, n, None) for n in ("_len_torch_function_stack", "_is_torch_function_mode_enabled",
                                          "_len_torch_dispatch_stack", "_dispatch_tls_local_include_set")))
        self.python_key = getattr(getattr(C, "DispatchKey", None), "Python", None)
        self.cuda = torch.cuda.is_available()
        if self.cuda:
            self.Event = torch.cuda.Event
            self.record = torch.cuda.Event.record
            self.elapsed = torch.cuda.Event.elapsed_time
            self.ev_sync = torch.cuda.Event.synchronize
            self.dev_sync = torch.cuda.synchronize
            self.Graph = torch.cuda.CUDAGraph
            self.replay = torch.cuda.CUDAGraph.replay
            self.graph_ctx = torch.cuda.graph
            self.Stream = torch.cuda.Stream
            self.stream_ctx = torch.cuda.stream
            self.current_stream = torch.cuda.current_stream
            self.spin = getattr(torch.cuda, "_sleep", None)  # spins for N SM clock cycles


class Harness:
    """Snapshot of everything a candidate could patch to fake a time or a check."""

    def __init__(self, torch, contract, runner_module, reference_fns=(), instances=None, known_names=None,
                 native=None):
        import builtins
        import math
        import statistics
        self.watch = {
            "time": time, "statistics": statistics, "math": math, "builtins": builtins, "json": json,
            "os": os, "hotkernel_contract": contract, "hotkernel_harness": runner_module,
            "hotkernel_defences": sys.modules[__name__],
            "torch.Tensor": torch.Tensor, "torch": torch, "torch.cuda": torch.cuda,
            "hotkernel_contract.Session": contract.Session, "hotkernel_contract.Target": contract.Target,
            "hotkernel_contract.KernelClock": contract.KernelClock,
        }
        # The sandbox's and the parent clock's modules, loaded beside the harness: the filter against
        # new processes is installed from the sandbox's function and tables as the samples begin.
        for name in HELPER_MODULES:
            if name in sys.modules:
                self.watch[name] = sys.modules[name]
        # The functions the references are computed with (after the candidate ran), and their modules.
        import torch.nn.functional as F
        self.watch["torch.nn.functional"] = F
        self.watch["torch._C._nn"] = torch._C._nn
        self.watch["torch._C._VariableFunctions"] = torch._C._VariableFunctions
        ref_mods = set()
        for fn in reference_fns:
            mod = sys.modules.get(getattr(fn, "__module__", None) or "")
            if mod is not None and mod.__name__ not in ("torch", "builtins"):
                self.watch[mod.__name__] = mod
                ref_mods.add(mod.__name__)
        self.ref_fns = [(fn, _oid(getattr(fn, "__code__", None))) for fn in reference_fns]
        if torch.cuda.is_available():
            self.watch["torch.cuda.Event"] = torch.cuda.Event
            self.watch["torch.cuda.CUDAGraph"] = torch.cuda.CUDAGraph
        # The C base of torch.Tensor: what its methods are inherited from.
        base = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase", None)
        if base is not None:
            self.watch["torch._C.TensorBase"] = base
        # Every class of the harness's own modules (TrustedRun's check methods, the captured
        # primitives' class, ...), and the instances the measurement reads its functions from.
        own = []
        for mod in (contract, runner_module, sys.modules[__name__]):
            for name, v in list(vars(mod).items()):
                if isinstance(v, type) and getattr(v, "__module__", None) == mod.__name__:
                    label = "%s.%s" % (getattr(mod, "__name__", "harness").replace("__main__", "hotkernel_harness"), name)
                    self.watch[label] = v
                    own.append(label)
        for label, obj in (instances or {}).items():
            self.watch[label] = obj
            own.append(label)
        # Patching these changes a time or a verdict: invalid. Other torch changes are reported.
        self.critical = {"time", "statistics", "math", "builtins", "json", "hotkernel_contract",
                         "hotkernel_harness", "hotkernel_defences", *HELPER_MODULES, "hotkernel_contract.Session",
                         "hotkernel_contract.Target",
                         "hotkernel_contract.KernelClock",
                         "torch.cuda.Event", "torch.cuda.CUDAGraph", "torch.Tensor", "torch.nn.functional",
                         "torch._C._nn", "torch._C._VariableFunctions", "torch._C.TensorBase"} | ref_mods | set(own)
        self.critical_names = {("torch.cuda", n) for n in ("synchronize", "Event", "CUDAGraph", "graph",
                                                           "current_stream", "Stream", "stream")}
        self.critical_names |= {("os", n) for n in ("write", "read", "dup", "close", "fsync", "_exit")}
        self.critical_names |= {("torch", n) for n in ("isfinite", "equal", "randn", "Generator", "empty")}
        # Every torch and torch.cuda function the harness's own code names (the check's torch.sub,
        # torch.isfinite, ...): replaced, a check or a time is the candidate's.
        codes = harness_codes([contract, runner_module, sys.modules[__name__]])
        used = torch_names(codes.values(), known_names)
        self.critical_names |= {k for k in used if callable(vars(torch.cuda if k[0] == "torch.cuda" else torch).get(k[1]))}
        self.own_modules = {"hotkernel_contract", "hotkernel_harness", "hotkernel_defences"} | (set(HELPER_MODULES) &
                                                                                             set(self.watch))
        self.instances = set(own) - {label for label in own if isinstance(self.watch[label], type)}
        self.namespaces = torch_namespaces(torch)
        self.namespaces.update(own_builtins([contract, runner_module, sys.modules[__name__]] +
                                            [sys.modules[n] for n in HELPER_MODULES if n in sys.modules]))
        self.snap = self._take()
        self.state = self._take_state()
        self._scoped = {}  # parts of state by the instances compared (_state_of)
        # The harness's code by value: a code object keeps its id while its constants' tuple or its
        # bytecode is rewritten in place through a raw pointer (no audit event), as the check's
        # bound 1.0 was, to pass zeros (cheats/code_constant_rewrite.py).
        # marshal's bytes of each outermost code object (its nested ones are in its constants):
        # bytecode, constants, names, by value, in C (~0.4 ms a check; hashing the constants' reprs
        # in Python took 1.7 ms here and ~5 ms a sample on an H200's host). Version 2 writes no
        # back-references, whose presence follows reference counts, not the code.
        # All of them in one tuple, marshalled in one call (one audit event, not one a code).
        nested = {id(k) for c in codes.values() for k in _nested_codes(c)}
        self._codes = tuple(c for _, c in sorted(codes.items()) if id(c) not in nested)
        self._dumps = marshal.dumps
        self.code_digest = self._code_digest()
        # libtorch's kernel pointers below its dispatcher (native_stubs: the fork server's table,
        # or read now): each one set now is pinned.
        self.native = native_stubs() if native is None else native
        self.native_pin = native_pin(self.native)

    def _code_digest(self):
        return self._dumps(self._codes, 2)

    def _take(self):
        snap = {}
        for mod_name, obj in self.watch.items():
            try:
                items = list(vars(obj).items())
            except TypeError:
                continue
            own = mod_name in self.own_modules
            for name, v in items:
                name = _plain_name(name)
                if callable(v):
                    snap[(mod_name, name)] = _function_print(v)
                elif own and type(v) in CONSTANT_TYPES:
                    # The harness's own settings (how many calls a sample checks, its budgets):
                    # plain values, set once at import; changed, a check is the candidate's.
                    snap[(mod_name, name)] = ("value", type(v).__name__, repr(v))
        return snap

    def _take_state(self, instances=None):
        """What the checks decide with, small enough to compare after every sample: every attribute
        of the harness's own objects (the run, its session, target, primitives; but those the
        measurement itself updates, MUTABLE_STATE), the plain values of its modules, and the torch
        functions its checks call. instances: only those of the harness's objects (the modules and
        functions always)."""
        state = {}
        for label in (self.instances if instances is None else self.instances & instances):
            obj = self.watch[label]
            keep = MUTABLE_STATE.get(type(obj).__name__, ())
            try:
                items = list(vars(obj).items())
            except TypeError:
                continue
            for name, v in items:
                name = _plain_name(name)
                if name not in keep:
                    state[(label, name)] = _fingerprint(v)
                else:  # its value changes; what it holds must stay the harness's kind of thing
                    state[(label, name)] = ("mutable", _plain_kinds(v))
        for mod_name in self.own_modules:
            # Every global: plain values by value, the rest (the modules they name, torch among
            # them) by identity: `hotkernel_contract.torch` rebound to a proxy whose `sub` gave
            # zeros passed every output as correct (cheats/rebind_module_global.py).
            for name, v in list(vars(self.watch[mod_name]).items()):
                name = _plain_name(name)
                if name in ("__warningregistry__", "__builtins__"):  # warnings add the first; builtins: critical
                    continue
                if type(v) in CONSTANT_TYPES:
                    state[(mod_name, name)] = ("value", type(v).__name__, repr(v))
                elif type(v) is FunctionType:
                    state[(mod_name, name)] = ("function", _function_print(v))
                elif type(v) in _CONTAINER_TYPES:
                    # By content: the audit hook's rules (SEEN) emptied in place kept its alarms silent
                    # while a profile hook passed every check (cheats/seen_rules_cleared.py).
                    state[(mod_name, name)] = ("content", _content(v))
                else:
                    state[(mod_name, name)] = ("id", _oid(v))
        for mod_name, name in self.critical_names:
            state[(mod_name, name)] = ("id", _oid(vars(self.watch[mod_name]).get(name)))
        for label, (ns, keys) in self.namespaces.items():  # in C: ~0.1 ms for all of them
            state[(label, "*")] = ("callables", keys, _TUPLE(_MAP(_oid, _MAP(ns.get, keys))))
        return state

    def settled(self):
        """The run's state taken again, for what the harness's own steps set before the candidate
        exists (the clock's calibration): what every sample is compared with from now on."""
        self.state = self._take_state()
        self._scoped = {}

    def _state_of(self, instances):
        """The snapshot's part for a state_changes(instances), made once for each set of them."""
        part = self._scoped.get(instances)
        if part is None:
            part = self._scoped[instances] = {key: v for key, v in self.state.items()
                                              if key[0] not in self.instances or key[0] in instances}
        return part

    def state_changes(self, instances=None):
        """'object.attribute' for each part of _take_state that differs now, added or removed; and
        the harness's code when its bytecode or constants differ. instances: as for _take_state
        (a workload's samples compare its own run's objects: every workload's are compared after
        its last sample, TrustedRun.measure)."""
        was = self.state if instances is None else self._state_of(instances)
        return (_differing(was, self._take_state(instances), self.code_digest, self._code_digest())
                + native_changes(self.native, self.native_pin))

    def pinned(self):
        """What the audit hook keeps in its closure when it is armed, before the candidate exists:
        this snapshot and the functions that take it again, as they are now. The snapshot held
        here is an attribute of an object the candidate can reach through a frame, and taken
        again (harness.state = harness._take_state()) it would make every later comparison agree
        with settings the candidate changed; the hook's copies are out of its reach, and compared
        once more when the result is written (_changed_since_pinned)."""
        cls = type(self)
        return (self, {k: v for k, v in self.state.items() if k[0] not in CLOSED_BEFORE_RESULT},
                {k: v for k, v in self.snap.items() if self._is_critical(k)},
                self.code_digest, cls._take_state, cls._take, cls._code_digest, cls._is_critical,
                self.native, self.native_pin, native_changes)

    def _is_critical(self, key):
        return key[0] in self.critical or key in self.critical_names

    def changes(self):
        """(critical, other): lists of 'module.name' that were replaced, removed or added (a new
        name on a class shadows what it inherits: torch.Tensor.abs_ over TensorBase's)."""
        now = self._take()
        critical, other = [], []
        for key in list(self.snap) + [k for k in now if k not in self.snap]:
            if now.get(key) != self.snap.get(key):
                label = "%s.%s" % key + ("" if key in self.snap else " (new)")
                if self._is_critical(key):
                    critical.append(label)
                elif key[0] in ("os", "torch", "torch.cuda"):
                    other.append(label)
        for fn, code in self.ref_fns:
            if _oid(getattr(fn, "__code__", None)) != code:
                critical.append(getattr(fn, "__qualname__", "reference") + ".__code__")
        if self._code_digest() != self.code_digest:
            critical.append("the harness's own code (bytecode or constants rewritten in memory)")
        return critical, other


# The objects whose state the harness itself ends before the result is written: the parent's
# clock's connection (closed; compared at every sample until then, _connection_intact).
CLOSED_BEFORE_RESULT = frozenset({"release"})


# Modules whose types a measurement's changing attributes (MUTABLE_STATE) may hold: Python's and
# torch's values, the harness's own objects. An object of the candidate's own class kept there
# runs its code when the harness replaces it (its __del__), between two comparisons of the state
# (picked_del_loosen.py).
_HARNESS_KIND_MODULES = ("builtins", "torch", "hotkernel_", "__main__", "types", "collections", "signal", "enum",
                         "numpy")
_PLAIN_TYPES = frozenset({type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset,
                          type(len), type(lambda: None)})


_MRO = type.__dict__["__mro__"]
PLAIN_KINDS_BUDGET = 20000  # values looked at in one attribute; more is not the harness's kind of thing


def _plain_kinds(v):
    """True when v, and everything the lists, tuples, sets and dicts in it hold, however deep,
    are of Python's, torch's or the harness's own types; False for anything else, or for more
    than PLAIN_KINDS_BUDGET values. A type counts only where its module names it (a class of the
    candidate's that says __module__ = "torch" does not). An object nested two lists down ran its
    __del__ as the harness replaced the attribute, and filled the sample's references with zeros
    (refs_prefill.py)."""
    torch = sys.modules.get("torch")
    tensors = tuple(t for t in (getattr(torch, "Tensor", None), getattr(getattr(torch, "nn", None), "Parameter", None))
                    if t is not None)

    def ok(x):
        tp = type(x)
        if tp in _PLAIN_TYPES or tp in tensors:
            return True
        # A tensor of a subclass runs its class's __torch_function__ at every torch call on it: a
        # red team's views of the timed inputs, of a class it named "torch.testing" and put
        # there, did the work in the harness's own fresh-value copies before each release
        # (a clean 3.4-4.2x). Only torch's own tensor types (the MRO read through type's own
        # descriptor: a metaclass's __mro__ would run code).
        if any(b.__name__ in ("TensorBase", "_TensorBase") for b in _MRO.__get__(tp)):
            return False
        mod = getattr(tp, "__module__", None)
        if type(mod) is not str or not mod.startswith(_HARNESS_KIND_MODULES):
            return False
        owner = sys.modules.get(mod)
        for part in str(getattr(tp, "__qualname__", "")).split("."):
            owner = getattr(owner, part, None) if owner is not None else None
        return owner is tp
    todo, seen, n = [v], set(), 0
    while todo:
        x = todo.pop()
        n += 1
        if n > PLAIN_KINDS_BUDGET or not ok(x):
            return False
        if type(x) in (list, tuple, set, frozenset, dict) and _oid(x) not in seen:
            seen.add(_oid(x))
            todo.extend(x.keys() if type(x) is dict else x)
            if type(x) is dict:
                todo.extend(x.values())
    return True


def _changed_since_pinned(pinned):
    """'object.attribute' for each part of the harness's state, of its critical functions and of
    its code that differs from the hook's copies taken at arming (Harness.pinned); [] when
    nothing does, or nothing was pinned."""
    if pinned is None:
        return []
    harness, state, snap, code, take_state, take, code_digest, is_critical, native, pin, native_differ = pinned
    return (_differing(state, {k: v for k, v in take_state(harness).items() if k[0] not in CLOSED_BEFORE_RESULT},
                       code, code_digest(harness)) +
            _differing(snap, {k: v for k, v in take(harness).items() if is_critical(harness, k)}) +
            native_differ(native, pin))


# libtorch's DispatchStubs (at::native::max_all_stub, sub_stub, ...): each op's CPU kernel
# pointer, cached at its first call, and its CUDA one, set when libtorch_cuda loads, in objects
# libtorch_cpu exports. A raw write through ctypes (no audit event) swapping max_all's pointer
# for min_all's made every check's "worst element" its best, and a constant fill passed as gelu
# (cheats/native_stub_swap.py); no Python object, code or dispatcher table changes. A pointer
# set when the harness is set up (its own operators have run: TrustedRun._record_harness_ops) is
# pinned; one still empty may be set later, by an operator's first call.
_NATIVE_STUB = re.compile(rb"_ZN2at6native\d+(\w+?)_stubE\0")


def native_stubs():
    """(name, address, size) of each DispatchStub object libtorch_cpu exports, read from its ELF
    dynamic symbols (~15-30 ms: the fork server's, once, for every run); () where there is none."""
    import mmap
    import struct
    libs = {}
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if (len(parts) >= 6 and os.path.basename(parts[5]).startswith("libtorch_cpu")
                        and int(parts[2], 16) == 0):
                    libs.setdefault(parts[5], int(parts[0].split("-")[0], 16))
    except (OSError, ValueError):
        return ()
    found = []
    for path, base in libs.items():
        try:
            with open(path, "rb") as f:
                m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        except (OSError, ValueError):
            continue
        try:
            if m[:4] != b"\x7fELF" or m[4] != 2 or m[5] != 1:  # 64-bit little-endian only
                continue
            shoff, = struct.unpack_from("<Q", m, 0x28)
            shentsize, shnum = struct.unpack_from("<HH", m, 0x3a)
            secs = [struct.unpack_from("<IIQQQQIIQQ", m, shoff + shentsize * i) for i in range(shnum)]
            for sec in secs:
                if sec[1] != 11:  # SHT_DYNSYM
                    continue
                strs = secs[sec[6]]
                s0 = strs[4]
                names = {mo.start() - s0: mo.group(1).decode() for mo in _NATIVE_STUB.finditer(m, s0, s0 + strs[5])}
                for nm, info, _, shndx, value, size in struct.iter_unpack("<IBBHQQ", m[sec[4]:sec[4] + sec[5]]):
                    if nm in names and (info & 0xF) == 1 and shndx and 8 <= size <= 256 and size % 8 == 0:
                        found.append(("at::native::%s_stub" % names[nm], base + value, size))
        except (struct.error, IndexError, ValueError):
            continue
        finally:
            m.close()
    return tuple(sorted(found, key=lambda t: t[1]))


def _native_spans(native):
    """(name, offset, size) of each stub in its views' bytes read back in order (native_pin)."""
    at = 0
    for name, _, size in native:
        yield name, at, size
        at += size


# The first bytes of the code each pinned pointer leads to: a jump written over a kernel's entry
# (the page made writable with mprotect) leaves its pointer as it was.
NATIVE_CODE_BYTES = 32


def _exec_ranges():
    ranges = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and "x" in parts[1]:
                    lo, hi = (int(v, 16) for v in parts[0].split("-"))
                    ranges.append((lo, hi))
    except (OSError, ValueError):
        pass
    return ranges


def _views(spans):
    """One ctypes array over each (address, size), made once: reading one back (.raw) raises no
    audit event, where a ctypes.string_at raises one a read (~700 a check, each a call of the
    harness's own audit hook). They only read what string_at would; a write through one is a raw
    write like any other, and what it could change is what native_changes compares."""
    import ctypes
    return tuple((ctypes.c_char * size).from_address(addr) for addr, size in spans)


def native_pin(native):
    """What native_changes compares: (mask, value) of the words of the stubs' bytes set now, as
    one integer each, and the first NATIVE_CODE_BYTES of the code each of those words points to
    ((stub name, address) each, and their bytes), where it lies in an executable mapping; and the
    views that read both back."""
    stub_views = _views((addr, size) for _, addr, size in native)
    data = b"".join([v.raw for v in stub_views])
    mask = b"".join(b"\xff" * 8 if data[i:i + 8] != b"\0" * 8 else b"\0" * 8 for i in range(0, len(data), 8))
    m = int.from_bytes(mask, "little")
    ranges, targets = _exec_ranges(), []
    for name, at, size in _native_spans(native):
        for i in range(at, at + size, 8):
            ptr = int.from_bytes(data[i:i + 8], "little")
            if ptr and any(lo <= ptr and ptr + NATIVE_CODE_BYTES <= hi for lo, hi in ranges):
                targets.append((name, ptr))
    code_views = _views((ptr, NATIVE_CODE_BYTES) for _, ptr in targets)
    code = b"".join([v.raw for v in code_views])
    return m, int.from_bytes(data, "little") & m, tuple(targets), code, stub_views, code_views


def native_changes(native, pin):
    """The stubs one of whose pinned pointers, or the first bytes of the code one leads to,
    differs now ([] when none: ~0.1 ms)."""
    if not native:
        return []
    mask, want, targets, code, stub_views, code_views = pin
    differ = (int.from_bytes(b"".join([v.raw for v in stub_views]), "little") & mask) ^ want  # the pinned bits that changed
    changed = ["%s (a kernel pointer of libtorch's, rewritten in memory)" % name
               for name, at, size in _native_spans(native)
               if differ and (differ >> (at * 8)) & ((1 << (size * 8)) - 1)]
    now = b"".join([v.raw for v in code_views])
    if now != code:
        n = NATIVE_CODE_BYTES
        changed += sorted({"%s (the code its kernel pointer leads to, rewritten in memory)" % name
                           for i, (name, _) in enumerate(targets) if now[i * n:(i + 1) * n] != code[i * n:(i + 1) * n]})
    return changed


def _differing(was, now, code_was=None, code_now=None):
    """'object.attribute' for each key of two snapshots whose value differs, added or removed;
    first, the harness's code when its two digests (given) differ. A namespace's callables (key
    (module, "*")) name each one rebound. The common case, nothing changed, is one comparison in
    C (the values are tuples of Python's own plain types: no code of the candidate's runs)."""
    if code_was == code_now and was == now:
        return []
    changed = []
    for key in set(was) | set(now):
        a, b = was.get(key), now.get(key)
        if a == b:
            continue
        if key[1] == "*" and a is not None and b is not None and a[1] is b[1]:
            changed += ["%s.%s" % (key[0], n) for n, x, y in zip(a[1], a[2], b[2]) if x != y]
        else:
            changed.append("%s.%s" % key)
    changed.sort()
    if code_was != code_now:
        changed.insert(0, "the bytecode or constants of its own functions")
    return changed


# torch's own modules whose functions the harness's thread runs through between a sample's window
# and its checks (torch.no_grad's grad_mode, torch.cuda.synchronize's torch.cuda, Tensor's Python
# methods, the C functions they call up): every callable in them, compared by identity at every
# sample and at the result. A rebound one runs the candidate's code in the harness's thread
# (torch._C._set_grad_enabled, looked up by torch.no_grad's __exit__: a clean 2.7-7.7x).
# Callables only: a module's plain values (torch.cuda._initialized) are its own state.
TORCH_NAMESPACES = ("torch._C", "torch._C._nn", "torch._C._VariableFunctions", "torch._C._linalg",
                    "torch.autograd.grad_mode", "torch.autograd", "torch._jit_internal", "torch._tensor",
                    "torch.functional", "torch.overrides", "torch._utils", "torch.random", "torch.cuda",
                    "torch.cuda.graphs", "torch.cuda.streams", "torch.cuda.random", "torch.backends.cuda",
                    "torch.backends.cudnn")


def torch_namespaces(torch):
    """{module name: (its namespace, the names of its callables now)} for TORCH_NAMESPACES as
    loaded (a torch without one has none)."""
    out = {}
    for name in TORCH_NAMESPACES:
        mod = sys.modules.get(name) or _attr_path(torch, name)  # torch._C's submodules are not in sys.modules
        try:
            ns = vars(mod)
        except TypeError:
            continue
        out[name] = (ns, _callable_names(ns))
    return out


def _callable_names(ns):
    """The names of a namespace's callables now, sorted (what torch_namespaces and own_builtins
    compare by identity)."""
    return tuple(sorted(k for k, v in list(ns.items()) if callable(v) and type(k) is str))


def own_builtins(modules):
    """{label: (namespace, the names of its callables now)} for the builtins the harness's modules
    run with (each one's own copy, or the shared module where one has none) and for the shared
    builtins module, compared like TORCH_NAMESPACES. A function looks a builtin up in its module's
    __builtins__, so each harness module sets its own copy, taken when it is imported: the shared
    module's names are the candidate's to rebind (builtins.zip, rebound at import, ran a red team's
    code inside fresh_round, which handed it each sample's fresh values before the release)."""
    import builtins
    out = {"builtins": (vars(builtins), _callable_names(vars(builtins)))}
    for mod in modules:
        b = vars(mod).get("__builtins__")
        ns = b if type(b) is dict else getattr(b, "__dict__", None)
        if type(ns) is dict and ns is not out["builtins"][0]:
            out[mod.__name__.replace("__main__", "hotkernel_harness") + ".__builtins__"] = (ns, _callable_names(ns))
    return out


def _attr_path(torch, name):
    obj = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def torch_names(codes, known=None):
    """The (module, name) pairs that code reads as torch.NAME or torch.cuda.NAME (self.torch.NAME
    too), from its bytecode: names, not every attribute name the code uses (g.manual_seed is a
    generator's, torch.manual_seed one that torch.compile swaps). known: torch_name_table's
    answer for code objects compiled earlier (the fork server's), by id, each with its code so an
    id is only ever taken for the very object it was computed for."""
    found = set()
    for code in codes:
        k = known.get(id(code)) if known else None
        found |= k[1] if k is not None and k[0] is code else _torch_names_of(code)
    return found


def torch_name_table(module_codes):
    """{id(code): (code, torch names)} for every code object nested in module_codes: what
    torch_names reads from each, computed once (dis is ~0.3 ms a code, ~0.1 s for the harness)."""
    table = {}

    def add(code):
        if id(code) in table:
            return
        table[id(code)] = (code, frozenset(_torch_names_of(code)))
        for c in code.co_consts:
            if hasattr(c, "co_code"):
                add(c)

    for code in module_codes:
        add(code)
    return table


def _torch_names_of(code):
    found = set()
    # Only code with "torch" among its names or constants can load it.
    if not any("torch" in t for t in (code.co_names, code.co_varnames, code.co_cellvars, code.co_freevars,
                                      code.co_consts)):
        return found
    import dis
    chain = None
    for ins in dis.get_instructions(code):
        if ins.opname.startswith("LOAD_") and ins.argval == "torch":
            chain = ["torch"]
        elif chain and ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            chain.append(ins.argval)
            if len(chain) == 2 and chain[1] != "cuda":
                found.add(("torch", chain[1]))
                chain = None
            elif len(chain) == 3:
                found.add(("torch.cuda", chain[2]))
                chain = None
        else:
            chain = None
    return found


# Module-level values the snapshot compares by value in the harness's own modules.
CONSTANT_TYPES = (int, float, str, bytes, bool, tuple, frozenset, type(None))
# The attributes of the harness's objects that the measurement itself updates as it goes: every
# other one is compared after each sample (Harness.state_changes).
MUTABLE_STATE = {
    "TrustedRun": {"_tampered", "profiled", "_profile_graph", "_quiet_state", "_gc_held", "timer_detail", "host_ms", "cpu_checked",
                   "_mix_views", "sample_clocks", "phases", "flags", "spot_copies", "_harness", "new_processes",
                   "_held_handlers", "_held_signals", "_state_check_s", "handler_signals"},
    "Session": {"calls", "k", "timed_sets", "last_set", "last_ref", "_graph"},
    "L2Guard": {"seen_bytes", "floor"},
}


def _nested_codes(code):
    """Every code object inside `code`'s constants, however deep."""
    out, todo = [], list(code.co_consts)
    while todo:
        k = todo.pop()
        if type(k) is type(code):
            out.append(k)
            todo.extend(k.co_consts)
    return out


# The harness's modules besides its three: the sandbox's and the parent clock's.
HELPER_MODULES = ("hotkernel_sandbox", "hotkernel_release")
_CONTAINER_TYPES = (dict, list, set, bytearray, MappingProxyType)


def _plain_name(name):
    """An attribute's name as the snapshots key it: a str as it is; any other key (a candidate's
    object put into a watched __dict__) as a str of its identity, so that keying, comparing and
    naming it in a reason run none of its code (its __hash__, __eq__, __str__), and it reads as
    a name added."""
    return name if type(name) is str else "<a key of another type than str, at %#x>" % _oid(name)


def _function_print(v):
    """A callable as the snapshots compare it: its identity and its code's; for a Python function
    also its defaults (a tuple: replaced, not edited) and keyword-only defaults (a dict: by
    content), which change what a call of the harness's does with no new function or code."""
    if type(v) is FunctionType:
        kw = v.__kwdefaults__
        return (_oid(v), _oid(v.__code__), _oid(v.__defaults__), _content(kw) if kw else None)
    code = getattr(v, "__code__", None)
    return (_oid(v), _oid(code) if code is not None else None)


def _content(v, depth=0):
    """A container of the harness's by its content, however deep, as the state compares a module's
    dicts, lists and sets: plain values by value, containers by identity and content, anything else
    by identity (its type's too). Reads no attribute and calls no method of a value: an object of
    the candidate's put there runs no code here (no repr, no __eq__)."""
    t = type(v)
    if t in (int, float, bool, complex, type(None)):
        return (t.__name__, repr(v))
    if t in (str, bytes, bytearray):
        return (t.__name__, bytes(v) if t is bytearray else v)
    if depth >= 6:
        return ("id", _oid(v), _oid(t))
    if t in (tuple, list):
        return (t.__name__, _oid(v), tuple(_content(x, depth + 1) for x in v))
    if t in (set, frozenset):
        return (t.__name__, _oid(v), frozenset(_content(x, depth + 1) for x in v))
    if t is dict:
        return ("dict", _oid(v), tuple((_content(k, depth + 1), _content(x, depth + 1)) for k, x in v.items()))
    if t is MappingProxyType:  # its dict can be reached and emptied (through ==): by content too
        return ("mappingproxy", _oid(v), tuple((_content(k, depth + 1), _content(x, depth + 1))
                                             for k, x in dict.items(v.copy())))
    return ("id", _oid(v), _oid(t))


def _fingerprint(v, depth=0):
    """A value as the state snapshot compares it: plain values by value, containers by identity
    and their items, anything else (tensors, functions, objects) by identity."""
    t = type(v)
    if t in (int, float, bool, type(None)):
        return (t.__name__, repr(v))
    if t in (str, bytes):
        return (t.__name__, hash(v))
    if t in (tuple, list) and depth < 2 and len(v) <= 256:
        return (t.__name__, _oid(v), tuple(_fingerprint(x, depth + 1) for x in v))
    if t is dict and depth < 2 and len(v) <= 256:
        # Keys as _content takes them: a repr would run the code of a key the candidate put there.
        return ("dict", _oid(v), tuple((_content(k, depth + 1), _fingerprint(x, depth + 1)) for k, x in v.items()))
    return ("id", _oid(v))


def _cell_id(cell):
    """The identity of what a closure's cell holds; None for a cell emptied (del cell_contents)."""
    try:
        return _oid(cell.cell_contents)
    except ValueError:
        return None


class ThreadWatch:
    """Counts threads and processes the candidate starts, by wrapping the start primitives.

    The wrappers are module attributes the candidate can read, and so are their closures: what
    they hold is only what cannot be turned back. The watch itself is not among it: reached
    through a wrapper's closure, it had the threads the process had before the import rebound to
    include a helper's, whose CPU then went uncounted (cheats/thread_watch_closure.py). They count
    every start on an itertools.count (it only goes up; the harness reads it before and after the
    samples) and add each Python thread's OS id to a set. fingerprint() says what every wrapper,
    its code and its closure hold, taken once before the import and compared after the samples."""

    WRAPPED = (("_thread", "start_new_thread"), ("_thread", "start_joinable_thread"),
               ("threading", "_start_new_thread"), ("threading", "_start_joinable_thread"),
               ("os", "fork"), ("os", "posix_spawn"), ("os", "posix_spawnp"), ("_posixsubprocess", "fork_exec"),
               ("subprocess", "_fork_exec"))

    def __init__(self):
        import _thread
        import itertools
        import threading
        self._thread = _thread
        self.originals = {}
        # Every start, whenever: the harness reads how many there were before and after the samples.
        self._starts = starts = itertools.count()
        # The OS thread ids of every Python thread started from here on, however it was started
        # (threading, or _thread directly, which threading.enumerate() does not list).
        self.native_ids = native_ids = set()
        native_id = threading.get_native_id
        count = next

        def wrap(orig):
            def start(*a, **k):
                count(starts)
                return orig(*a, **k)
            return start

        def wrap_thread(orig):
            def start(function, *a, **k):
                count(starts)

                def run(*fa, **fk):
                    native_ids.add(native_id())
                    return function(*fa, **fk)
                return orig(run, *a, **k)
            return start

        for mod_name, name in self.WRAPPED:
            mod = sys.modules.get(mod_name)
            if mod is None:
                try:
                    mod = __import__(mod_name)
                except ImportError:
                    continue
            orig = getattr(mod, name, None)
            if orig is not None:
                self.originals[(mod, name)] = orig
                setattr(mod, name, (wrap_thread if mod_name in ("_thread", "threading") else wrap)(orig))
        self.wrappers = {k: getattr(k[0], k[1]) for k in self.originals}
        self.threading = threading
        self.before = set(t.ident for t in threading.enumerate())
        self.take_threads_before()  # now, for a watch used on its own; a run takes them again before the import

    def starts(self):
        """How many threads and processes were started through the wrappers so far."""
        return int(repr(self._starts)[len("count("):-1])

    def fingerprint(self):
        """What says the watch is as it was: each wrapped module attribute, its code and what its
        closure holds (by identity), the counter, the id set, and the threads taken before."""
        out = []
        for mod, name in self.originals:
            f = getattr(mod, name, None)
            cells = getattr(f, "__closure__", None) or ()
            out.append((_oid(f), _oid(getattr(f, "__code__", None)), tuple(_cell_id(c) for c in cells)))
        return (tuple(out), _oid(self._starts), _oid(self.native_ids), self.tasks_before, frozenset(self.before))

    def take_threads_before(self):
        """Takes every OS thread the process has now, right before the candidate is imported
        (the harness's, torch's pools, CUPTI's): a thread not among them is the candidate's
        however it was started (TorchScript's inter-op pool, an extension's std::thread)."""
        try:
            self.tasks_before = frozenset(int(t) for t in os.listdir("/proc/self/task"))
        except (OSError, ValueError):
            self.tasks_before = frozenset()

    def intact(self):
        return all(getattr(m, n) is w for (m, n), w in self.wrappers.items())


def _cudart():
    """ctypes handle of the CUDA runtime torch loaded (for the persisting-L2 reset), or None."""
    import ctypes
    try:
        with open("/proc/self/maps", errors="surrogateescape") as f:
            paths = sorted({line.split()[-1] for line in f if "libcudart" in line and "/" in line})
    except OSError:
        paths = []
    for p in paths + ["libcudart.so", "libcudart.so.12", "libcudart.so.13"]:
        try:
            return ctypes.CDLL(p)
        except OSError:
            continue
    return None


class L2Guard:
    """Keeps a candidate from carving out persisting L2: limit 0 and a reset before each sample.

    Some drivers read back a non-zero limit that nobody set (an H200 under driver 580 reports
    11796480 bytes from a fresh context, and again after it is set to 0), so the value read right
    after the harness's own first reset, before any candidate code exists, is the floor: only a
    limit above it was set by the candidate.
    """

    LIMIT_PERSISTING_L2 = 0x06

    def __init__(self, enabled):
        self.lib = _cudart() if enabled else None
        self.seen_bytes = 0
        self.floor = None

    def _read(self):
        import ctypes
        v = ctypes.c_size_t(0)
        return int(v.value) if self.lib.cudaDeviceGetLimit(ctypes.byref(v), self.LIMIT_PERSISTING_L2) == 0 else 0

    def reset(self):
        if self.lib is None:
            return
        import ctypes
        if self.floor is not None:
            v = self._read()
            if v > self.floor:
                self.seen_bytes = max(self.seen_bytes, v)
        self.lib.cudaDeviceSetLimit(self.LIMIT_PERSISTING_L2, ctypes.c_size_t(0))
        self.lib.cudaCtxResetPersistingL2Cache()
        if self.floor is None:
            self.floor = self._read()


def harness_codes(modules):
    """Every code object of the harness's modules (functions, methods, nested code), by id; the
    objects are kept with them so no id is reused."""
    seen = {}

    def add(code):
        if _oid(code) in seen:
            return
        seen[_oid(code)] = code
        for c in code.co_consts:
            if hasattr(c, "co_code"):
                add(c)

    def from_obj(v):
        for f in (v, getattr(v, "__func__", None), getattr(v, "fget", None), getattr(v, "fset", None)):
            code = getattr(f, "__code__", None)
            if type(code) is CodeType:  # not the descriptor a type (FunctionType itself) gives
                add(code)

    for mod in modules:
        for v in list(vars(mod).values()):
            if isinstance(v, type) and getattr(v, "__module__", None) == mod.__name__:
                for w in list(vars(v).values()):
                    from_obj(w)
            else:
                from_obj(v)
    return seen


# Audit events (PEP 578) and what each means while candidate code can run. Measured on Python
# 3.11: frame.f_back and f_locals are not audited, but every way to get a first frame is
# (sys._getframe, sys._current_frames, tb_frame, gi_frame/cr_frame/ag_frame), and so is reading
# frame.f_code, which every walk that looks for a frame by its code does.
# Frames of the harness reached by the candidate: it is looking for the harness's objects.
FRAME_EVENTS = ("sys._getframe", "sys._current_frames")
FRAME_ATTRS = ("f_code", "tb_frame", "gi_frame", "cr_frame", "ag_frame")

# /proc/<pid>/mem (self, thread-self, a task's): the process's memory as a file. The sandbox lets a
# run read everything and write its own /proc entries (cuInit needs them), so through it every
# byte of the harness, the hook's secrets included, could be read or written with no ctypes call.
_PROC_MEM = re.compile(r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/mem$")


def _names_process_memory(path):
    """Whether an opened path is a process's memory file: one that resolves to /proc/<pid>/mem,
    or a relative one named mem (opened beside a directory descriptor, which the event omits)."""
    if type(path) is bytes:
        path = path.decode("utf-8", "surrogateescape")
    if type(path) is not str or os.path.basename(path.rstrip("/")) != "mem":
        return False
    if not path.startswith("/"):
        return True
    try:
        return bool(_PROC_MEM.match(os.path.realpath(path)))
    except (OSError, ValueError):
        return True
# Events the candidate never raises honestly, by class: (finding, what it says, whether it exposes
# the secrets: then the invalid line is written at once).
_SEEN = {}
# Whole-heap walks: how a candidate finds the harness's objects without frames. Honest kernels,
# torch.compile, Triton and CUDA extensions never call them while a run is measured.
_SEEN.update({e: ("gc_walk", "walked the interpreter's objects (%s)", True)
             for e in ("gc.get_objects", "gc.get_referrers", "gc.get_referents")})
# Reads of raw memory through ctypes (the nonce, the clock's records).
_SEEN.update({e: ("ctypes_read", "read raw memory through ctypes (%s)", True)
             for e in ("ctypes.string_at", "ctypes.wstring_at", "ctypes.cdata")})
# Hooks that run code at every call: a result dict rewritten after every check ran. An alarm at
# once: such a hook sees (and can rewrite) every frame's locals, the audit hook's included.
_SEEN.update({e: ("profile_hook", "installed a profile or trace hook (%s)", True)
             for e in ("sys.setprofile", "sys.settrace", "sys._setprofileallthreads", "sys._settraceallthreads")})
# Ways to make code under another file's name (compile(source, name), code.replace, marshal).
FORGING_EVENTS = ("compile", "code.__new__", "marshal.loads")
# ctypes's own raw memory writers, by address (a call through them rewrites any object in place).
try:
    import ctypes as _ctypes
    _RAW_WRITES = {_ctypes._memmove_addr: "memmove", _ctypes._memset_addr: "memset"}
except (ImportError, AttributeError):
    _RAW_WRITES = {}
# Read-only views: SEEN emptied in place silenced the hook's alarms while a profile hook passed
# every check. A view still hands its dict to the other side of ==, whose __eq__ can empty it: the
# state compares the views by content (_content), and the hook keeps copies taken when installed.
SEEN, RAW_WRITES = MappingProxyType(_SEEN), MappingProxyType(_RAW_WRITES)
del _SEEN, _RAW_WRITES


# The C library's calls that make memory executable code lives in writable (or map over it): a red
# team made the page of libtorch's max_all kernel writable with mprotect through ctypes and wrote
# a jump to min_all's over its first bytes, so every check's worst element was its best (a clean
# 2.1-2.8x on the CPU). Looked up by name through ctypes, they are an alarm: no honest kernel
# calls them that way (torch's and Triton's own mappings are made in C). A call through an address
# found otherwise raises no audit event (ctypes raises none for a foreign call): native_pin pins
# the first bytes of the code each kernel pointer leads to, which such a write changes.
MEMORY_MAP_CALLS = ("mprotect", "pkey_mprotect", "mmap", "mmap64", "mremap")


# The C library's own symbol lookups: taken through ctypes, they hand the candidate any function of
# the interpreter's C API under a name the ctypes.dlsym event never sees (only "dlsym"), such as
# PyErr_SetInterruptEx (a Python signal handler tripped with no signal). A foreign call raises no
# audit event, so the lookup of these two is what the hook sees.
SYMBOL_LOOKUPS = ("dlsym", "dlvsym")
from marshal import loads as _marshal_loads  # noqa: E402
# torch.compile's CPU code loads and calls its kernels through ctypes: counted only.
CTYPES_COUNTED = ("ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function", "ctypes.addressof")
# CPython's own test modules: their functions reach the interpreter's internals with no audit
# event of their own (_testcapi._pending_threadfunc queued work the interpreter ran just after the
# harness's clock read that ended a call: a red team's, cheats/pending_call_chain.py). No kernel
# and no library imports them while a run is measured.
TEST_MODULES = frozenset(("_testcapi", "_testinternalcapi", "_testbuffer", "_testmultiphase", "_testimportmultiple",
                          "_testsinglephase", "_xxtestfuzz", "_testclinic", "_ctypes_test", "xxsubtype",
                          "_xxsubinterpreters", "_testconsole"))
# Signals to this process or others (stopping the baseline's harness); signal 0 (is it alive?) is
# what lock files and pools send: counted only.
SIGNAL_EVENTS = ("os.kill", "os.killpg", "signal.pthread_kill")


def _identity_guard(parts):
    """changed(): for each (label, live namespace, names it may gain, type its new values may be)
    of parts, 'label.name' for each name that no longer holds the object it held now (by `is`,
    against a copy kept in this closure) or was added but as allowed; 'label (a name of its own
    type)' where a key is not a str (never hashed here: its __hash__ would run). Builtins and dict
    methods only, taken now: nothing it calls can be replaced, and it looks no global up."""
    snaps = [(label, live, dict(live), may_add, may_add_type) for label, live, may_add, may_add_type in parts]
    kind, marker = type, object()

    def changed():
        out = []
        for label, live, snap, may_add, may_add_type in snaps:
            keys = list(live)
            if any(kind(k) is not str for k in keys):
                out.append("%s (a name of its own type)" % label)
                continue
            for k in keys:
                if k not in snap and k not in may_add and not (may_add_type is not None and kind(live[k]) is may_add_type):
                    out.append("%s.%s (new)" % (label, k))
            for k, v in snap.items():
                if live.get(k, marker) is not v:
                    out.append("%s.%s" % (label, k))
        return out

    return changed


def _json_guard():
    """A check that json's code is still what it is now: json.dumps and json.loads look up
    JSONEncoder's and JSONDecoder's methods, their modules' globals and the default coders'
    attributes at every call, so a candidate that replaced one (JSONEncoder.encode) rewrote the
    run's result as it was written (cheats/json_encoder_rewrite.py). Returns intact(): whether
    every name seen now still holds the same object and none was added (but a submodule of json:
    an import of json.tool adds json.tool)."""
    import json.decoder
    import json.encoder
    import json.scanner
    from types import ModuleType
    none = frozenset()
    parts = [(m.__name__, vars(m), none, ModuleType if m is json else None)
             for m in (json, json.encoder, json.decoder, json.scanner)]
    parts += [(c.__name__, vars(c), none, None) for c in (json.encoder.JSONEncoder, json.decoder.JSONDecoder)]
    parts += [(name, vars(o), none, None) for name, o in (("_default_encoder", getattr(json, "_default_encoder", None)),
                                                         ("_default_decoder", getattr(json, "_default_decoder", None)))
              if o is not None]
    changed = _identity_guard(parts)

    def intact():
        return not changed()

    return intact


def _names_guard(harness):
    """changed() (_identity_guard) over every global of the harness's modules (a module's
    __warningregistry__ may be added) and every attribute of their own classes; the audit hook
    asks it when the result is written. (Setting a class's attribute raises no audit event.)
    The snapshot compared after every sample reads identities through the defences' own module
    globals: a candidate rebound hotkernel_defences._oid to a callable that answered the original's
    identity for itself and for a replaced TrustedRun method (a red team's)."""
    mods = [harness.watch[name] for name in sorted(harness.own_modules) if name in harness.watch]
    registry, none = frozenset({"__warningregistry__"}), frozenset()
    parts = []
    for mod in mods:
        parts.append((mod.__name__, vars(mod), registry, None))
        for v in list(vars(mod).values()):
            if isinstance(v, type) and getattr(v, "__module__", None) == mod.__name__:
                parts.append(("%s.%s" % (mod.__name__, v.__name__), vars(v), none, None))
    return _identity_guard(parts)


def install_watch(nonce, result_fd, main_code):
    """Installs the harness's own audit hook; returns nothing, so that the nonce and the result
    fd live only in the hook's closure (the interpreter holds the hook; Python code reaches it
    only through gc walks, which the hook sees). Events before `hotkernel.arm` are ignored (the
    contract's import, the sandbox's own ctypes calls). The harness hands it the finished result
    with sys.audit("hotkernel.result", line) from main(); the hook adds what it saw and writes it.
    A finding that exposes the secrets (the harness's frames reached, a heap walk, a raw memory
    read) writes an invalid result at once: a result the candidate forges afterwards makes the
    channel carry two lines with the nonce, which the binary rejects."""
    import threading
    from types import FunctionType
    # The rules as they are now, in this closure: the module's names can be rebound (the state
    # comparison sees that only at the next sample) and were once emptied in place.
    rules_frame_events, rules_frame_attrs, rules_forging_events = FRAME_EVENTS, FRAME_ATTRS, FORGING_EVENTS
    # Copies: a read-only view hands its dict to the other side of ==, whose __eq__ can empty it.
    rules_raw_writes, rules_memory_map_calls, rules_seen = dict(RAW_WRITES), MEMORY_MAP_CALLS, dict(SEEN)
    rules_symbol_lookups, rules_ctypes_counted, rules_signal_events = SYMBOL_LOOKUPS, CTYPES_COUNTED, SIGNAL_EVENTS
    rules_test_modules = TEST_MODULES
    write = os.write
    dumps = json.dumps
    loads = json.loads
    getframe = sys._getframe
    oid = object.__hash__  # a local: the module's names can be rebound
    names_process_memory = _names_process_memory
    names_guard = _names_guard
    get_ident = threading.get_ident
    cache_tag, prefix, optimize = sys.implementation.cache_tag, sys.pycache_prefix, sys.flags.optimize
    from io import open as open_file
    st = {"armed": False, "busy": set(), "codes": {}, "path": None, "role": None, "target": None, "names": None,
          "invalid": [], "flags": [], "counts": {}, "alarmed": False, "lock": threading.RLock()}
    json_intact = _json_guard()
    # Said instead of the result when json's code was replaced: no encoder writes this one.
    unwritable = ('{"protocol": 3, "status": "invalid", "ok": false, "ms": 0.0, "samples_ms": [], "trusted": true, '
                  '"reason": "the candidate replaced code of the json module (JSONEncoder, JSONDecoder or their '
                  'modules), which writes this run\'s result", "nonce": "%s"}\n')

    def send(result, last=False):
        if json_intact():
            line = (dumps(dict(result, nonce=nonce), allow_nan=False, default=str) + "\n").encode()
            if not json_intact():  # replaced meanwhile (a thread)
                line = (unwritable % nonce).encode()
        else:
            line = (unwritable % nonce).encode()
        if result_fd is None:
            sys.stdout.write(line.decode())
            sys.stdout.flush()
            return
        while line:
            line = line[write(result_fd, line):]
        if last:
            # Closed at once: a fork server answers at the close (main() explains the order).
            os.close(result_fd)

    def is_harness(frame):
        return frame is not None and oid(frame.f_code) in st["codes"]

    def asker_is_harness(depth=3, libraries=True):
        """Whether the code that raised the event is not the candidate's: the first frame above the
        hook outside the standard library (traceback, inspect, gc's callers) is the harness's or,
        where `libraries`, an installed library's (torch.compile's FakeTensorMode walks the whole
        stack for its traceback), not the candidate's file or code from no installed file.
        A library's frame also runs what the candidate hands it: torch's tree_map over
        ctypes.c_double.from_address wrote the sample loop's running sum with the event raised
        from _pytree's frame (cheats/laundered_raw_write.py). So for what no library does while
        a run is measured (raw memory, heap walks, profile hooks, the C API), `libraries` is off
        and only the harness's own frames answer for the event."""
        f = getframe(depth)  # 0 this, 1 _judge, 2 hook, 3 the code whose call raised the event
        while f is not None:
            code = f.f_code
            if oid(code) in st["codes"]:
                return True
            name = code.co_filename
            if type(name) is not str:  # a file name of its own type: made by the candidate
                return False
            if name == st["path"]:
                return False
            if name.startswith(st["lib_roots"]):
                return libraries  # site-packages: torch, Triton, ...
            # The standard library and the interpreter's frozen modules (importlib) pass the
            # question to their caller; code under another "<...>" name (exec'd from a string) is
            # nobody's the harness knows: the candidate's. No code can claim either name: making it
            # under a library's file name or a frozen module's is an alarm (_judge, "compile").
            if not name.startswith(st["stdlib"] + ("<frozen ",)):
                return False
            f = f.f_back
        return True

    def claims_library_name(filename):
        """Whether code made under this file name would be taken for a library's or the standard
        library's (asker_is_harness)."""
        if type(filename) is bytes:
            filename = filename.decode("utf-8", "replace")
        if type(filename) is not str:  # its own type, whose methods would run inside this hook: forged
            return True
        return filename.startswith(st["lib_roots"] + st["stdlib"] + ("<frozen ",))

    def same_as_file(source, filename):
        """Whether `source` is the file's own text (an import compiles a module's file as it is).
        Exact types only: a subclass's methods would run inside this hook."""
        if type(filename) is not str:
            return False
        try:
            with open_file(filename, "rb") as fh:
                text = fh.read()
        except (OSError, TypeError, ValueError):
            return False
        if type(source) is str:
            source = source.encode("utf-8", "surrogateescape")
        return type(source) in (bytes, bytearray, memoryview) and bytes(source) == text

    def same_as_cached(data, filename):
        """Whether `data` is the marshalled code of the file's own bytecode cache
        (__pycache__/<stem>.<tag>.pyc past its 16-byte header), as an import loads it. The path is
        made with str's own methods: the candidate can rebind importlib's and posixpath's helpers."""
        if type(filename) is not str or not filename.endswith(".py") or cache_tag is None:
            return False
        folder, _, base = filename.rpartition("/")
        name = base[:-3] + "." + cache_tag + (".opt-%d" % optimize if optimize else "") + ".pyc"
        # As importlib's cache_from_source: beside the source, or under sys.pycache_prefix.
        path = (prefix.rstrip("/") + folder + "/" + name) if prefix else (folder + "/__pycache__/" + name)
        try:
            with open_file(path, "rb") as fh:
                cached = fh.read()
        except (OSError, TypeError, ValueError):
            return False
        return len(cached) > 16 and cached[16:] == data

    def forged_code_files(code, depth=0):
        """The library file names a code object (and the code nested in it) claims."""
        if depth > 50 or not hasattr(code, "co_filename"):
            return []
        out = [code.co_filename] if claims_library_name(code.co_filename) else []
        for c in code.co_consts:
            if hasattr(c, "co_filename"):
                out += forged_code_files(c, depth + 1)
        return out

    def note(kind, what, exposes):
        count(kind)
        if what in st["invalid"] or len(st["invalid"]) >= 6:  # bounded: the counts say the rest
            return
        st["invalid"].append(what)
        if exposes and not st["alarmed"]:
            st["alarmed"] = True
            # ms 0: an invalid line carries a number (the binary's own invalid lines do the same).
            send({"protocol": 3, "target": st["target"], "role": st["role"], "status": "invalid", "ok": False,
                  "ms": 0.0, "samples_ms": [], "trusted": True,
                  "reason": "the candidate %s; the harness's secrets were within its reach, so this run's result "
                            "is this line" % what})

    def count(kind):
        st["counts"][kind] = st["counts"].get(kind, 0) + 1

    def hook(event, args):
        if not st["armed"]:
            if event == "hotkernel.arm" and getframe(1).f_code is main_code.get("run"):
                st.update(codes=args[0], path=args[1], role=args[2], target=args[3], lib_roots=args[4][0],
                          stdlib=args[4][1], armed=True, pinned=args[5].pinned() if len(args) > 5 else None,
                          names=names_guard(args[5]) if len(args) > 5 else None)
            elif event == "hotkernel.result":
                if getframe(1).f_code is main_code.get("main"):
                    send(loads(args[0]) if json_intact() else {}, last=True)
            return
        # Most events are none of the rules' (id(), imports' opens, a function's __code__ read: a
        # check reads ~500): let go first. The interpreter names the attribute with a str; any
        # other name is sys.audit's caller's own, whose == would run its code here.
        if event == "object.__getattr__" and (len(args) < 2 or type(args[1]) is not str or
                                              args[1] not in rules_frame_attrs):
            return
        if not (event.startswith(("sys.", "object.__", "gc.", "ctypes.", "os.kill", "signal.", "hotkernel.", "code.",
                                  "marshal.loads")) or event in ("compile", "import") or
                (event == "open" and names_process_memory(args[0]))):
            return
        tid = get_ident()
        if tid in st["busy"]:
            return  # an event the hook's own work raised (its frame reads)
        if event == "sys.addaudithook":
            # The candidate's is blocked (a RuntimeError from an existing hook stops the new one
            # being added); an installed library's (torch.compile adds one) is counted and kept.
            st["busy"].add(tid)
            try:
                library = asker_is_harness(depth=2)
            except Exception:
                library = False
            finally:
                st["busy"].discard(tid)
            if library:
                count("audit_hook_library")
                return
            note("audit_hook", "added an audit hook (sys.addaudithook)", False)
            raise RuntimeError("hotkernel: audit hooks are the harness's")
        with st["lock"]:
            st["busy"].add(tid)
            try:
                _judge(event, args)
            except Exception:  # never the event's caller's failure (a harness bug in judging)
                pass
            finally:
                st["busy"].discard(tid)

    def _judge(event, args):
        if event == "hotkernel.tampered":
            # The harness's own finding (TrustedRun.tampered), kept here: set back to None on the
            # run, it still voids the result. Said by anything else, it is ignored.
            if oid(getframe(2).f_code) in st["codes"] and isinstance(args[0], str):
                what = args[0][len("the candidate "):] if args[0].startswith("the candidate ") else "was seen: " + args[0]
                note("tampered", what[:600], False)
            return
        if event == "hotkernel.result":
            if getframe(2).f_code is not main_code.get("main"):
                note("forged_result", "posted a result through the harness's own channel", True)
                return
            st["armed"] = False
            if st["alarmed"]:
                if result_fd is not None:
                    os.close(result_fd)
                return  # the alarm's line is this run's result
            if not json_intact():  # the line was made by the candidate's encoder: said as unwritable
                send({}, last=True)
                return
            res = loads(args[0])
            late = []
            try:
                unpinned = _changed_since_pinned(st.get("pinned"))
            except Exception as e:  # never the reason no result is written
                unpinned = ["could not be compared: %s: %s" % (type(e).__name__, str(e)[:200])]
            if unpinned:
                late.append("changed the harness's own state or the snapshot it is compared with (%s)"
                            % ", ".join(unpinned[:6]))
            names_changed = st["names"]
            try:
                rebound = names_changed() if names_changed is not None else []
            except Exception as e:
                rebound = ["could not be compared: %s: %s" % (type(e).__name__, str(e)[:200])]
            if rebound:
                late.append("rebound globals of the harness's modules or attributes of its classes (%s)"
                            % ", ".join(rebound[:6]))
            if sys.getprofile() is not None or sys.gettrace() is not None:
                late.append("left a profile or trace hook installed (sys.setprofile/settrace)")
            if getattr(threading, "_profile_hook", None) is not None or getattr(threading, "_trace_hook", None) is not None:
                late.append("left a profile or trace hook for new threads (threading.setprofile/settrace)")
            found = st["invalid"] + [w for w in late if w not in st["invalid"]]
            # The harness's own findings it said here as well: once, where the line says them already.
            said = res.get("reason") if res.get("status") == "invalid" and isinstance(res.get("reason"), str) else ""
            found = [w for w in found if not (said and w in said)]
            if st["counts"]:
                res["audit"] = dict(sorted(st["counts"].items()))
            if found:  # a verdict, even where the run then failed: what the candidate did is why
                why = "the candidate " + "; the candidate ".join(found)
                if res.get("status") in ("invalid", "error") and res.get("reason"):
                    why += "; " + res["reason"]
                res["status"], res["ok"], res["reason"] = "invalid", False, why
                if not isinstance(res.get("ms"), (int, float)):
                    res["ms"] = 0.0
            if st["flags"]:
                res["flags"] = list(res.get("flags") or []) + st["flags"]
            send(res, last=True)
            return
        if event in rules_frame_events:
            if event == "sys._current_frames":
                if not asker_is_harness():
                    note("frame_walk", "took every thread's frame (sys._current_frames), the harness's among them", True)
                return
            if asker_is_harness():
                return
            if is_harness(args[0]):
                note("frame_walk", "took a frame of the harness (sys._getframe)", True)
            else:
                count("frames_taken")  # its own frame: torch.compile and logging do it too
            return
        if event == "object.__getattr__":
            obj, name = args[0], args[1]  # a name in rules_frame_attrs: the others were let go in hook()
            frame = obj if name == "f_code" else getattr(obj, name, None)
            if is_harness(frame) and not asker_is_harness():
                note("frame_walk", "walked into the harness's frames (%s of %s)" % (name, frame.f_code.co_name), True)
            return
        if event == "object.__setattr__":
            # Plain functions only: reading an attribute of any other object could run the
            # candidate's code (a metaclass property) inside this hook, whose frames hold the secrets.
            if (type(args[1]) is str and args[1] in ("__defaults__", "__kwdefaults__") and type(args[0]) is FunctionType
                    and oid(getattr(args[0], "__code__", None)) in st["codes"] and not asker_is_harness(libraries=False)):
                note("defaults_replaced", "replaced the defaults of the harness's %s"
                     % getattr(args[0], "__qualname__", "?"), False)
                return
            if type(args[1]) is str and args[1] == "__code__" and type(args[0]) is FunctionType:
                code = getattr(args[0], "__code__", None)
                harness_own = code is not None and oid(code) in st["codes"]
                if asker_is_harness(libraries=not harness_own):  # no library replaces the harness's code
                    return
                if harness_own:
                    note("code_replaced", "replaced the code of the harness's %s" % getattr(args[0], "__qualname__", "?"),
                         False)
                else:
                    count("code_replaced")
            return
        if event in rules_forging_events:
            # Code that claims a library's file name passes asker_is_harness's test as the library's:
            # making such code is how the candidate would hide its heap walks and frame reads.
            if event == "compile":
                forged = claims_library_name(args[1]) and not same_as_file(args[0], args[1])
                name = args[1]
            elif event == "code.__new__":
                forged, name = claims_library_name(args[1]), args[1]
            elif type(args[0]) not in (bytes, bytearray, memoryview):  # a buffer of its own type: forged
                forged, name = True, None
            else:
                # An import's loads: the event carries the bytes of the module's cached .pyc, and
                # the asker can be a file outside every library (inductor's generated modules
                # import torch's lazily). The same bytes as the named file's own cache are the
                # library's; any other code under its name is forged.
                data = bytes(args[0])
                names = forged_code_files(_marshal_loads(data))
                forged, name = bool(names) and not same_as_cached(data, names[0]), names[0] if names else None
            if type(name) is not str:
                name = "a name of its own type" if name is not None else "?"
            # A load of bytes that are not the file's cache has no library's reason (imports
            # load the cache): no library vouches for it.
            if forged and not asker_is_harness(libraries=event != "marshal.loads"):
                note("forged_code", "made code under a library's file name (%s, by %s), which the harness would take "
                                    "for the library's" % (str(name)[:200], event), True)
            elif forged:
                count("library_code_made")
            return
        if event == "import":  # a module loaded for the first time (one in sys.modules raises none)
            name = args[0] if args and type(args[0]) is str else ""
            origin = args[1] if len(args) > 1 and type(args[1]) is str else ""
            # By its last name and its file's: a spec made for "x._testcapi" from the module's own
            # file loads it under another name.
            file_stem = origin.rpartition("/")[2].partition(".")[0]
            if ((name.rpartition(".")[2] in rules_test_modules or file_stem in rules_test_modules)
                    and not asker_is_harness(libraries=False)):
                note("test_module", "imported CPython's test module %s, which reaches the interpreter's internals "
                                    "(pending calls, raw memory) with no event of its own" % name[:100], True)
            return
        if event == "open":  # only a path _names_process_memory took for it gets here
            if not asker_is_harness(libraries=False):
                note("proc_mem", "opened the process's own memory as a file (%s), raw reads and writes no "
                                 "other event sees" % str(args[0])[:200], True)
            return
        if event == "ctypes.call_function" and args and args[0] in rules_raw_writes:
            if not asker_is_harness(libraries=False):
                note("ctypes_write", "wrote raw memory through ctypes (%s)" % rules_raw_writes[args[0]], True)
            return
        if event == "ctypes.dlsym" and args and type(args[-1]) is str and args[-1] in rules_memory_map_calls:
            if not asker_is_harness(libraries=False):
                note("memory_map", "looked up %s through ctypes: code in memory could be made writable and rewritten"
                     % args[-1], True)
            return
        rule = rules_seen.get(event)
        if rule is not None:
            if not asker_is_harness(libraries=False):
                note(rule[0], rule[1] % event, rule[2])
            return
        if event == "ctypes.dlsym" and (type(args[-1]) not in (str, int) or
                                        (type(args[-1]) is str and (args[-1].startswith(("Py", "_Py")) or
                                                                    args[-1] in rules_symbol_lookups))):
            if not asker_is_harness(libraries=False):
                what = args[-1] if type(args[-1]) is str else "a symbol named by an object of its own type"
                note("ctypes_read", "called the interpreter's C API through ctypes (%s)" % what, True)
            return
        if event in rules_ctypes_counted:
            count(event.replace(".", "_"))
            return
        if event in rules_signal_events:
            sig = args[-1] if args else None
            if type(sig) is not int:  # its own type, whose methods would run inside this hook
                sig = "of its own type"
            if sig == 0:
                count("signal_probe")
            elif not asker_is_harness():
                note("signal", "sent signal %s (%s)" % (sig, event), False)
            return

    sys.addaudithook(hook)


def library_roots():
    """(where installed packages live, where the standard library lives), as path prefixes:
    frames from neither are the candidate's."""
    import site
    import sysconfig
    paths = sysconfig.get_paths()
    stdlib = {p for p in (paths.get("stdlib"), paths.get("platstdlib")) if p}
    roots = {p for p in (paths.get("purelib"), paths.get("platlib")) if p}
    try:
        roots.update(site.getsitepackages())
        if site.ENABLE_USER_SITE:
            roots.add(site.getusersitepackages())
    except AttributeError:
        pass
    roots -= stdlib  # site-packages only (inside the stdlib folder in a venv: tested first)
    # A path prefix ends at a separator: /usr/lib/python3.11 is not /usr/lib/python3.11-evil.
    sep = lambda ps: tuple(sorted(p.rstrip("/") + "/" for p in ps))
    return sep(roots), sep(stdlib)
