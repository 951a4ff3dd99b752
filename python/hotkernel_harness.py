"""hotkernel harness: measures a protocol-3 target file under the binary's own contract.

The binary starts `python <embedded dir>/hotkernel_harness.py --run FILE --role ROLE
[--target-from BASELINE]` with a private result pipe (fd in HOTKERNEL_RESULT_FD) and one JSON
line on stdin: {"nonce": ..., "check_seed": ..., "clock": SOCKET, "scratch": ..., "caches": [...],
"py_sha256": {file: sha256}, "profile_check": bool, "allow_unsandboxed": bool}. Order matters;
everything the candidate could tamper with is set up before its file is imported:

  1. read the nonce and the hidden seed from stdin, then close stdin; move the result fd to a
     private non-inheritable descriptor and drop every HOTKERNEL_* variable from the environment;
     the nonce and the fd go to the harness's audit hook (hotkernel_defences.install_watch), the
     only holder: no frame on the stack while the candidate runs has them;
  2. load the defences and the contract from beside this file (the binary's copies) by their
     bytes, each checked against py_sha256 and never read from a bytecode cache, and pre-load the
     contract into sys.modules, so the target's own `import hotkernel_contract` gets it, never
     the vendored one; connect to the parent's clock (hotkernel_release.py); apply the kernel
     sandbox while this is the process's only thread, so it binds every later one
     (hotkernel_sandbox.py: Landlock, no_new_privs, capabilities, resource limits, seccomp; a run
     is refused where none could be applied, unless hotkernel says allow_unsandboxed);
  3. take references to the timing primitives (perf_counter, CUDA events, synchronize, graphs);
  4. build the check inputs from the hidden seed and their fp32 reference; poison the allocator
     with NaN; timed calls later get fresh values per sample (os.urandom at that moment) whose
     references are computed only after the sample, so no answer exists while they run;
  5. snapshot the harness (contract, harness, timer and torch functions) to detect patching;
  6. time the empty samples the parent's clock needs (the fixed cost of a sample);
  7. arm the audit hook (it sees frame and heap walks, raw memory reads, profile, trace and audit
     hooks, code replacement and signals from the candidate); only then import the file and take
     its `kernel` function; measure with the defences below, every timed sample released and
     ended by the parent's clock;
  8. hand the result to the audit hook, which adds what it saw and writes one line with the nonce
     to the private fd (a finding that exposes the secrets has written an invalid line at once).
     The script's stdout is ignored.

Defences, one per known cheat (docs/trust.md, and an adversarial test each): outputs of every timed call are
checked on a GPU (on the CPU every output is held and a share is checked, picked after each
sample: CPU_CHECKED_CALLS), each sample on fresh input values (caching, replay, batch-and-skip,
warm-up detection, partial writes); inputs are compared before/after (mutation); NaN/Inf and
tensor subclasses fail; the allocator is NaN-poisoned (unwritten outputs); some calls are
checked right after they return, before any synchronisation (side streams, background threads,
lazy work); threads started during timing are counted; the persisting-L2 limit is reset before
every sample; timing uses primitives captured before import and the harness is checked for
patches. The snapshot, thread watch, L2 guard and captured primitives live in
hotkernel_defences.py; this file is the order of the steps and the measurement.
"""
import builtins as _shared_builtins
__builtins__ = dict(vars(_shared_builtins))  # this module's own builtins (hotkernel_defences.own_builtins says why)

import sys

sys.dont_write_bytecode = True  # nothing this run imports leaves bytecode for a later run

import argparse
import hashlib
import json
import os
import time
from signal import SIG_BLOCK, SIG_SETMASK
import traceback
import types

HARNESS_PROTOCOL = 1
_HERE = os.path.dirname(os.path.abspath(__file__))
# Bound by _load_defences() from hotkernel_defences.py, hotkernel_sandbox.py and
# hotkernel_release.py, once their bytes are checked.
Harness = L2Guard = Primitives = ThreadWatch = harness_codes = install_watch = library_roots = None
hotkernel_sandbox = ParentClockError = Release = None


# Code objects the fork server compiled once from hotkernel's files (hotkernel_forkserver.py,
# _run_script), by (path, sha256 of the bytes compiled): load_checked takes one only for bytes it
# checked, and none is left once the harness is loaded. Absent in a fresh interpreter.
_PRECOMPILED = globals().pop("_HOTKERNEL_COMPILED", None) or {}
# What the harness's patch check reads from each of those code objects (torch_name_table's answer).
_KNOWN_TORCH_NAMES = _PRECOMPILED.pop("torch_names", None) or {}
_NATIVE_STUBS = _PRECOMPILED.pop("native_stubs", None)  # the fork server's table (Harness: native)
# The sha256 of the bytes this file was compiled from when the fork server ran its code.
_RAN_SHA256 = globals().pop("_HOTKERNEL_RAN_SHA256", None)


class UncheckedSource(Exception):
    """A file of the harness whose bytes are not the binary's."""


def _checked_bytes(name, expected):
    """The bytes of python/<name> beside this file, checked against the binary's sha256 when the
    binary sent one (always, in a measured run; not when run by hand)."""
    path = os.path.join(_HERE, name)
    with open(path, "rb") as f:
        data = f.read()
    if expected is not None:
        want = expected.get(name)
        got = hashlib.sha256(data).hexdigest()
        if want != got:
            raise UncheckedSource("%s has sha256 %s, not the binary's %s: hotkernel's Python folder was changed "
                                  "after hotkernel checked it" % (path, got[:12], (want or "(none sent)")[:12]))
    return path, data


def load_checked(name, expected):
    """Imports python/<name>.py from its checked bytes into a fresh module (never from a bytecode
    cache, whatever __pycache__ holds) and registers it in sys.modules."""
    path, data = _checked_bytes(name + ".py", expected)
    code = _PRECOMPILED.pop((path, hashlib.sha256(data).hexdigest()), None) if _PRECOMPILED else None
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    try:
        exec(code or compile(data, path, "exec", dont_inherit=True), mod.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def _load_defences(expected):
    global Harness, L2Guard, Primitives, ThreadWatch, harness_codes, install_watch, library_roots
    global hotkernel_sandbox, ParentClockError, Release
    d = load_checked("hotkernel_defences", expected)
    Harness, L2Guard, Primitives, ThreadWatch = d.Harness, d.L2Guard, d.Primitives, d.ThreadWatch
    harness_codes, install_watch, library_roots = d.harness_codes, d.install_watch, d.library_roots
    hotkernel_sandbox = load_checked("hotkernel_sandbox", expected)
    r = load_checked("hotkernel_release", expected)
    ParentClockError, Release = r.ParentClockError, r.Release


if __name__ != "__main__":  # imported as a library (tests, probes): nothing to check the bytes against
    _load_defences(None)

# The per-sample SM clock probe: 200k cycles is ~0.1 ms at 2 GHz, long against the events' ~0.5 us
# resolution.
CLOCK_PROBE_CYCLES = 200000
# Graph replays on fresh values, at random places among the timed ones, each checked call by call.
VERIFY_REPLAYS = 2
# Memory allowed for the held outputs of one sample (at least the bytes its sets may grow to).
HOLD_BUDGET_BYTES = 4 << 30
# A checked graph replay's outputs are copied and checked after the samples, so the GPU never
# waits for the host's check between two timed samples and needs no ramp back (hk.RAMP_S) after
# it: on an H200 each such ramp was 0.03 s of a run, ~0.06 s of each workload's 0.15-0.2 s. The
# copies of all checked replays must fit in this; where they do not, each is checked at once,
# followed by a ramp, as before. At least twice the bytes a sample's sets may grow to.
DEFERRED_CHECK_BYTES = 2 << 30
# Calls per sample checked immediately after they return (before any device-wide sync).
SPOT_CHECKS_PER_SAMPLE = 2
# A CPU spot copy's own bytes are timed around C functions only (_copy_timed); the harness's Python
# steps around them (reading the output's layout, a ctypes view of its memory) are not, since a
# handler of the candidate's can run inside any bytecode. They are taken out of the window as a
# fixed amount instead, the same whatever the output's size: this many times what they took a
# copy in the empty samples, before the import, where they run warm; after a call they run cold
# (bench/runs/2026-12-04-cpu-spot-copy has the figures this was chosen on). A candidate cannot make
# them cheaper than warm, so this is at most ~2 warm steps a copy of room, where a handler inside a
# timed copy had up to the parent's whole cap (0.3 ms + 8 empty copies).
COPY_STEPS_COLD_FACTOR = 3.0
# On the CPU a checked call costs several timed ones (its fp32 reference and the check run on the
# same cores as the calls): the bundled RMSNorm's 12 calls of ~7 ms took ~0.6 s of checks a sample,
# 6 s of a 9 s run. So on the CPU a sample's outputs are all held, as on a GPU, but only
# CPU_CHECKED_CALLS of them (at least CPU_CHECKED_SHARE of the calls) are checked, picked from
# os.urandom after the sample's window has closed: while the calls run, nothing that says which
# will be checked exists. A candidate that fakes r of a sample's n calls passes a sample with
# probability C(n - r, m) / C(n, m) for m checked (the spot checks only lower it), so a run of
# S samples with probability (C(n - r, m) / C(n, m)) ** S (docs/measurement.md gives the figures).
# Every GPU timer checks every held call.
CPU_CHECKED_CALLS = 3
CPU_CHECKED_SHARE = 0.25
# With the CUPTI timer, a call's time is its kernels' and copies' own time. The same graph timed by
# events (no CUPTI) reads a node gap more: ~0.6 us over a 2.9 us gelu, ~0.5 us over 46 us on an
# H200 (bench/probes/cupti_probe.py). Far more than that is work CUPTI does not see (host nodes,
# records filtered): the run is invalid.
EVENT_OVER_CUPTI_RATIO = 1.25
EVENT_OVER_CUPTI_MS = 0.005
# Empty samples (a sample's every step but its calls) timed by the parent before the candidate is
# imported: their median is the fixed cost of a sample (src/measure/parent_clock.h).
EMPTY_SAMPLES = 15
EMPTY_CALLS = 200
# Elements of each reference the harness's own checks are recorded on (_record_harness_ops).
RECORD_ELEMENTS = 256
# Sets whose inputs each release's secret goes into (all of them when there are fewer).
MIX_SETS = 4
# CPU seconds that threads the process did not have before the import may use in a CPU run's
# timing phase, at the least (a tenth of the calls' own time above it): an honest candidate
# starts none, and a thread that only waits uses microseconds.
CPU_THREAD_BUSY_MIN_S = 0.002
# Nodes of the gap probe: a graph of tiny kernels whose window over CUPTI's busy time gives the
# gap between a graph's nodes, which the CUPTI timer does not count.
GAP_NODES = 200
# The longest a run waits, before its first timed sample, for runs of the same fork server still
# exiting (their pidfds, _previous_runs_gone).
EXIT_WAIT_S = 10.0
# Gap samples, whose median the parent takes: one window of it varied by ~0.5 ms on an H200.
GAP_SAMPLES = 5


def _read_private_input():
    """Reads the one stdin line, then closes stdin so nothing else can read it."""
    data = b""
    while not data.endswith(b"\n") and len(data) < 65536:
        chunk = os.read(0, 4096)
        if not chunk:
            break
        data += chunk
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        return json.loads(data.decode("utf-8") or "{}")
    except ValueError:
        return {}


def _private_result_fd():
    """Moves the inherited result fd to a fresh non-inheritable number; None when absent."""
    text = os.environ.pop("HOTKERNEL_RESULT_FD", None)
    if not text:
        return None
    fd = int(text)
    private = os.dup(fd)  # os.dup makes a non-inheritable descriptor
    os.close(fd)
    return private


def _scrub_environment():
    # Nothing in the environment may tell the candidate its role, run index, warm-up or channel.
    for k in list(os.environ):
        if k.startswith("HOTKERNEL_") and k not in ("HOTKERNEL_CACHE_BYTES", "HOTKERNEL_SETS_BYTES"):
            del os.environ[k]


def _flag(flags, name, message):
    flags.append({"id": name, "message": message})


def cpu_checked_calls(calls):
    """How many of a CPU sample's `calls` held calls are checked: CPU_CHECKED_CALLS, at least
    CPU_CHECKED_SHARE of them, at most all. Pure."""
    import math
    return max(0, min(calls, max(CPU_CHECKED_CALLS, int(math.ceil(CPU_CHECKED_SHARE * calls - 1e-9)))))


class TrustedRun:
    """One trusted measurement: the prepared session plus everything the defences need.

    Timed calls never see values or references that exist before they run: every sample loads
    fresh values (drawn from os.urandom at that moment) into the timed input tensors, and the
    references for them are computed only after the sample, from copies kept by the harness,
    with the baseline/reference function taken before the candidate was imported.
    """

    def __init__(self, hk, torch, target, hidden_seed, release=None):
        self.release = release if release is not None else Release(None)  # None: no parent (tests, by hand)
        # The parent's marks around a CPU spot copy's pipeline (_copy_timed): its stamps, not this
        # process's clock, say what a timed sample's copies took.
        marks = self.release.marks()
        self._marks = ((marks[0],), (marks[1],)) if marks else ((), ())
        self.hk = hk
        self.torch = torch
        self.target = target
        # The operators preparing the inputs and references calls, and their kernels as torch's
        # dispatcher holds them now: a candidate that replaces one (torch.library on aten) would
        # make the harness's own references its code (_dispatch_intact).
        try:
            with _op_recorder(torch) as ops:
                self.session = hk.prepare(target, seed=hidden_seed)
        except (hk.TargetError, hk.StageError):
            raise
        except Exception:  # an operator that refuses Python dispatch modes: prepared as it always is
            ops = set()
            self.session = hk.prepare(target, seed=hidden_seed)
        self._dispatch_tables = _dispatch_tables(torch, ops)
        s = self.session
        self.prims = Primitives(torch)
        self.flags = []
        # Clones of the check inputs as given, to catch mutation.
        self.check_inputs_copy = [x.clone() for x in s.check_inputs]
        self.ref_digest = self._digest(s.check_ref)
        self._warm = hk.warm_up
        self._warmup_max_s = hk.WARMUP_MAX_S if s.is_cuda else hk.WARMUP_MAX_S_CPU
        self._replay_budget_s = hk.REPLAY_BUDGET_S if s.is_cuda else hk.CPU_REPLAY_BUDGET_S
        self._warmup_min_s, self._warmup_window_s = hk.WARMUP_MIN_S, hk.WARMUP_WINDOW_S
        self.l2 = L2Guard(s.is_cuda)
        self.l2.reset()
        self.host_ms = None
        self._tampered = None  # through the property: each finding also goes to the audit hook
        self.new_processes = None  # what the sandbox said when the samples began (CPU runs)
        self.filters = None  # the run's hotkernel_sandbox.FilterLedger: which seccomp filters are the harness's
        self._held_handlers = self._held_signals = ()  # the quiet's (_quiet)
        self.handler_signals = ()  # signals the candidate's Python handlers were on at a sample's end
        self.handlers_before = None  # ((signal, Python handler), ...) before the import (calibrate_release)
        self._hold_signal_fn = self._hold_signal
        self.phases = {}
        self._state_check_s = 0.0  # the checks after each sample's window (_done), for phases_s
        self.sample_clocks = []
        self.profile_check = False
        self.profiled = None
        self._profile_graph = None
        self.cpu_checked = None  # held calls a CPU sample checks (_picked_after_window)
        self._quiet_state = None  # (gc was enabled, the signal mask before) while quiet (_quiet)
        self._gc_held = False  # gc was enabled, and is kept off through a sample's window (_unquiet)
        self.spot_copies = None  # outputs copied as soon as their call returned, over the samples
        self._copy_steps = None  # while the empty samples run: their CPU copies' untimed steps, seconds each
        self.copy_steps_s = 0.0  # what a timed sample's CPU copy takes out for them (COPY_STEPS_COLD_FACTOR)
        self._harness = None  # the Harness snapshot, from measure(): its state is checked every sample
        # With workloads, the labels of this run's own objects in that snapshot: a sample compares
        # those (and the modules), not every workload's; all are compared after its last sample.
        self.watched_as = None
        self._gc_callbacks = list(self.prims.gc_callbacks)  # before the candidate exists
        self._process_time = time.process_time  # taken now: the CPU count of the candidate's threads reads it
        self._audit = sys.audit
        self._urandom = os.urandom  # taken now (before the candidate is imported): fresh values and the CPU's picks read it
        # The check function and its settings, taken now: patching the module later changes nothing.
        self._check_fn = hk.check
        self._quick_fn = hk.check_quick  # the many outputs of timed calls
        self._screen_fn, self._read_back, self._screen_read = hk.screen_queue, hk.read_back, hk.screen_read
        self._check_args = (target.dtype_name, s.expected, target.rtol, target.atol)
        self._as_outputs = hk.as_outputs
        self._equal = torch.equal
        self._calls_for = hk.calls_for
        self._start_spin_cycles = hk.START_SPIN_CYCLES
        self._per_call = hk.per_call_ms
        self._busy = hk.busy_time
        self.clock, self.clock_note = self._open_clock()
        # The prime's one-node graph (_prime_clock), and the buffer it writes, made before the import.
        self._prime = self._tiny_graph(1) if self.clock is not None else None
        self.timer_detail = {}
        self._poison()
        self._foreach_mul = torch._foreach_mul_
        self._mix_views = self._secret_views()
        self._record_harness_ops()

    def _record_checks(self):
        """The checks of a right and a wrong output, a snapshot and the digests: what
        _record_harness_ops runs under the operator recorder (twice)."""
        s, torch = self.session, self.torch
        refs = [r.detach().reshape(-1)[:RECORD_ELEMENTS].cpu() for r in (self._as_outputs(s.check_ref) or [])]
        right = [r.to(dtype) for r, (_, dtype) in zip(refs, s.expected)]
        wrong = [t.clone() for t in right]
        for t in wrong:
            if t.is_floating_point() and t.numel():
                t.view(-1)[:1].add_(1.0).mul_(3.0)
        one = (lambda ts: ts[0] if len(ts) == 1 else ts)
        snap = self.snapshot(one(right))
        self._content_digest(snap)
        self._digest(right)
        for out in (snap, one(wrong)):
            self.check(out, one(refs))
            self.check_quick(out, one(refs))
            # a GPU sample's batched screens and equalities (_screened_outputs)
            self._read_back((self._screen_fn(out, one(refs), *self._check_args) or [])
                            + (self._equal_queued(out, snap) or []))

    def _record_harness_ops(self):
        """Adds to the dispatch tables checked every sample (_dispatch_intact) the operators the
        harness's own steps dispatch: a fresh round and a set drawn again, the secret's mix, a
        snapshot and its digest, and the checks of a right and a wrong output. An operator only
        the checks use (the error's division, say) replaced through torch.library would
        otherwise make every check pass unseen. The checks run on CPU copies of each reference's
        first RECORD_ELEMENTS elements: the operators are the same at any size and device, a GPU
        loads no kernel a run would not (a wrong output's exact path is a dozen kernels, ~0.2 s
        of lazy loading on an H200), and a whole 16384x8192 output checked on the CPU took ~6 s."""
        s, torch = self.session, self.torch
        ops = set()
        try:
            with _op_recorder(torch) as ops:
                with self.hk._NoGrad():
                    # Two sets, not the round's k: each operator goes through Python dispatch
                    # here (~30 us each), and every set after the first dispatches the same ones.
                    sets, seeds = self.fresh_round(upto=2)
                    self._drawn_again(seeds, len(seeds) - 1, {})
                    self.inputs_intact(sets)
                    # The secret's views (an element of each input: select) and a CPU spot copy's
                    # tensor made from its bytes after the window (as_strided): unrecorded, a
                    # kernel registered on either ran the candidate's code after the window,
                    # which filled the held outputs before their checks (a red team's).
                    self._secret_views()
                    self._spot_tensor((bytes(64), torch.float32, (4, 4), (4, 1)))
                    for views in self._mix_views:
                        if views:
                            self._foreach_mul(views, 1.0)
                    self._record_checks()
                    if s.is_cuda:
                        self.fresh_values()
                # Again with autograd's keys out of the way: an operator that is a composition of
                # others (aten::to.dtype, which .double() and .float() dispatch) is taken apart at
                # those keys, before the recorder sees it, so its table was never compared. A
                # kernel registered on it (torch.library) changed what the check's fp64 copies
                # held, and relu passed as gelu, a clean 2.8x (cheats/composite_op_override.py).
                with torch.inference_mode():
                    self._drawn_again(seeds, len(seeds) - 1, {})
                    self._record_checks()
        except Exception:
            pass  # what was recorded before an operator refused the mode is kept
        new = set(ops) - set(self._dispatch_tables)
        self._dispatch_tables.update(_dispatch_tables(torch, new))

    # ---- helpers ----------------------------------------------------------------------------

    def _open_clock(self):
        """The CUPTI clock, loaded and holding CUPTI's callbacks before the candidate is imported:
        (clock, None), or (None, why not)."""
        if not self.session.is_cuda or self.target.timer not in ("auto", "cupti"):
            return None, None
        try:
            clock = self.hk.KernelClock.get()
        except self.hk.ClockError as e:
            return None, str(e)
        # Bound now: a candidate that later sets clock.start or clock.stop on the instance changes nothing.
        self._clock_start, self._clock_stop, self._clock_mark = clock.start, clock.stop, clock.mark
        return clock, None

    def _digest(self, tensors):
        """Each tensor's sum, and their count: what the harness compares its own tensors by from
        one moment to a later one, read back at once. A tensor of whole 64-bit words is summed as
        its words (int64, wrapping: a change of any one bit changes it, and it reads each byte once
        at the memory's speed; changes that cancel in the sum do not, as in any sum); any other
        as float64, without a float64 copy of it (a copy of every output of a big target was ~5
        ms a digest on an H200)."""
        torch = self.torch
        sums = [self._words_sum(p) if p.numel() else None for p in tensors]
        read = {}  # one read back a device and kind of sum
        for key in {(x.device, x.dtype) for x in sums if x is not None}:
            group = [x for x in sums if x is not None and (x.device, x.dtype) == key]
            read[key] = iter(torch.stack(group).tolist())
        return [next(read[(x.device, x.dtype)]) if x is not None else 0 for x in sums] + [len(tensors)]

    def _words_sum(self, t):
        torch = self.torch
        if t.is_contiguous() and (t.numel() * t.element_size()) % 8 == 0:
            try:
                return t.reshape(-1).view(torch.uint8).view(torch.int64).sum()
            except RuntimeError:  # a storage offset that is not a whole word
                pass
        if t.is_complex():  # both parts (a conjugate view's as it reads)
            return torch.view_as_real(t.resolve_conj()).sum(dtype=torch.float64)
        return t.sum(dtype=torch.float64)

    def _poison(self):
        """NaN-fill freed memory the candidate's outputs could come from (uninitialised outputs)."""
        torch = self.torch
        s = self.session
        if s.is_cuda:
            torch.cuda.empty_cache()
        keep = []
        for shape, dtype in s.expected:
            for _ in range(8):
                t = torch.empty(shape, dtype=dtype, device=s.device)
                if t.is_floating_point():
                    t.fill_(float("nan"))
                else:
                    t.fill_(-1)
                keep.append(t)
        if s.is_cuda:
            total = sum(t.numel() * t.element_size() for t in keep)
            big = torch.empty(max(total, 1 << 22), dtype=torch.uint8, device=s.device)
            big.fill_(0xFF)  # 0xFFFF.. is NaN for every float dtype
            keep.append(big)
        self._sync()
        del keep

    def _sync(self):
        if self.session.is_cuda:
            self.prims.dev_sync()

    def _note_foreign_filters(self):
        """A seccomp filter the sandbox and the harness did not install voids the run (FilterLedger)."""
        foreign = self.filters.foreign() if self.filters is not None else None
        if foreign:
            self.tampered = foreign

    @property
    def tampered(self):
        """What the candidate was seen changing that voids the run (None: nothing)."""
        return self._tampered

    @tampered.setter
    def tampered(self, why):
        """A finding is also handed to the harness's audit hook, which keeps it where no attribute
        write reaches it: the candidate can reach this object through f_back and set the
        attribute back to None (cheats/tamper_reset.py), not the hook's closure."""
        if why and not self._tampered:
            self._audit("hotkernel.tampered", str(why))
        self._tampered = why

    def _unpredictable_generator(self):
        """A generator seeded from os.urandom now: nothing the candidate saw earlier predicts it.
        os.urandom as taken before the candidate was imported: a candidate that replaces it (which
        the patch check reports) still cannot choose the values."""
        return self.hk.seeded_generator(self.session.device, int.from_bytes(self._urandom(6), "little"))

    def fresh_round(self, upto=None):
        """Loads fresh values into the timed input tensors (same storage, new contents) and
        returns (the harness's copies of them, their seeds): each set drawn from a generator of
        its own, seeded from os.urandom. References are computed from a set drawn again from its
        seed (_drawn_again), not from the copies: the calls can reach the copies through the
        harness's frames and write into them, not change what a seed draws. upto: the first
        `upto` sets only (the operator recorder's round: set 0 draws the shared inputs, every
        later set takes them, so two sets dispatch every operator a whole round does)."""
        s = self.session
        seeds = tuple(int.from_bytes(self._urandom(6), "little") for _ in range(s.k if upto is None else min(upto, s.k)))
        sets, shared = [], None
        for seed in seeds:
            one, shared = self._draw_one(seed, shared)
            sets.append(one)
        with self.hk._NoGrad():
            for dst, src in zip(s.timed_sets, sets):
                for d, x in zip(dst, src):
                    d.copy_(x)
        self._sync()
        return tuple(sets), seeds

    def _draw_one(self, seed, shared=None):
        """(one set drawn from its seed, the inputs every set shares): set 0 draws those, later
        sets take them (`shared`)."""
        s = self.session
        sets, shared = self.hk.draw_sets(self.target, self.hk.seeded_generator(s.device, seed), s.device, 1,
                                         s.derive_fn, shared)
        return sets[0], shared

    def _drawn_again(self, seeds, si, cache, mixed=None):
        """Set si of a fresh_round, drawn again from its seed (with the inputs every set shares,
        drawn with set 0: kept in cache, a dict, for the round's later sets), and mixed as the
        release mixed it (mixed: _release's answer)."""
        one = None
        if "shared" not in cache:
            first, cache["shared"] = self._draw_one(seeds[0])
            one = first if si == 0 else None
        if one is None:
            one, _ = self._draw_one(seeds[si], cache["shared"])
        if mixed is not None and si in mixed[0]:
            views = self._secret_views([one])
            if views:
                self._foreach_mul(views[0], mixed[1])
        return one

    def fresh_values(self):
        """Fresh values for a timed replay, whose outputs are not checked (no copies needed): the
        rotated float inputs are redrawn in place, one write each (a full fresh_round draws in
        fp32, casts and copies: ~4 ms of GPU work right before the replay for 1.6 GB of inputs).
        Derived or integer inputs get the full fresh_round."""
        s, t = self.session, self.target
        names = list(t.call_names)
        # The rotated inputs; every input when none rotates (one set, its values still change).
        idx = [i for i, n in enumerate(names) if n in t.rotate] or list(range(len(names)))
        if t.derive or not all(s.timed_sets[0][i].is_floating_point() for i in idx):
            self.fresh_round()
            return
        gen = self._unpredictable_generator()
        with self.hk._NoGrad():
            for one in s.timed_sets:
                for i in idx:
                    one[i].normal_(generator=gen)
        self._sync()

    def refs_for(self, src_set):
        s = self.session
        return self.hk.reference_outputs(self.target, src_set, s.baseline_fn, s.reference_fn)

    def inputs_intact(self, sets):
        """Whether the timed inputs still equal the harness's copies of them (a kernel must not
        write its inputs). On a GPU every comparison is queued and read back at once (a rotated
        target has a set a call: one synchronisation, not one an input)."""
        if not self.session.is_cuda:
            for dst, src in zip(self.session.timed_sets, sets):
                for d, x in zip(dst, src):
                    if not self._same_words(d, x):
                        return False
            return True
        queued = []
        for dst, src in zip(self.session.timed_sets, sets):
            for d, x in zip(dst, src):
                got = self._equal_queued(d, x)
                if got is None:
                    return False
                queued += got
        return all(v == 1.0 for v in self._read_back(queued))

    def _same_words(self, a, b):
        """Whether two CPU tensors hold the same bits: compared as 64-bit words where both are
        contiguous of one dtype, shape and a whole number of words (6x faster than torch.equal on
        bf16: 0.5 against 3 ms for 4 MiB), else torch.equal. Stricter than torch.equal only where
        a kernel wrote its input (a -0.0 for a 0.0 differs here)."""
        torch = self.torch
        if (type(a) is torch.Tensor and type(b) is torch.Tensor and a.dtype == b.dtype and a.shape == b.shape
                and a.is_contiguous() and b.is_contiguous() and a.numel() > 0
                and (a.numel() * a.element_size()) % 8 == 0):
            try:
                wa = a.reshape(-1).view(torch.uint8).view(torch.int64)
                wb = b.reshape(-1).view(torch.uint8).view(torch.int64)
            except RuntimeError:  # a storage offset that is not a whole word
                return torch.equal(a, b)
            return torch.equal(wa, wb)
        return torch.equal(a, b)

    def check(self, out, ref):
        return self._check_fn(out, ref, *self._check_args)

    def check_quick(self, out, ref):
        return self._quick_fn(out, ref, *self._check_args)

    def snapshot(self, out):
        """A copy of an output taken at once (in stream order on a GPU), for checking later."""
        outs = self._as_outputs(out)
        if outs is None or any(type(o) is not self.torch.Tensor or self.hk._shadowed(o) for o in outs):
            return out  # the check rejects it as it is (its own clone is the candidate's code)
        return [o.clone() for o in outs] if len(outs) > 1 else outs[0].clone()

    def _thread_cpu_s(self, threads):
        """CPU seconds used so far by the Python threads the candidate started (by native id):
        those threading lists, and those started through _thread directly (ThreadWatch): a GPU
        run's count (_candidate_cpu)."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        tids = set(threads.native_ids)
        for th in threads.threading.enumerate():
            if th.ident not in threads.before and getattr(th, "native_id", None) is not None:
                tids.add(th.native_id)
        for tid in tids:
            try:
                with open("/proc/self/task/%d/stat" % tid, "rb") as f:  # bytes: a thread's name need not be UTF-8
                    fields = f.read().rsplit(b")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / float(tick)
            except (OSError, IndexError, ValueError):
                continue
        return total

    def _candidate_cpu(self, threads):
        """From now on, a function that gives (the CPU seconds the candidate's threads and
        processes used since, the pids of the run's processes that ended meanwhile). On a GPU: the
        Python threads it started (_thread_cpu_s). On the CPU: the process's CPU (which keeps what
        exited threads used, so a thread the candidate ends cannot take its CPU out of the sum)
        less what the threads the process had right before the import used (the harness's,
        torch's pools), in ns, plus what every other process of the run's group used. The process
        is read last at the start and first at the end: the reads' own time leans towards less."""
        if self.session.is_cuda:
            start = self._thread_cpu_s(threads)
            return lambda: (self._thread_cpu_s(threads) - start, [])

        def own_threads():
            return {t: ns / 1e9 for t, ns in ((t, _thread_cpu_ns(t)) for t in threads.tasks_before) if ns is not None}

        me, group = os.getpid(), os.getpgrp()
        g0 = _group_cpu(group, me)
        t0 = own_threads()
        p0 = self._process_time()

        def used():
            p1 = self._process_time()
            t1 = own_threads()
            g1 = _group_cpu(group, me)
            own = sum(max(0.0, t1[t] - t0[t]) for t in t0 if t in t1)
            # The run's other processes (a helper forked at import: the sandbox keeps every one in
            # the run's group, and none is made from the samples on), by both of their counts.
            others = sum(max(g1[q][0] - g0[q][0], g1[q][1] - g0[q][1]) for q in g0 if q in g1)
            others += sum(max(g1[q]) for q in g1 if q not in g0)
            return max(0.0, (p1 - p0) - own) + max(0.0, others), sorted(q for q in g0 if q not in g1)
        return used

    # ---- the parent's clock -----------------------------------------------------------------

    def _secret_views(self, sets=None):
        """Per set, one element of each rotated floating-point input (every input when none
        rotates), as 0-dim views: where a release's secret goes. Derived inputs get none (their
        values are a function of others)."""
        s, t = self.session, self.target
        sets = s.timed_sets if sets is None else sets
        if t.derive:
            return []
        names = list(t.call_names)
        idx = [i for i, n in enumerate(names) if n in t.rotate] or list(range(len(names)))
        per_set, seen = [], set()
        for one in sets:
            views = []
            for i in idx:
                x = one[i]
                if id(x) in seen or not x.is_floating_point() or x.numel() == 0:
                    continue
                seen.add(id(x))
                views.append(x[(0,) * x.dim()])
            per_set.append(views)
        return per_set if any(per_set) else []

    def _picked(self, *groups, warm=True):
        """The views of MIX_SETS sets (all of them when there are fewer), picked by the harness's
        own generator before the release, one flat list per group (the timed inputs; the
        harness's copies of them, the same sets). warm: each list is multiplied by 1.0 at once, so
        the mix inside the window runs on warm code and cache lines, as in the empty samples; off
        where a CUPTI prime follows, which does the same (_prime_clock). Returns (the lists, the
        indices of the sets picked)."""
        if not groups or not groups[0]:
            return [], frozenset()
        k = len(groups[0])
        picked = self._draw(range(k), MIX_SETS)
        flat = [[v for j in picked for v in per_set[j]] for per_set in groups]
        for views in flat if warm else ():
            if views:
                self._foreach_mul(views, 1.0)
        return flat, frozenset(picked)

    def _mix(self, secret, flat):
        """Scales the picked views by a factor drawn from the release's secret, one multi-tensor
        op per list: the sample's inputs then depend on a value that did not exist before the
        release, so an output computed earlier is wrong where it is checked. A factor in
        [0.75, 1.25) keeps values in their range."""
        factor = 0.75 + (secret % 65536) / 131072.0
        for views in flat:
            if views:
                self._foreach_mul(views, factor)
        return factor

    def _quiet(self):
        """From a sample's end until its next window is open: no garbage collection and no signal,
        so nothing the candidate set up (a gc callback, a finalizer in a cycle, a timer's handler)
        runs in this thread after the window to finish the sample's work before it is checked, or
        before the next release on its fresh values. Signals are blocked in this thread, and a
        Python handler, which runs here whichever thread took its signal, is held: the signal is
        raised again once the next window is open (_unquiet), where the parent sees its time.
        Its other threads are the thread watch's."""
        p = self.prims
        if self._quiet_state is not None:
            return
        was = p.gc_isenabled() or self._gc_held
        p.gc_disable()
        held = []
        for sig in p.handled:
            h = p.getsignal(sig)
            if callable(h) and h is not p.default_int_handler and h is not self._hold_signal_fn:
                p.setsignal(sig, self._hold_signal_fn)
                held.append((sig, h))
        self._held_handlers = tuple(held)
        before = self.handlers_before
        new = [sig for sig, h in held if before is not None and not any(s == sig and g is h for s, g in before)]
        if new:  # the candidate's (none but these was there before its import): flagged (signal_handler)
            self.handler_signals = tuple(sorted(set(self.handler_signals) | set(new)))
        mask = _block_all_signals(p)
        # A tuple, not the set sigmask returns: ending the quiet drops it after the fresh values
        # are written, and a set can carry a weakref callback (_collect_young).
        self._quiet_state = (was, tuple(mask) if mask is not None else None)

    def _hold_signal(self, sig, frame):
        """A signal whose Python handler is the candidate's, taken during the quiet: raised again
        when the quiet ends."""
        self._held_signals = self._held_signals + (sig,)

    def _dispatch_intact(self):
        """Sets `tampered` when what the harness checks with was changed during the sample
        (_dispatch_finding)."""
        if self.tampered:
            return
        self._inputs_unmarked()
        if self.tampered:
            return
        why = self._dispatch_finding(self.watched_as)
        if why:
            self.tampered = why

    def _dispatch_finding(self, instances=None):
        """Why what the harness checks with is not as it was (None: it is): its settings, its
        run's and session's state, the torch functions its checks call (the Harness snapshot's
        state, checked at every sample so a change undone before the end is seen), a kernel of an
        operator the references or checks use (replaced in torch's dispatcher), or a torch
        function or dispatch mode still active outside the calls. Sets nothing: the empty samples
        run it too (_after_window)."""
        why = self._state_finding(instances)
        if why:
            return why
        p = self.prims
        hooks = [what for what, fn, was in (("profile", p.getprofile, p.profile0), ("trace", p.gettrace, p.trace0))
                 if fn() is not was]
        if hooks:
            # The audit hook sees one set; this sees one its events were kept from (its rules emptied).
            return ("a %s hook is set in the harness's thread after the sample: it runs the candidate's code at every "
                    "call and return of the harness's checks" % " and a ".join(hooks))
        changed = [op for op, table in self._dispatch_tables.items() if _dump_table(self.torch, op) != table]
        if changed:
            return ("the candidate replaced the kernel of %s in torch's dispatcher, which the harness's references and "
                    "checks use" % ", ".join(sorted(changed)[:4]))
        modes = _active_modes(self.prims)
        if modes:
            return "the candidate left %s active after its calls: the harness's checks would run through its code" % modes
        return None

    def _state_intact(self, instances=None):
        """Sets `tampered` when the harness's state differs from its snapshot (_state_finding)."""
        why = self._state_finding(instances)
        if why and not self.tampered:
            self.tampered = why

    def _state_finding(self, instances=None):
        """Why the harness's state differs from its snapshot (Harness.state_changes), or None:
        every part of it, or only the objects in `instances` besides its modules and functions."""
        changed = self._harness.state_changes(instances) if self._harness is not None else []
        if changed:
            return ("the candidate changed the harness's own state while its calls ran (%s): its checks are the "
                    "harness's" % ", ".join(changed[:6]))
        return None

    def _unquiet(self, window=False, collect=True):
        """Ends the quiet. window: a sample's window opens next, and the garbage collector stays
        off through it (as timeit keeps it off): a collection inside it is time the parent sees
        and no call reports, and its pauses grow with what torch holds. The young generations
        are collected outside the window instead: here (collect), or, for a timed sample, before
        its fresh values (_collect_young); gc is enabled again when the samples end."""
        p = self.prims
        if self._quiet_state is None:
            return
        was, mask = self._quiet_state
        self._quiet_state = None
        if mask is not None:
            p.sigmask(SIG_SETMASK, mask)
        held, self._held_handlers = self._held_handlers, ()
        for sig, h in held:
            p.setsignal(sig, h)
        pending, self._held_signals = self._held_signals, ()
        for sig in pending:
            p.raise_signal(sig)
        if was and window:
            if collect:
                p.gc_collect(1)
            self._gc_held = True
        elif was:
            self._gc_held = False
            p.gc_enable()
        if list(p.gc_callbacks) != self._gc_callbacks:
            self.tampered = self.tampered or ("the candidate added a garbage collector callback (gc.callbacks), which "
                                              "runs its code between a sample's calls and their checks")

    def _samples_over(self):
        """After the last sample (however it ended): no longer quiet, and gc on again if it was."""
        self._unquiet()
        if self._gc_held:
            self._gc_held = False
            self.prims.gc_enable()

    def _collect_young(self):
        """Before a timed sample's fresh values: the young generations collected (when gc is in
        use), and with them every finalizer and weakref callback of the garbage. From the fresh
        values to the release the harness drops nothing that existed before them, and collects
        nothing: a finalizer or weakref callback of the candidate's (on an object of the
        harness's it reached through a frame, on a tensor, in a reference cycle) runs in the
        harness's own thread, outside every call and the thread CPU count, and before the
        release it could compute the sample's outputs from its fresh values; here it sees the
        last sample's (cheats/weakref_prefetch.py, cheats/finalizer_prefetch.py)."""
        p = self.prims
        was = self._quiet_state[0] if self._quiet_state is not None else (p.gc_isenabled() or self._gc_held)
        if was:
            p.gc_collect(1)
        self._inputs_unmarked()  # the fresh values are written through the inputs' own methods

    def _inputs_unmarked(self):
        """Sets `tampered` when a timed input, or a reference, carries attributes of its own that
        stand in for torch.Tensor's: the harness calls their methods (copy_, normal_, detach), which
        would then run the candidate's code in its thread, on the fresh values before the release
        or in a check (cheats/instance_copy_hook.py)."""
        if self.tampered:
            return
        s = self.session
        plain = self.torch.Tensor
        for t in [x for one in s.timed_sets for x in one] + list(self._as_outputs(s.check_ref) or []):
            if type(t) is not plain:
                # Its class swapped (`__class__` assigned, by a finalizer the harness's own young
                # collection ran): the subclass's copy_ or normal_ would run the candidate's code on
                # the fresh values before the release, and put the class back (cheats/class_swap_by_gc.py).
                self.tampered = ("the candidate changed the class of the harness's own tensors (now %s): the "
                                 "harness's calls of their methods would run its code" % type(t).__name__[:60])
                return
            shadow = self.hk._shadowed(t)
            if shadow:
                self.tampered = ("the candidate set attributes on the harness's own tensors (%s) that stand in for "
                                 "torch.Tensor's methods: the harness's calls of them would run its code"
                                 % ", ".join(shadow[:4]))
                return

    def _connection_intact(self):
        """Sets `tampered` when the parent's clock's descriptor is no longer its socket: a relay
        put over it could end the parent's window early or say the copies took the missing time."""
        why = self.release.replaced()
        if why and not self.tampered:
            self.tampered = ("the candidate replaced the harness's connection to the parent's clock (%s): every "
                             "message of the samples could be its own" % why)

    def _release(self, calls, *groups, clock=False):
        """Starts a timed sample: the parent's release, whose secret is mixed into each group of
        views (the timed inputs, and the harness's copies of them). Returns (the sets mixed, the
        factor, CUPTI's marks): the first two are what a set drawn again needs to be the set the
        calls saw (_drawn_again). clock: CUPTI times the sample, primed before the release and
        marked again once the mix is done (_prime_clock, _mixed_mark; the marks are None without
        it). The marks are locals of the caller's, not state a candidate could move between the
        release and the records' reading."""
        self._quiet()  # (already quiet after a sample: the first sample's window is gc-free too)
        flat, picked = self._picked(*groups, warm=not clock)
        primed = self._prime_clock(flat) if clock else None
        self._connection_intact()
        try:
            secret = self.release.ready("timed", calls)
        except (ParentClockError, OSError) as e:
            raise self.hk.StageError("timer", "the parent's clock: %s" % e)
        # The quiet ends inside the window (the empty samples' do too): a signal held since the
        # last sample runs its handler where the parent sees the time, not on the fresh values
        # before the release. The young generations were collected before those (_collect_young).
        self._unquiet(window=True, collect=False)
        factor = self._mix(secret, flat)
        return picked, factor, ((primed, self._mixed_mark()) if clock else None)

    def _prime_clock(self, flat):
        """CUPTI's activity on, and primed, before a release: the first launch after it is enabled
        (or flushed) takes ~0.65 ms of host time, the next 0.02-0.04 ms (bench/probes/cupti_launch_probe.py),
        time no record holds. Inside the window that launch was most of a sample's fixed cost, and a
        graph of many nodes paid ~0.4 ms more of it than the empty samples' one node, which the bound
        had to allow: a report 30% short of a 0.7 ms sample got through. The prime replays the
        harness's one-node graph and multiplies the views the release will mix by 1.0 (the mix's
        launches, warm); returns CUPTI's time after them (_sample_records)."""
        p = self.prims
        self._clock_start()
        p.replay(self._prime[0])
        for views in flat:
            if views:
                self._foreach_mul(views, 1.0)
        p.dev_sync()
        return self._clock_mark()

    def _mixed_mark(self):
        """CUPTI's time once the release's mix has run on the device, before the calls launch
        (inside the window, in the empty samples too): what started before it is not the sample's."""
        self.prims.dev_sync()
        return self._clock_mark()

    def _sample_records(self, recs, marks):
        """A primed sample's own records: those that started after the mix was done (marks: the
        prime's and the mix's, _release). Told apart by time, not by count: a kernel of the
        candidate's launched around the prime (from a native thread, or a CUPTI callback of its
        own) is dropped with the prime's, and takes none of the sample's with it. None when no
        record of the prime came back: CUPTI's activity was taken or disabled before the release."""
        primed, mixed = marks
        if not any(r[0] < primed for r in recs):
            return None
        return [r for r in recs if r[0] >= mixed]

    def _done(self, copies=0, copy_s=0.0, marked=None):
        """Ends a timed sample: its answer's arrival stops the parent's clock. Quiet first
        (_quiet), inside the window, where the empty samples are quiet too. Says how many
        outputs were copied as they returned, and in how long (the parent takes that out)."""
        self._quiet()
        try:
            self.release.done(copies, copy_s, marked)
        except OSError as e:
            raise self.hk.StageError("timer", "the parent's clock: %s" % e)
        self._after_window()

    def _after_window(self, judged=True):
        """The checks after a sample's window. The empty samples run the same work, unjudged:
        nothing of the candidate's exists yet, and the snapshot it would be compared with is
        settled only after them. Their work (the state's comparison, torch's dispatch tables)
        leaves the harness's code and data as cold as a timed sample finds them when the next
        window opens; without it the fixed cost was a warm one, and on the 2-core CI machine an
        honest run of the adversarial suite's 48-call samples used up to 93-124% of its allowance
        where it now uses at most 75% (bench/runs/2026-12-05-cpu-cold-fixed-cost)."""
        if not judged:
            self._dispatch_finding(self.watched_as)  # the objects a timed sample of this run compares
            return
        self._connection_intact()
        c0 = self.prims.perf()
        self._dispatch_intact()
        self._state_check_s += self.prims.perf() - c0

    def calibrate_release(self, harness=None):
        """Before the candidate is imported, the parent times empty samples: every step of a timed
        sample but the calls. On the eager paths they run the sample's own loop over an empty
        call, EMPTY_SAMPLES with no call (the fixed cost) and EMPTY_SAMPLES with EMPTY_CALLS (the
        loop's cost a call); on the graph path a replay of a one-node graph, and, for the CUPTI
        timer, a graph of GAP_NODES tiny kernels (the gaps between nodes CUPTI does not count).
        Each is followed by the checks a timed sample is (_after_window): `harness`, the run's
        Harness."""
        self._harness = harness
        self._copy_steps = []
        try:
            self._empty_samples()
        finally:
            self._samples_over()
            steps, self._copy_steps = sorted(self._copy_steps), None
            self.copy_steps_s = COPY_STEPS_COLD_FACTOR * steps[len(steps) // 2] if steps else 0.0
            p = self.prims
            self.handlers_before = tuple((sig, h) for sig, h in ((sig, p.getsignal(sig)) for sig in p.handled)
                                         if callable(h))
        if steps and self.release.active:  # the CPU's copies' steps: the parent adds them to its stamps
            self.release.note("copy_steps_ms", self.copy_steps_s * 1e3)

    def _empty_samples(self):
        rel, s, p = self.release, self.session, self.prims
        if not rel.active:
            return
        self._quiet()  # every window gc-free, the first too; each ends the quiet inside it, as a timed sample does
        views = self._mix_views
        graph_path = s.is_cuda and self.target.timer in ("auto", "cupti", "cuda_graph")
        cupti = graph_path and self.clock is not None and self.target.timer != "cuda_graph"
        if not graph_path:
            out = [self.torch.empty(shape, dtype=dtype, device=s.device) for shape, dtype in s.expected]
            out = out[0] if len(out) == 1 else out
            empty = lambda *a: out  # noqa: E731
            for n in (0, EMPTY_CALLS):
                order = (0,) * n
                spot_odds = self._spot_odds(n)
                for _ in range(EMPTY_SAMPLES):
                    self._collect_young()
                    flat, _ = self._picked(views, views)  # a timed sample mixes the harness's copies too
                    secret = rel.ready("empty", n)
                    self._unquiet(window=True, collect=False)
                    self._mix(secret, flat)
                    if s.is_cuda:
                        p.dev_sync()
                    _, _, _, _, snaps, spot_s, _, marked = self._eager_sample(empty, order, s.timed_sets, spot_odds,
                                                                               (), s.is_cuda)
                    if s.is_cuda:
                        p.dev_sync()
                    self._quiet()
                    rel.done(len(snaps), spot_s, marked)
                    del snaps
                    self._after_window(judged=False)
            return
        one, tiny = self._tiny_graph(1)
        for _ in range(EMPTY_SAMPLES):
            self._collect_young()
            flat, _ = self._picked(views, warm=not cupti)
            if cupti:
                self._prime_clock(flat)
            secret = rel.ready("empty", 0)
            self._unquiet(window=True, collect=False)
            self._mix(secret, flat)
            if cupti:
                self._mixed_mark()
                p.replay(one)
                p.dev_sync()
                self._quiet()
                rel.done()
                self._after_window(judged=False)
                self._clock_stop()
            else:
                a, b = self._timed_replay(one)
                p.ev_sync(b)
                self._quiet()
                rel.done()
                self._after_window(judged=False)
        if cupti:
            gap, gap_buf = self._tiny_graph(GAP_NODES)
            p.replay(gap)
            p.dev_sync()
            for _ in range(GAP_SAMPLES):
                self._collect_young()
                flat, _ = self._picked(views, warm=False)
                primed = self._prime_clock(flat)
                secret = rel.ready("gap", GAP_NODES)
                self._unquiet(window=True, collect=False)
                self._mix(secret, flat)
                marks = (primed, self._mixed_mark())
                p.replay(gap)
                p.dev_sync()
                self._quiet()
                rel.done()
                recs = self._sample_records(self._clock_stop(), marks)
                if recs:
                    rel.note("gap_busy_ms", self._busy(sorted(recs)) / 1e6)
            del gap, gap_buf
        del one, tiny

    # ---- the measurement --------------------------------------------------------------------

    def measure(self, fn, role, harness, threads, watch_print=None):
        hk, torch, s, t = self.hk, self.torch, self.session, self.target
        self._harness = harness
        res = s.result_base(role)
        res["checked"] = []
        # A tuple, rebuilt on each failure: a list here could be emptied in place by the
        # candidate's code (a finalizer) that reached this frame's locals (all_zeros_erase_failures.py).
        failures = ()
        t_measure = self.prims.perf()
        try:
            with self.hk._NoGrad():
                # 1. the check call on the hidden-seed check set
                try:
                    out = fn(*s.check_inputs)
                    self._sync()
                except BaseException as e:
                    raise hk.StageError("call", "%s raised %s: %s" % (getattr(fn, "__name__", "kernel"), type(e).__name__, e))
                # Compared before the check: the call could set the check's settings, to undo them
                # in its next call, before any sample's comparison (as a sample's checks, _done).
                self._state_intact(self.watched_as)
                first = self.check(out, s.check_ref)
                del out
                res["error"] = hk.error_fields(first)
                res["checked"].append("check_set")
                if not first["ok"]:
                    failures += ("check call: " + first["reason"],)
                if not all(torch.equal(a, b) for a, b in zip(s.check_inputs, self.check_inputs_copy)):
                    failures += ("the function changed its inputs (check call); a kernel must not write to them",)
                self.phases["check"] = self.prims.perf() - t_measure
                # 2. warm-up on fresh values (indistinguishable from timed calls)
                self.fresh_round()
                try:
                    res["warmup_s"] = round(self._warm_up(fn, t.warmup_s), 3)
                    res["calls_per_sample"] = s.calls  # cut for long calls, grown for short GPU ones (hk.calls_for)
                    if s.grow_note:
                        res["sample_note"] = s.grow_note
                    res["rotate_k"] = s.k
                except BaseException as e:
                    raise hk.StageError("call", "during warm-up %s raised %s: %s"
                                        % (getattr(fn, "__name__", "kernel"), type(e).__name__, e))
                self._state_intact(self.watched_as)  # as after the check call: before anything checks again
                self.phases["warmup"] = self.prims.perf() - t_measure - self.phases["check"]
                # 3. timed samples, each on fresh values and checked call by call
                if not s.is_cuda:  # the CPU count reads the run's processes: none is made from here on
                    # Installed for each workload (a second filter stacks on the first): a memo the
                    # candidate could fill in beforehand once said it was installed when it was not.
                    self._note_foreign_filters()
                    self.new_processes = hotkernel_sandbox.deny_new_processes()
                    if self.new_processes == hotkernel_sandbox.NEW_PROCESSES_DENIED and self.filters is not None:
                        self.filters.own_added()
                    elif self.new_processes == hotkernel_sandbox.NOT_IN_FORCE:
                        self.tampered = self.new_processes
                candidate_cpu = self._candidate_cpu(threads)
                wall0 = self.prims.perf()
                starts0 = threads.starts()
                self._state_check_s = 0.0
                try:
                    samples, timer, note, timed_fail = self._time(fn)
                except (hk.StageError, KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as e:
                    if not _raised_in(e, getattr(getattr(fn, "__code__", None), "co_filename", None)):
                        raise  # the harness's own failure: an internal error, with its traceback
                    raise hk.StageError("call", "during timed calls %s raised %s: %s"
                                        % (getattr(fn, "__name__", "kernel"), type(e).__name__, e))
                finally:
                    started = threads.starts() - starts0
                    self._samples_over()
                busy, group_gone = candidate_cpu()
                if self.watched_as is not None:
                    # A sample compares only this workload's objects; after its last one, every
                    # workload's: the candidate's calls here could have changed a later workload's
                    # settings (for its check call, to be undone in its warm-up).
                    self._state_intact()
                wall = self.prims.perf() - wall0
                self.phases["timing_and_checks"] = wall
                self.phases.setdefault("state_checks", self._state_check_s)  # the graph path's is a part of its samples
                if self._profile_graph is not None:
                    # After the thread watch: the profiler starts threads of its own.
                    p0 = self.prims.perf()
                    try:
                        self.profiled = self._profile_replays(*self._profile_graph)
                    except BaseException as e:  # a cross-check, never a reason to fail a run
                        self.profiled = {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}
                    self._profile_graph = None
                    self.phases["profile_check"] = self.prims.perf() - p0
                if not samples and self.tampered:
                    # The candidate kept the clock from timing anything: a verdict on it, not a run error.
                    res.update(status="invalid", ok=False, ms=0.0, timer=timer, reason=self.tampered, flags=self.flags)
                    return res
                if not samples:
                    raise hk.StageError("timer", "no sample was timed")
                ordered = sorted(samples)
                mid = len(ordered) // 2
                res["samples_ms"] = [round(x, 6) for x in samples]
                res["ms"] = ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
                res["timer"] = timer
                if note:
                    res["timer_note"] = note
                detail = _plain(self.timer_detail)
                if type(detail) is dict:
                    res.update({k: detail[k] for k in TIMER_DETAIL_KEYS if k in detail})
                clocks = _plain(self.sample_clocks)
                if type(clocks) is list and any(c is not None for c in clocks):
                    res["sample_sm_clock_mhz"] = clocks[:len(samples)]
                failures += timed_fail  # a tuple, as every timer returns it
        except hk.StageError as e:
            res["status"] = "error"
            res["reason"] = "%s: %s" % (e.stage, e)
            return res

        # 4. the harness itself: patches, threads, references, persisting L2
        t_after = self.prims.perf()
        invalid = []
        critical, other = harness.changes()
        if critical:
            invalid.append("the candidate replaced harness or reference functions (%s); timing and checks are the "
                           "harness's" % ", ".join(sorted(critical)[:8]))
        if other:
            # Reported, not flagged: the harness holds its own references to what it uses, and a
            # library (torch.compile, Triton) may legitimately swap a torch function.
            res["patched_library"] = sorted(other)[:20]
        if not threads.intact():
            invalid.append("the candidate replaced the thread-start functions the harness watches")
        elif watch_print is not None and threads.fingerprint() != watch_print:
            invalid.append("the candidate changed the harness's thread watch (a thread-start wrapper's code or what "
                           "its closure holds, or the threads taken before the import): its threads' count and CPU "
                           "are the harness's")
        if started:
            invalid.append("the candidate started %d thread(s) or process(es) during timed calls: work may finish "
                           "after the clock stops" % started)
        # On the CPU the count is every thread the process did not have before the import, in ns,
        # against a tenth of the calls' own time (a sample of a small kernel is ~1 ms of calls:
        # a margin of the phase's wall, checks included, would hide whole samples' work).
        timed_s = sum(res.get("samples_ms") or []) * float(res.get("calls_per_sample") or 0) / 1e3
        limit = max(0.02, 0.1 * wall) if s.is_cuda else max(CPU_THREAD_BUSY_MIN_S, 0.1 * timed_s)
        if busy > limit:
            invalid.append("threads or processes the candidate started used %.3g s of CPU during %.3g s of timed calls "
                           "(%.3g s of them in the calls): work done outside the timed call" % (busy, wall, timed_s))
        if group_gone:
            invalid.append("%d process(es) of the run ended during the timed samples (pid %s): the CPU they used there "
                           "cannot be counted" % (len(group_gone), ", ".join(map(str, group_gone[:4]))))
        self._note_foreign_filters()
        if self.tampered:
            invalid.append(self.tampered)
        if self._digest(s.check_ref) != self.ref_digest:
            invalid.append("the reference outputs changed while the candidate ran (overwritten or NaN-filled)")
        self.l2.reset()
        if self.l2.seen_bytes:
            _flag(self.flags, "persisting_l2", "the candidate set a persisting-L2 carve-out of %d bytes; the harness "
                  "reset it before every sample" % self.l2.seen_bytes)
            invalid.append("persisting-L2 carve-out (%d bytes) set by the candidate" % self.l2.seen_bytes)

        if self.handler_signals:
            _flag(self.flags, "signal_handler", "the candidate had a Python signal handler on signal %s while its "
                  "samples were timed: it runs in the harness's own thread between the calls, outside the per-call "
                  "clock" % ", ".join(map(str, self.handler_signals[:4])))
        res["flags"] = _plain(self.flags) or []
        self.phases["harness_checks"] = self.prims.perf() - t_after
        if self.l2.floor is not None:
            res["persisting_l2_floor_bytes"] = self.l2.floor  # what the driver reads back after the harness set 0
        if invalid:
            res["status"] = "invalid"
            res["ok"] = False
            res["reason"] = "; ".join(invalid + list(failures))
        elif failures:
            res["status"] = "incorrect"
            res["ok"] = False
            res["reason"] = failures[0] + ("" if len(failures) == 1 else " (and %d more failure(s))" % (len(failures) - 1))
        else:
            res["status"] = "ok"
            res["ok"] = True
        return res

    def _warm_up(self, fn, seconds):
        """The contract's warm-up (first call, then passes over every set until settled), on the
        harness's own clock and settling rule, both taken before the candidate was imported: a
        patched time.perf_counter or contract cannot stretch or end it."""
        marks = []
        spent = self._warm(fn, self.session.timed_sets, seconds, self._sync, clock=self.prims.perf, marks=marks,
                           max_s=self._warmup_max_s, min_s=self._warmup_min_s, window_s=self._warmup_window_s)
        s = self.session
        s.use_calls(self._calls_for(s.calls, s.k, marks, s.most_calls, self._replay_budget_s))  # one set per call from here on
        self._mix_views = self._secret_views()
        return spent

    def _clock_mhz(self):
        """The SM clock right now, as a spin of CLOCK_PROBE_CYCLES cycles (clock64) over its event
        time: ~0.1 ms after each sample, outside the timed interval (nvbench's approach). Reads
        about 2-3% under the true clock (event overhead); None without torch.cuda._sleep."""
        p = self.prims
        if not self.session.is_cuda or p.spin is None:
            return None
        a, b = p.Event(enable_timing=True), p.Event(enable_timing=True)
        # On an idle GPU the start event fires at once and the spin arrives a launch later
        # (~10-20 us): a spin already running keeps the GPU busy until both are queued.
        p.spin(CLOCK_PROBE_CYCLES // 2)
        p.record(a)
        p.spin(CLOCK_PROBE_CYCLES)
        p.record(b)
        p.ev_sync(b)
        ms = p.elapsed(a, b)
        return round(CLOCK_PROBE_CYCLES / (ms * 1e3), 1) if ms > 0 else None

    def _picked_after_window(self, idx):
        """The held calls (their indices, idx) a CPU sample checks: cpu_checked_calls of them, drawn
        from os.urandom when called (after the sample's window), by no state the candidate could
        have read while its calls ran. os.urandom as taken before the candidate was imported, and
        no generator of the random module (whose class a candidate could patch)."""
        m = self.cpu_checked = cpu_checked_calls(len(idx))
        return set(self._draw(idx, m))

    def _draw(self, pool, m):
        """m distinct items of pool, drawn from os.urandom (a partial Fisher-Yates shuffle on 64-bit
        draws): every choice the harness makes after the import. A generator of the random
        module is looked up on its class at each call, which a candidate can patch: its sample()
        ran the candidate's code in the harness's thread between a sample's fresh values and its
        release, where it computed the outputs (cheats/random_sample_prefetch.py)."""
        pool = list(pool)
        m = min(m, len(pool))
        for i in range(m):
            j = i + int.from_bytes(self._urandom(8), "little") % (len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:m]

    def _ref_of(self, drawn, si, refs, draws=None):
        """The reference for set si of a round, drawn = (its seeds, what its release mixed or
        None), computed from the set drawn again: from refs (a dict by set index, filled here)
        when given, else computed now (draws: _drawn_again's cache, for the round's next sets)."""
        seeds, mixed = drawn
        if refs is None:
            return self.refs_for(self._drawn_again(seeds, si, {} if draws is None else draws, mixed))
        if si not in refs:
            refs[si] = self.refs_for(self._drawn_again(seeds, si, refs.setdefault("draws", {}), mixed))
        return refs[si]

    def _check_outputs(self, outs, idx, drawn, label, picked=None, refs=None, same_memory=None):
        """Checks held outputs against references computed now from their sets drawn again: every
        one, or (picked, a set of call indices: the CPU's) those calls only. refs: a dict of the
        sample's references by set index, computed once each (the CPU's); None: one at a time.
        Every held output is in the same-memory test below (the outputs in same_memory instead,
        where outs are copies of them)."""
        # The settings it checks with, compared right before: the candidate's code can run between a
        # sample's end and its checks (a finalizer of an object the harness drops), and undo what it
        # changed once they are done (picked_del_loosen.py).
        self._state_intact(self.watched_as)
        if picked is None and refs is None and self.session.is_cuda:
            bad = self._screened_outputs(outs, idx, drawn, label)
            return bad or self._same_memory(idx, outs if same_memory is None else same_memory, label)
        k = self.session.k
        ref_si, ref = None, None  # one reference at a time: with rotation each call has its own set
        draws = {}  # the inputs the round's sets share, drawn once
        passed = {}  # set index -> an output of that set that passed the check
        for j, out in zip(idx, outs):
            if picked is not None and j not in picked:
                continue
            si = j % k
            # Without rotation every call sees one set: an output bit-identical to one that passed
            # on the same inputs passes too, on one torch.equal (most kernels are deterministic).
            # Anything else, a NaN included (NaN != NaN), is checked.
            if si in passed and self._same_bits(out, passed[si]):
                continue
            if refs is not None:
                ref = self._ref_of(drawn, si, refs)
            elif si != ref_si:
                ref_si, ref = si, None  # the old reference freed before the next is computed
                ref = self._ref_of(drawn, si, None, draws)
            c = self.check_quick(out, ref)
            if not c["ok"]:
                return "%s, call %d: %s" % (label, j + 1, c["reason"])
            passed.setdefault(si, out)
        return self._same_memory(idx, outs if same_memory is None else same_memory, label)

    def _screened_outputs(self, outs, idx, drawn, label):
        """_check_outputs on a GPU: every held output's screen (or its equality to an earlier
        output of the same set) queued on the device and read back at once, one synchronisation
        for all where each call cost two; the outputs that do not pass it are then checked in full
        (check()), in call order. Decides as one check_quick a call would: an output passes on
        the screen, on check(), or equal in value to an output of its set that passed (NaN
        unequal to everything). One reference on the device at a time, as before: the screens'
        kernels are queued in stream order, so a reference's memory is reused after them."""
        k = self.session.k
        values = []  # 0-d device tensors, read back together
        entries = []  # (call index, output, set index, "screen" | "same" | "full", first value, count, first of set)
        first = {}  # set index -> the entry of the set's first screened output
        ref_si, ref, draws = None, None, {}
        for j, out in zip(idx, outs):
            si = j % k
            if si in first:
                eq = self._equal_queued(out, entries[first[si]][1])
                if eq is not None:
                    entries.append((j, out, si, "same", len(values), len(eq), first[si]))
                    values += eq
                    continue
            if si != ref_si:
                ref_si, ref = si, None  # the old reference freed before the next is computed
                ref = self._ref_of(drawn, si, None, draws)
            got = self._screen_fn(out, ref, *self._check_args)
            if got is None:
                entries.append((j, out, si, "full", 0, 0, None))
                continue
            first.setdefault(si, len(entries))
            entries.append((j, out, si, "screen", len(values), len(got), None))
            values += got
        del ref
        read = self._read_back(values)
        passed = []
        for j, out, si, how, a, n, of in entries:
            if how == "screen":
                passed.append(self._screen_read(read[a:a + n]))
            elif how == "same":
                passed.append(passed[of] and all(v == 1.0 for v in read[a:a + n]))
            else:
                passed.append(False)
        ref_si, ref, draws = None, None, {}
        for (j, out, si, _, _, _, _), ok in zip(entries, passed):
            if ok:
                continue
            if si != ref_si:
                ref_si, ref = si, None
                ref = self._ref_of(drawn, si, None, draws)
            c = self.check(out, ref)
            if not c["ok"]:
                return "%s, call %d: %s" % (label, j + 1, c["reason"])
        return None

    def _equal_queued(self, out, good):
        """Whether `out` equals `good` tensor by tensor, queued on the device: 0-d fp32 tensors,
        1.0 where equal in every element (NaN unequal), or None where they differ in type, shape,
        dtype or device (an output then gets its own screen). torch.eq is a function and the
        tensors it returns are the harness's own: an attribute set on the candidate's output
        shadows nothing here."""
        pairs = self._tensor_pairs(out, good)
        return None if pairs is None else [self.torch.eq(x, y).all().float() for x, y in pairs]

    def _tensor_pairs(self, out, good):
        """`out` and `good` tensor by tensor, [(x, y), ...], where both are plain tensors of one
        shape, dtype and device each; None where they are not."""
        torch = self.torch
        a, b = self._as_outputs(out), self._as_outputs(good)
        if a is None or b is None or len(a) != len(b):
            return None
        for x, y in zip(a, b):
            if (type(x) is not torch.Tensor or type(y) is not torch.Tensor or x.shape != y.shape
                    or x.dtype != y.dtype or x.device != y.device):
                return None
        return list(zip(a, b))

    def _same_memory(self, idx, outs, label):
        """Two calls returning the same memory: a cached result returned twice."""
        ptrs = {}
        for j, out in zip(idx, outs):
            for o in self.hk.as_outputs(out) or []:
                p = o.data_ptr()
                if p in ptrs and ptrs[p] != j:
                    return ("%s: calls %d and %d returned the same memory; every call must compute its own output"
                            % (label, ptrs[p] + 1, j + 1))
                ptrs[p] = j
        return None

    def _replay_failure(self, r, held, idx, drawn, intact, outs):
        """Why checked graph replay r failed (None: it passed): its held outputs (the graph's own,
        or copies of them) against references from the harness's copies of its inputs, and
        `intact`, whether its inputs matched those copies right after it. The same-memory test
        reads the graph's own outputs, `outs`: a copy has memory of its own."""
        bad = self._check_outputs(held, idx, drawn, "graph replay %d on fresh values" % r,
                                  same_memory=None if held is outs else outs)
        if bad:
            return bad
        if not intact:
            return "graph replay %d: the function changed its inputs; a kernel must not write to them" % r
        return None

    def _copies_digest(self, held, sets):
        """The digest (as of check_ref's) of a deferred check's copies: the held outputs' snapshots
        and the harness's copies of the inputs. Taken right after the copies are made and again
        before they are checked: the candidate's kernels run between the two (its later samples),
        and copies rewritten meanwhile (to pass a check the replay's own outputs would fail) show."""
        torch = self.torch
        tensors = [t for h in held for t in (self._as_outputs(h) or []) if type(t) is torch.Tensor]
        tensors += [x for one in sets for x in one if type(x) is torch.Tensor]
        return self._digest(tensors)

    def _same_bits(self, out, good):
        """Whether `out` is, tensor by tensor, plain tensors equal in type, shape, dtype, device and
        every element to `good`, an output that passed the full check."""
        pairs = self._tensor_pairs(out, good)
        return pairs is not None and all(self._equal(x, y) for x, y in pairs)  # NaN != NaN, and `good` has none

    def _hold_index(self, calls):
        """Which calls' outputs to keep for checking (all, unless they would not fit)."""
        out_bytes = max(self.session.out_bytes, 1)
        cap = max(2, int(max(HOLD_BUDGET_BYTES, self.session.sets_cap) // out_bytes))
        if calls <= cap:
            return frozenset(range(calls))
        return frozenset(self._draw(range(calls - 1), cap - 1)) | {calls - 1}

    def _time(self, fn):
        s = self.session
        t = self.target
        if not s.is_cuda:
            return self._time_calls(fn, cuda=False)
        if t.timer == "cupti" and self.clock is None:
            raise self.hk.cupti_refusal(self.clock_note)
        if t.timer in ("auto", "cupti", "cuda_graph"):
            try:
                return self._time_graph(fn)
            except self.hk.StageError:
                raise
            except BaseException as e:
                if t.timer in ("cuda_graph", "cupti"):
                    raise self.hk.StageError("timer", "CUDA-graph capture failed: %s: %s" % (type(e).__name__, e))
                note = "CUDA-graph capture failed (%s: %s); fell back to per-call events" % (type(e).__name__, str(e)[:200])
                try:
                    self.prims.dev_sync()
                except BaseException:
                    pass
                samples, timer, _, fails = self._time_calls(fn, cuda=True)
                return samples, timer, note, fails
        return self._time_calls(fn, cuda=True)

    def _time_calls(self, fn, cuda):
        """Per-call timing (CUDA events, or perf_counter on the CPU); every sample on fresh values."""
        s, p = self.session, self.prims
        order = tuple(self.hk.cycle(list(range(s.k)), s.calls))  # tuples and frozensets: what the
        timed = tuple(s.timed_sets)  # calls can reach through the harness's frames, they cannot edit
        samples, fails = (), ()  # tuples: a later call, or a finalizer, cannot edit them in place
        sampled = not cuda  # the CPU checks a share of each sample's calls (CPU_CHECKED_CALLS)
        spot_odds = self._spot_odds(s.calls)
        self.spot_copies = 0
        for i in range(self.target.samples):
            # The last sample's objects go, and the garbage with them, before the fresh values
            # exist: from those to the release nothing of the candidate's can run (_collect_young).
            sets = seeds = copy_views = drawn = hold = None
            hold = self._hold_index(s.calls)
            self._collect_young()
            sets, seeds = self.fresh_round()
            self.l2.reset()
            self._sync()  # the reset's own GPU work ends here, not inside the parent's window
            copy_views = self._secret_views(sets)
            drawn = (seeds, self._release(s.calls, self._mix_views, copy_views))
            if cuda:
                p.dev_sync()
            host0 = p.perf()
            total, evs, outs, idx, snaps, spot_s, signed, marked = self._eager_sample(fn, order, timed, spot_odds, hold,
                                                                                      cuda)
            if cuda:
                p.dev_sync()
            host_ms = (p.perf() - host0 - spot_s) * 1e3
            self._done(signed[0], spot_s, marked)
            # What the sample held and copied is what the harness chose, call for call: the lists
            # it filled are within the calls' reach (the harness's frame's locals). Their types first,
            # and exactly: an int subclass planted in idx ran its __eq__ in this comparison, after the
            # window and before every check, and filled the held outputs and the spot copies there
            # (cheats/planted_int_after_window.py). Then only ints are compared.
            if (type(idx) is not list or type(outs) is not list or type(evs) is not list
                    or not all(type(j) is int for j in idx) or idx != sorted(hold) or len(outs) != len(hold)
                    or self._snaps_signature(snaps, cuda) != signed or len(evs) != (s.calls if cuda else 0)):
                self.tampered = ("sample %d: the outputs the harness held or copied for its checks were not those of "
                                 "the calls it chose, as it took them (%d held of %d, %d copied of %d): the candidate "
                                 "edited the harness's own state" % (i + 1, len(outs), len(hold), len(snaps), signed[0]))
                break
            # On the CPU, which held calls are checked is drawn only now, the window closed; a
            # set's reference serves its spot check and its held check (one computation).
            refs = {} if sampled else None
            picked = self._picked_after_window(sorted(hold)) if sampled else None
            self.spot_copies += len(snaps)
            for j, si, snap, _, made in snaps:
                c = self.check_quick(self._spot_tensor(snap) if made else snap, self._ref_of(drawn, si, refs))
                if not c["ok"]:
                    fails += ("sample %d, call %d, checked as soon as it returned: %s" % (i + 1, j + 1, c["reason"]),)
            del snaps
            if cuda:
                per_call = [p.elapsed(a, b) for a, b in evs]
                ev_ms = sum(per_call)
                # The events are Python objects the candidate could find and record again; a
                # re-recorded start makes an interval negative or a sample far shorter than the
                # host saw it take.
                if min(per_call) < 0 or ev_ms < 0.1 * host_ms:
                    self.tampered = ("sample %d: the timing events add up to %.4g ms but the sample took %.4g ms of "
                                     "host time (smallest call %.4g ms): the events were re-recorded or the work ran "
                                     "outside them" % (i + 1, ev_ms, host_ms, min(per_call)))
                samples += (ev_ms / s.calls,)
                if i == 0:
                    self._clock_mhz()  # first launch of the spin kernel: not a reading
                self.sample_clocks.append(self._clock_mhz())
            else:
                samples += (total * 1e3 / s.calls,)
            bad = self._check_outputs(outs, idx, drawn, "sample %d" % (i + 1), picked, refs)
            del outs, refs
            if bad:
                fails += (bad,)
            if not self.inputs_intact(sets):
                fails += ("sample %d: the function changed its inputs; a kernel must not write to them" % (i + 1),)
            if fails:
                break
        if cuda and not fails:
            self._cross_check_host(fn, samples)
        return list(samples), ("cuda_events" if cuda else "cpu"), None, fails

    def _eager_sample(self, fn, order, timed, spot_odds, hold, cuda):
        """One sample's calls, back to back, each timed on its own (CUDA events, or perf_counter):
        (host seconds inside the calls, the events, the held outputs and their call indices, the
        spot snapshots, the seconds the snapshots took, and their signature: (how many, a hash of
        each one's call, set and content)). The parent's empty samples run this same loop with an
        empty call, so its cost between calls is part of their fixed cost."""
        p = self.prims
        urandom = self._urandom
        outs, idx, evs = [], [], []
        snaps = ()  # a tuple: the calls can read this frame's locals, not rebind them or edit it
        total = spot_s = 0.0
        n_snaps = sig = marked = 0  # ints: the calls can read this frame's locals, not rebind them
        for j, si in enumerate(order):
            if cuda:
                a = p.Event(enable_timing=True)
                b = p.Event(enable_timing=True)
                p.record(a)
                out = fn(*timed[si])
                p.record(b)
                evs.append((a, b))
            else:
                t0 = p.perf()
                out = fn(*timed[si])
                total += p.perf() - t0
            # Whether this output is copied now is drawn only now, after the call returned: no call
            # can know beforehand that it is looked at as soon as it returns. Copied before any
            # device-wide sync: a result still being computed on another stream or thread is wrong
            # in the copy. Checked once the sample is over, outside the parent's window; on the CPU
            # the copy is immutable bytes (_copy_timed), else its content is digested now, so no
            # later write into it goes unseen.
            if int.from_bytes(urandom(2), "little") < spot_odds:
                if cuda:
                    s0 = p.perf()
                    snap, d, made = self.snapshot(out), None, False
                    took = p.perf() - s0
                else:
                    b0 = p.perf()
                    snap, d, took = self._copy_timed(out)
                    made = took is not None  # its bytes, not a tensor (_spot_tensor)
                    if made and self._marks[0]:
                        marked += 1  # its pipeline wrote the parent's marks
                    if took is None:
                        took = 0.0
                    elif self._copy_steps is not None:  # an empty sample, before the import: all of it
                        b1 = p.perf() - b0
                        self._copy_steps.append(b1 - took)
                        took = b1
                    else:
                        took += self.copy_steps_s
                snaps += ((j, si, snap, d, made),)
                n_snaps += 1
                sig = hash((sig, j, si, d))
                spot_s += took
            if j in hold:
                outs.append(out)
                idx.append(j)
            del out
        return total, evs, outs, idx, snaps, spot_s, (n_snaps, sig), marked

    def _copy_timed(self, out):
        """A CPU spot copy: (the copy, its digest, the seconds its bytes took to copy, or None where
        none is taken out of the parent's window). The copy of a plain strided output is an
        immutable bytes object made in one C call (bytes() of a ctypes view of the output's
        memory), and the clock's two reads and those calls are one pipeline of C functions (map
        over them): no bytecode runs between the reads, so no eval-breaker check, and no Python
        signal handler, finalizer or trace function of the candidate's can run in the time the
        parent is told the copy took (cheats/signal_in_spot_copy.py); nor does torch, whose
        dispatcher would run a Python kernel on aten::copy_ that removed itself before the
        tables were compared (cheats/dispatcher_in_spot_copy.py). Held as (bytes, dtype, size,
        stride) in the sample's tuple of copies until it is checked after the window
        (_spot_tensor): nothing of the candidate's can write to it, so it needs no digest. A torch
        function or dispatch mode active here (none is, outside the calls) would run its code in
        the harness's reads of the output, and could give it another tensor's memory: tampering
        (cheats/mode_in_spot_copy.py). What is not plain strided memory is cloned (snapshot) and
        digested, and none of its time is taken out. The Python steps around the pipeline are
        taken out as a fixed amount (COPY_STEPS_COLD_FACTOR)."""
        p, torch = self.prims, self.torch
        outs = self._as_outputs(out)
        if outs is None or any(type(o) is not torch.Tensor or self.hk._shadowed(o) for o in outs):
            return out, self._content_digest(out), None  # the check rejects it as it is (snapshot)
        if self._mode_active(p.tuple(p.map(p.call, p.mode_probes))):
            return self._copy_untimed(out)
        metas, steps = [], []
        for o in outs:
            plain = self._plain_memory(o)
            if plain is None:
                return self._copy_untimed(out)
            ptr, span = plain
            metas.append((o.dtype, o.size(), o.stride()))
            steps.append(p.partial(p.bytes, (p.c_char * span).from_address(ptr)))
        pause, resume = self._marks
        if pause and not self.release.aimed(pause[0], resume[0]):
            # Re-aimed (partial.__setstate__, no audit event), the real copies would mark nothing
            # and marks of the candidate's own, on the parent's socket, could cover its calls.
            self.tampered = self.tampered or ("the candidate re-aimed the harness's marks of its copies for the "
                                              "parent's clock: its own marks could cover the time of its calls")
            return self._copy_untimed(out)
        # Every signal blocked in this thread through the pipeline: a fault on reading the output
        # (its pages protected by the candidate) then kills the run instead of running a native
        # handler of the candidate's in the copy's time, which the parent takes out of the window
        # (a handler set through libc, not Python's signal module: cheats/fault_in_copy.py).
        mask = _block_all_signals(p)
        try:
            got = p.tuple(p.map(p.call, (p.perf,) + pause + p.mode_probes + p.tuple(steps) + resume + (p.perf,)))
        finally:
            if mask is not None:
                p.sigmask(SIG_SETMASK, mask)
        first = 1 + len(pause)
        if self._mode_active(got[first:first + len(p.mode_probes)]):
            return self._copy_untimed(out)
        made = got[first + len(p.mode_probes):first + len(p.mode_probes) + len(steps)]
        copies = p.tuple((b,) + m for b, m in zip(made, metas))
        return (copies if len(outs) > 1 else copies[0]), None, got[-1] - got[0]

    def _copy_untimed(self, out):
        """A spot copy through torch (snapshot) and its digest, none of its time said."""
        snap = self.snapshot(out)
        return snap, self._content_digest(snap), None

    def _plain_memory(self, o):
        """(its first element's address, the bytes its elements span) for a CPU tensor whose
        elements are plain strided memory that span no more than twice their own bytes, else None
        (a conjugate or negative view, quantized, nested, sparse, storage-less, empty)."""
        torch = self.torch
        try:
            if (o.layout is not torch.strided or o.device.type != "cpu" or o.is_quantized or o.is_conj() or
                    o.is_neg() or getattr(o, "is_nested", False) or o.numel() == 0):
                return None
            ptr, size = o.data_ptr(), o.element_size()
            span = (1 + sum((n - 1) * st for n, st in zip(o.size(), o.stride()))) * size
        except (RuntimeError, TypeError, ValueError, NotImplementedError):
            return None
        return (ptr, span) if ptr and span <= 2 * o.numel() * size + 4096 else None

    def _mode_active(self, probed):
        """Whether the mode probes' answers say a torch function or dispatch mode is active: one
        is tampering (the candidate left it after its call, where the harness copies)."""
        modes = _modes_said(probed, self.prims.python_key)
        if modes:
            self.tampered = self.tampered or ("the candidate left %s active after its call, where the harness copies "
                                              "its output: the copy would run its code" % modes)
        return bool(modes)

    def _spot_tensor(self, snap):
        """The tensor(s) of a CPU spot copy's bytes (_copy_timed), made after the window."""
        torch = self.torch

        def one(rec):
            buf, dtype, size, stride = rec
            return torch.frombuffer(bytearray(buf), dtype=dtype).as_strided(size, stride)

        return one(snap) if type(snap[0]) is bytes else [one(r) for r in snap]

    def _content_digest(self, snap):
        """The bits of each copied output's sum (NaN reads as NaN), or None for what is not a tensor."""
        ts = snap if isinstance(snap, list) else [snap]
        if any(type(t) is not self.torch.Tensor for t in ts):
            return None
        return tuple(float(t.sum(dtype=self.torch.float64)).hex() for t in ts)

    def _snaps_signature(self, snaps, cuda):
        """(how many, the hash) of a sample's spot snapshots as they are now: what _eager_sample
        made of them as it took them, unless one was added, removed, replaced or written into."""
        sig = 0
        for j, si, snap, d, made in snaps:
            now = None if cuda or made else self._content_digest(snap)
            sig = hash((sig, j, si, now))
        return len(snaps), sig

    def _spot_odds(self, calls):
        """The odds, out of 65536, that a call's output is copied as soon as it returns:
        SPOT_CHECKS_PER_SAMPLE copies a sample on average."""
        return int(65536 * min(1.0, SPOT_CHECKS_PER_SAMPLE / float(max(calls, 1))))

    def _cross_check_host(self, fn, event_samples):
        """Host wall time around single calls with a device-wide sync: work on another stream or
        thread after the call returns shows up here but not in the events."""
        s, p = self.session, self.prims
        timed = s.timed_sets

        def host_ms(f, n):
            out = []
            for j in range(n):
                p.dev_sync()
                t0 = p.perf()
                f(*timed[j % s.k])
                p.dev_sync()
                out.append((p.perf() - t0) * 1e3)
            return sorted(out)[len(out) // 2]

        n = max(5, min(50, s.calls))
        noop = host_ms(lambda *a: None, n)
        host = host_ms(fn, n)
        ev = sorted(event_samples)[len(event_samples) // 2]
        self.host_ms = host
        if host - noop > 2.0 * ev + 0.05:
            _flag(self.flags, "work_outside_timed_region",
                  "a call takes %.4g ms of host wall time with a device-wide sync (%.4g ms for an empty call) but "
                  "%.4g ms on the timing events: work continues after the call returns (another stream or thread)"
                  % (host, noop, ev))

    def _profile_replays(self, graph, calls, replays=2):
        """torch.profiler's view of `replays` replays of the timed graph (bench's profile_check):
        the median kernel duration, and per call the kernels' busy time and first-start to
        last-end span. The same calls the samples timed, in the same process."""
        from torch.profiler import ProfilerActivity, profile
        p = self.prims
        # Starting the profiler idles the GPU for seconds; two replays first bring it back to
        # where the samples ran, and their kernels are left out.
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(2 + replays):
                p.replay(graph)
            p.dev_sync()
        ks = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                    if str(getattr(e, "device_type", "")).endswith("CUDA"))
        per_replay = len(ks) // (2 + replays)
        ks = ks[2 * per_replay:]
        if not ks:
            return {"kernels": 0}
        busy = self._busy(ks)
        durs = sorted(b - a for a, b in ks)
        n = replays * calls
        return {"kernels": len(ks), "kernels_per_call": round(len(ks) / float(n), 3),
                "kernel_median_ms": durs[len(durs) // 2] / 1e3, "busy_per_call_ms": busy / n / 1e3,
                "span_per_call_ms": (ks[-1][1] - ks[0][0]) / n / 1e3}

    def _time_graph(self, fn):
        s, p = self.session, self.prims
        t0 = p.perf()
        order = self.hk.cycle(list(range(s.k)), s.calls)
        timed = s.timed_sets
        side = p.Stream()
        side.wait_stream(p.current_stream())
        with p.stream_ctx(side):
            for si in order[: s.k]:
                fn(*timed[si])
        p.current_stream().wait_stream(side)
        p.dev_sync()
        graph = p.Graph()
        hold = self._hold_index(s.calls)
        outs, idx = [], []
        with p.graph_ctx(graph):
            for j, si in enumerate(order):
                out = fn(*timed[si])
                if j in hold:  # held: distinct calls must give distinct outputs
                    outs.append(out)
                    idx.append(j)
                del out
        p.replay(graph)
        p.dev_sync()
        self._clock_mhz()  # the spin kernel's first launch loads it: not a reading
        clock, note = self._first_clocked_replay(graph)
        t1 = p.perf()
        # Replays on fresh values, each checked call by call: a graph that does not recompute from
        # its inputs (work done eagerly during capture, cached results, side streams left out of
        # the graph) fails them. They go at random places among the timed replays, so work that
        # counts replays on the device cannot tell a checked replay from a timed one; every timed
        # replay gets fresh values of its own as well.
        n_samples = self.target.samples
        checked_at = set(self._draw(range(n_samples + 1), VERIFY_REPLAYS))
        held_bytes = len(idx) * max(self.session.out_bytes, 1)
        defer = held_bytes * len(checked_at) <= max(DEFERRED_CHECK_BYTES, 2 * self.session.sets_cap)
        pending = []  # deferred checked replays: (number, snapshots of the held outputs, the sets, their seeds, intact, digest)
        samples, fails = [], ()  # fails: a tuple, which a finalizer cannot empty in place
        check_s = fresh_s = ramp_s = young_s = records_s = probe_s = 0.0
        self._state_check_s = 0.0
        idle = True  # capture left the GPU idle: hk.RAMP_S of replays before the next sample
        ramps = []  # with CUPTI: the ramps' replays between events (CUPTI off), for graph_ms
        records = set()  # CUPTI records a timed replay
        rules = set()
        for i in range(n_samples + 1):
            if i in checked_at and not fails:
                c0 = p.perf()
                r = sorted(checked_at).index(i) + 1
                sets, seeds = self.fresh_round()
                p.replay(graph)
                p.dev_sync()  # every stream's work done, as for a check at once
                intact = self.inputs_intact(sets)
                if defer:  # copied now (the next replay overwrites graph memory), checked after the samples
                    held = [self.snapshot(o) for o in outs]
                    pending.append((r, held, sets, seeds, intact, self._copies_digest(held, sets)))
                else:
                    bad = self._replay_failure(r, outs, idx, (seeds, None), intact, outs)
                    if bad:
                        fails += (bad,)
                    idle = True  # the GPU waited for the host's check
                check_s += p.perf() - c0
            if i == n_samples:
                break
            if idle:
                r0 = p.perf()
                if clock is None:
                    self.hk.ramp(lambda g=graph: p.replay(g), p.dev_sync, clock=p.perf)
                else:  # timed by events too: graph_ms, the guard's other reading
                    burst = []
                    self.hk.ramp(lambda g=graph: burst.append(self._timed_replay(g)), p.dev_sync, clock=p.perf)
                    ramps.append(burst)
                ramp_s += p.perf() - r0
                idle = False
            # Fresh values before every timed replay too (they load before the start event): a
            # graph whose kernels skip work when their inputs did not change since the last
            # replay (outputs in graph memory still hold its results) has nothing to skip.
            y0 = p.perf()
            self._collect_young()  # nothing of the candidate's runs from the fresh values to the release
            f0 = p.perf()
            young_s += f0 - y0
            self.fresh_values()
            self.l2.reset()
            p.dev_sync()  # the reset's own GPU work ends here, not inside the parent's window
            fresh_s += p.perf() - f0
            _, _, marks = self._release(s.calls, self._mix_views, clock=clock is not None)
            if clock is None:
                a, b = self._timed_replay(graph)
                p.ev_sync(b)
                self._done()
                samples.append(p.elapsed(a, b) / s.calls)
            else:
                p.replay(graph)
                p.dev_sync()
                self._done()
                k0 = p.perf()
                recs = self._sample_records(self._clock_stop(), marks)
                if recs is None:
                    self.tampered = ("timed replay %d: CUPTI returned no record of the harness's own launches before "
                                     "the release (its activity was disabled or its records taken while the candidate "
                                     "ran)" % (len(samples) + 1))
                    break
                ms, rule = self._per_call(recs, s.calls)
                records_s += p.perf() - k0
                if ms is None:
                    self.tampered = ("timed replay %d: CUPTI recorded no kernel or copy (its activity was disabled or "
                                     "its records taken while the candidate ran)" % (len(samples) + 1))
                    break
                samples.append(ms)
                records.add(len(recs))
                rules.add(rule)
            k0 = p.perf()
            self.sample_clocks.append(self._clock_mhz())
            probe_s += p.perf() - k0
        p.dev_sync()
        c0 = p.perf()
        for r, held, sets, seeds, intact, digest in pending:
            if not _same_digest(self._copies_digest(held, sets), digest):
                self.tampered = self.tampered or (
                    "graph replay %d on fresh values: the harness's copies of its outputs and inputs changed while the "
                    "candidate's later samples ran; something wrote to memory that is not its own" % r)
                break
            bad = self._replay_failure(r, held, idx, (seeds, None), intact, outs)
            if bad:
                fails += (bad,)
                break
        del pending
        check_s += p.perf() - c0
        t2 = p.perf()
        if self.profile_check:  # profiled by measure() once the thread watch is off
            self._profile_graph = (graph, s.calls)
        del outs, graph
        self.phases.update({"graph_capture": t1 - t0, "samples": t2 - t1 - check_s - fresh_s - ramp_s,
                            "fresh_values": fresh_s, "ramp": ramp_s, "checked_replays": check_s,
                            # parts of "samples": what a sample costs besides its window
                            "young_gc": young_s, "state_checks": self._state_check_s, "clock_records": records_s,
                            "clock_probes": probe_s})
        if clock is None:
            return samples, "cuda_graph", note, fails
        graph_ms = self._ramp_ms(ramps, s.calls)
        self.timer_detail = {"graph_ms": graph_ms, "kernel_time_rule": "+".join(sorted(rules)),
                             "gpu_ops_per_call": (round(min(records) / float(s.calls), 3) if records else None)}
        if len(records) > 1:
            self.timer_detail["gpu_ops_per_replay"] = sorted(records)
        if samples and graph_ms is not None:
            ms = sorted(samples)[len(samples) // 2]
            if graph_ms > EVENT_OVER_CUPTI_RATIO * ms + EVENT_OVER_CUPTI_MS:
                self.tampered = ("the timed graph takes %.4g ms a call on CUDA events but its kernels and copies only "
                                 "%.4g ms on CUPTI's records: the call does work CUPTI does not see (host nodes?) or "
                                 "its records were filtered; time it with timer: cuda_graph in TARGET" % (graph_ms, ms))
        return samples, "cupti", note, fails

    def _first_clocked_replay(self, graph):
        """One replay with CUPTI on, untimed (its first replay of a graph costs ~8 ms): (clock, None)
        when it recorded the graph's work, else (None, why) with timer "auto", a StageError with
        timer "cupti"."""
        if self.clock is None or self.target.timer == "cuda_graph":
            note = None
            if self.clock_note and self.target.timer == "auto":
                note = self.hk.cupti_fallback_note(self.clock_note)
            return None, note
        p = self.prims
        why = None
        try:
            self._clock_start()
            p.replay(graph)
            p.dev_sync()
            if not self._clock_stop():
                why = "CUPTI recorded no kernel or copy in a replay of the timed graph (another profiler may hold it)"
                if self._clock_sees_own_graph():
                    # The clock works: the candidate's calls put no work in the graph it could see.
                    self.tampered = ("the candidate's timed calls launched no kernel or copy the clock could see: a "
                                     "replay of the CUDA graph of its calls recorded nothing on CUPTI, a graph of the "
                                     "harness's own replayed right after did; its work ran outside the captured "
                                     "calls (on another stream or thread, or before the capture)")
        except self.hk.ClockError as e:
            why = str(e)
        if why is None:
            return self.clock, None
        if self.target.timer == "cupti":
            raise self.hk.cupti_refusal(why)
        return None, self.hk.cupti_fallback_note(why)

    def _clock_sees_own_graph(self):
        """Whether CUPTI records a replay of a one-kernel graph of the harness's own (after it
        recorded nothing of the candidate's graph: is the clock or the candidate's graph empty?)."""
        p = self.prims
        try:
            graph, buf = self._tiny_graph(1)  # buf: a graph does not keep the tensors it writes alive
            p.replay(graph)
            p.dev_sync()
            self._clock_start()
            p.replay(graph)
            p.dev_sync()
            return bool(self._clock_stop())
        except BaseException:  # no answer: the fallback stays a note
            return False

    def _tiny_graph(self, nodes):
        """A CUDA graph of `nodes` one-element adds of the harness's own, warmed on a side stream
        before capture as torch.cuda.graph asks; returns (graph, buffer): the caller keeps the buffer
        alive while it replays (a graph does not hold the tensors it writes)."""
        p = self.prims
        buf = self.torch.zeros(1, device=self.session.device)
        side = p.Stream()
        side.wait_stream(p.current_stream())
        with p.stream_ctx(side):
            buf.add_(1)
        p.current_stream().wait_stream(side)
        p.dev_sync()
        graph = p.Graph()
        with p.graph_ctx(graph):
            for _ in range(nodes):
                buf.add_(1)
        return graph, buf

    def _timed_replay(self, graph):
        """Queues a replay of `graph` between two timing events, behind the start spin (the GPU
        busy until both are queued, hk.START_SPIN_CYCLES); returns the events, not waited for."""
        p = self.prims
        a = p.Event(enable_timing=True)
        b = p.Event(enable_timing=True)
        if p.spin is not None:
            p.spin(self._start_spin_cycles)
        p.record(a)
        p.replay(graph)
        p.record(b)
        return a, b

    def _ramp_ms(self, ramps, calls):
        """The graph timer's reading (events a replay / calls) over the second half of every ramp,
        once the GPU is busy again; None without ramps."""
        vals = []
        for burst in ramps:
            for a, b in burst[len(burst) // 2:]:
                vals.append(self.prims.elapsed(a, b) / calls)
        if not vals:
            return None
        vals.sort()
        return vals[len(vals) // 2]


def _raised_in(exc, filename):
    """Whether the exception passed through code of `filename` (the candidate's file)."""
    tb = exc.__traceback__
    while tb is not None and filename:
        if tb.tb_frame.f_code.co_filename == filename:
            return True
        tb = tb.tb_next
    return False


class _op_recorder:
    """A context that records the qualified name of every operator dispatched in it, with its
    overload ("aten::div_.Tensor": the dispatcher keeps a table per overload, and the bare name of
    an overloaded operator names an empty one), through a TorchDispatchMode; records nothing where
    torch has no dispatch modes."""

    def __init__(self, torch):
        self.ops = set()
        self.mode = None
        try:
            from torch.utils._python_dispatch import TorchDispatchMode
        except ImportError:
            return
        ops = self.ops

        class Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                schema = getattr(func, "_schema", None)
                if schema is not None:
                    ops.add(schema.name + ("." + schema.overload_name if schema.overload_name else ""))
                return func(*args, **(kwargs or {}))

        self.mode = Record()

    def __enter__(self):
        if self.mode is not None:
            self.mode.__enter__()
        return self.ops

    def __exit__(self, *exc):
        if self.mode is not None:
            self.mode.__exit__(*exc)
        return False


def _block_all_signals(prims):
    """Blocks every signal in this thread; returns the mask before (what SIG_SETMASK puts back), or
    None where the platform has no pthread_sigmask."""
    if prims.sigmask is None or not prims.all_signals:
        return None
    return prims.sigmask(SIG_BLOCK, prims.all_signals)


def _dump_table(torch, op):
    try:
        return torch._C._dispatch_dump_table(op)
    except Exception:
        return None


def _dispatch_tables(torch, ops):
    """{operator: its dispatch table as text}, for the operators the dispatcher can describe."""
    if not hasattr(torch._C, "_dispatch_dump_table"):
        return {}
    return {op: t for op, t in ((op, _dump_table(torch, op)) for op in ops) if t is not None}


def _group_cpu(group, me):
    """{pid: (CPU seconds from its stat, with its reaped children's; CPU seconds of its live
    threads, in ns)} of every process of process group `group` but `me`."""
    tick, out = float(os.sysconf("SC_CLK_TCK")), {}
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit() and int(d) != me]
    except OSError:
        return out
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:  # bytes: a name need not be UTF-8
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) != group:
                continue
            ticks = sum(int(x) for x in fields[11:15]) / tick  # utime, stime, cutime, cstime
            ns = 0
            for tid in os.listdir("/proc/%d/task" % pid):
                try:
                    with open("/proc/%d/task/%s/schedstat" % (pid, tid), "rb") as f:
                        ns += int(f.read().split()[0])
                except (OSError, IndexError, ValueError):
                    continue
            out[pid] = (ticks, ns / 1e9)
        except (OSError, IndexError, ValueError):
            continue
    return out


def _thread_cpu_ns(tid):
    """A thread of this process's CPU time in ns (schedstat's first field), or None when gone."""
    try:
        with open("/proc/self/task/%d/schedstat" % tid) as f:
            return int(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        return None


def _start_intra_op_pool(torch):
    """Runs one op big enough to be split over torch's intra-op threads, so its pool exists before
    the thread watch takes the process's threads: a pool an honest candidate's first parallel op
    would start is then not counted as the candidate's threads."""
    try:
        if torch.get_num_threads() > 1:
            torch.ones(1 << 18).add_(1.0)
    except Exception:
        pass


def _active_modes(prims):
    """Which torch function or dispatch modes are active on this thread ("" when none), asked of
    each of prims.mode_probes (one that fails says nothing)."""
    probed = []
    for f in prims.mode_probes:
        try:
            probed.append(f())
        except Exception:
            probed.append(())
    return _modes_said(probed, prims.python_key)


def _modes_said(probed, python_key):
    """What the answers of Primitives.mode_probes (in their order) say is active ("" when none): a
    mode on the torch function or dispatch stacks, in torch 1.13's single legacy slots
    (_set_torch_function_mode, _set_torch_dispatch_mode, which the stacks' lengths do not count),
    or anything that routes this thread's operators to Python (the Python dispatch key in its
    included set, which every dispatch mode sets)."""
    function_stack, function_mode, dispatch_stack, included = probed
    found = []
    if function_stack or function_mode:
        found.append("a torch function mode")
    routed = python_key is not None and type(included) is not tuple and included.has(python_key)
    if dispatch_stack or routed:
        found.append("a torch dispatch mode")
    return " and ".join(found)


def _process_age_s():
    """Seconds since this process was created (fork), from /proc; None where there is none."""
    try:
        with open("/proc/self/stat", "rb") as f:
            start_ticks = int(f.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / float(os.sysconf("SC_CLK_TCK")))
    except (OSError, ValueError, IndexError):
        return None


def _target_diff(own, base):
    keys = sorted(set(own) | set(base))
    return ["%s (%r vs the baseline's %r)" % (k, own.get(k), base.get(k)) for k in keys if own.get(k) != base.get(k)]


def _expected_hashes(secret):
    """The binary's sha256 of each file of ours (None when run by hand: nothing to check against)."""
    return secret.get("py_sha256") if isinstance(secret.get("py_sha256"), dict) else None


def _fake_fraction():
    """HOTKERNEL_TEST_FAKE_FRACTION=F (read before the scrub): the run reports its samples F
    shorter than it timed them, as a clock fake that got past every check inside the process
    would. Only for measuring the parent's clock (bench/probes/parent_clock_probe.py): the bound
    is what must catch it."""
    try:
        f = float(os.environ.get("HOTKERNEL_TEST_FAKE_FRACTION", "0"))
    except ValueError:
        return 0.0
    return f if 0.0 < f < 1.0 else 0.0


# What a timer adds to a run's line (TrustedRun.timer_detail).
TIMER_DETAIL_KEYS = ("graph_ms", "kernel_time_rule", "gpu_ops_per_call", "gpu_ops_per_replay")


def _plain(v, depth=0):
    """v when it is made of plain values only (exact types: None, bool, int, float, str, and lists
    and dicts of them), else None in its place. For the run's state that the measurement updates
    as it goes (MUTABLE_STATE): the candidate reaches it through f_back and can put a dict
    subclass there, whose keys() ran its code in the harness's thread when the result was built,
    after the samples, where it emptied the list of failures (cheats/timer_detail_subclass.py).
    Exact lists and dicts are read by the interpreter's own code: nothing of the candidate's runs."""
    t = type(v)
    if v is None or t is bool or t is int or t is float or t is str:
        return v
    if depth < 4 and t is list:
        return [_plain(x, depth + 1) for x in v]
    if depth < 4 and t is dict:
        return {k: _plain(x, depth + 1) for k, x in dict.items(v) if type(k) is str}
    return None


def _wait_pidfds():
    """The pidfds of the runs a fork server's run starts beside (still exiting), from
    HOTKERNEL_WAIT_PIDFDS; empty for a fresh process."""
    fds = []
    for word in os.environ.get("HOTKERNEL_WAIT_PIDFDS", "").split(","):
        if word.isdigit():
            fds.append(int(word))
    return fds


def _previous_runs_gone(fds, limit_s=EXIT_WAIT_S):
    """Waits until every run this one started beside has exited (its memory torn down), at most
    limit_s; closes the pidfds. Returns the seconds waited. Before the first timed sample: a
    previous run's exit is work of the kernel's that the samples would otherwise share."""
    if not fds:
        return 0.0
    import select
    t0 = time.perf_counter()
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    left = set(fds)
    while left:
        rest = limit_s - (time.perf_counter() - t0)
        if rest <= 0:
            break
        for fd, _ in poller.poll(rest * 1e3):
            left.discard(fd)
            poller.unregister(fd)
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    return time.perf_counter() - t0


def _take_secrets(args):
    """Reads the private input, loads our modules from their checked bytes, moves the result fd
    and hands both secrets (the nonce and the fd) to the harness's audit hook, the only place that
    keeps them: no frame on the stack while the candidate runs holds them. Returns the rest of
    the input (the check seed, the parent's clock, the scratch folder and caches, ...)."""
    secret = _read_private_input()
    result_fd = _private_result_fd()
    try:  # this file as the interpreter read it, and the modules it needs, from checked bytes
        expected = _expected_hashes(secret)
        _checked_bytes("hotkernel_harness.py", expected)
        if expected is not None and _RAN_SHA256 is not None and _RAN_SHA256 != expected.get("hotkernel_harness.py"):
            raise UncheckedSource("the fork server ran hotkernel_harness.py from bytes of sha256 %s, not the binary's "
                                  "%s" % (_RAN_SHA256[:12], str(expected.get("hotkernel_harness.py"))[:12]))
        _load_defences(expected)
    except UncheckedSource as e:  # nothing of ours can be trusted to watch: one invalid line, then out
        line = json.dumps({"protocol": 3, "status": "invalid", "ok": False, "ms": 0.0, "role": args.role,
                           "reason": str(e), "trusted": True, "harness_protocol": HARNESS_PROTOCOL,
                           "nonce": secret.get("nonce")}) + "\n"
        if result_fd is None:
            sys.stdout.write(line)
            sys.stdout.flush()
        else:
            os.write(result_fd, line.encode())
        os._exit(0)
    args.no_landlock = hotkernel_sandbox.read_test_switch()
    args.fake_fraction = _fake_fraction()
    args.wait_pidfds = _wait_pidfds()
    _scrub_environment()
    install_watch(secret.pop("nonce", None), result_fd, {"main": main.__code__, "run": _run_released.__code__})
    return secret


# glibc's malloc settings (mallopt's M_TRIM_THRESHOLD, M_MMAP_MAX) for a steady heap: a freed
# block's pages stay in the process. By default glibc gives the top of its heap back to the kernel
# once 128 KiB of it is free, and serves big blocks by mmap, so whether a CPU call's output lands on
# pages already there or faults in new ones (16 of them for a 64 KiB output, ~0.5 us each on a VM)
# depends on what else happens to be alive at the top of the heap. A sample holds all its outputs
# and frees them after its window: the default trimmed them away, and the next sample's calls
# faulted every page back in. On a 2-core VM a 128x128 gelu read 0.046 ms a call faulting and 0.020
# not, for the same code: a candidate that merely kept its last outputs alive (so the top stayed
# in use) read 2x faster than its baseline, and whole verifies of identical work switched between
# the two (bench/probes/heap_probe.py). The allocator's page faults are not the kernel's time.
# Set for CPU runs only: a GPU run's timed work does not touch the heap (not measured there).
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4


def _steady_heap():
    """Keeps every freed block's pages in the process (no trim, no mmap'd blocks), so no timed call
    faults in pages a previous sample's outputs had; what was set, for the run's record."""
    try:
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return {"steady": False, "reason": "no mallopt in this C library"}
    ok = bool(mallopt(_M_TRIM_THRESHOLD, 0x7fffffff)) and bool(mallopt(_M_MMAP_MAX, 0))
    return {"steady": ok} if ok else {"steady": False, "reason": "mallopt refused"}


def run(args, inputs):
    """The run, with the parent's clock connected first and told "end" last, whatever happens."""
    try:
        release = Release(inputs.get("clock"))
    except ParentClockError as e:  # nothing outside the process would bound its times: not trusted
        return {"protocol": 3, "status": "invalid", "ok": False, "ms": 0.0, "samples_ms": [], "role": args.role,
                "trusted": True, "reason": "timer: %s" % e}
    try:
        return _run_released(args, inputs, release)
    finally:
        release.end()


def _run_released(args, inputs, release):
    t_start = time.perf_counter()
    import gc
    # A forked run starts with the fork server's ~200k objects (torch's import) unfrozen, as a fresh
    # interpreter's would be; the collection below would walk them all (~0.1 s, with copy-on-write
    # faults). They are the imports', alive for the whole run: frozen, the collection walks this run's.
    if hasattr(gc, "freeze"):
        gc.freeze()
    # The kernel sandbox (hotkernel_sandbox.py) first, while this is the process's only thread:
    # Landlock and the capabilities bind a thread and what it starts, so every thread the run
    # will have (CUDA's, CUPTI's, torch's pools; a host callback's thread the candidate could run
    # Python on) is bound too, not only the harness's.
    box = hotkernel_sandbox.apply(args.scratch, inputs.get("caches") or [], no_landlock=args.no_landlock)
    filters = hotkernel_sandbox.FilterLedger()  # the sandbox's filters, before the candidate can add one
    t_box = time.perf_counter()
    hidden_seed = inputs.pop("check_seed", None)
    if not isinstance(hidden_seed, int):
        hidden_seed = int.from_bytes(os.urandom(4), "little")
    profile_check = bool(inputs.get("profile_check"))
    sys.path.insert(0, _HERE)
    expected = _expected_hashes(inputs)
    try:
        hk = load_checked("hotkernel_contract", expected)  # the binary's copy, beside this file
    except UncheckedSource as e:
        return {"protocol": 3, "status": "invalid", "ok": False, "ms": 0.0, "role": args.role, "reason": str(e),
                "trusted": True}
    _PRECOMPILED.clear()  # the harness is loaded
    if os.path.dirname(os.path.abspath(hk.__file__)) != _HERE:
        raise RuntimeError("imported %s instead of the binary's contract in %s" % (hk.__file__, _HERE))
    sys.modules["hotkernel_contract"] = hk
    import torch
    runner_module = sys.modules[__name__]

    path = os.path.abspath(args.run)
    tpath = os.path.abspath(args.target_from) if args.target_from else path
    role = args.role
    try:
        base_dict = hk.read_target_file(tpath)
        target = hk.Target.from_dict(base_dict, os.path.dirname(tpath))
        own_dict = hk.read_target_file(path) if tpath != path else base_dict
    except (hk.TargetError, SyntaxError, OSError) as e:
        return hk.error_result({"name": None}, role, hk.StageError("target", str(e)))
    # Before any of the run's tensors exist. CPU runs only: a GPU's timed work is not on the heap.
    try:
        heap = _steady_heap() if hk.resolve_device(target.device) == "cpu" else None
    except hk.StageError:  # no GPU for a cuda target: the preparation below says so
        heap = None
    t_target = time.perf_counter()
    # Every workload's inputs and references are made now, before the candidate is imported; each
    # is then measured in turn in this one process (a workload is a shape, not a process start).
    try:
        parts = target.workload_targets()
        truns = [TrustedRun(hk, torch, sub, (hidden_seed + 7919 * i) % (1 << 32), release)
                 for i, (_, sub) in enumerate(parts)]
    except (hk.TargetError, hk.StageError) as e:
        return hk.error_result(target, role, e)
    del hidden_seed  # not a local of this frame while the candidate runs
    for i, trun in enumerate(truns):
        trun.profile_check = profile_check
        trun.filters = filters
        if i > 0 and trun.session.is_cuda:  # on a GPU the workload before it has kept it busy
            trun._warmup_min_s, trun._warmup_window_s = hk.WARMUP_MIN_NEXT_S, hk.WARMUP_WINDOW_NEXT_S
    trun = truns[0]
    t_prepared = time.perf_counter()
    steps = {}  # the seconds of each step between the inputs' preparation and the candidate's import
    sess = trun.session
    if not sess.is_cuda:  # the CPU's count of the candidate's threads takes the process's threads
        _start_intra_op_pool(torch)
    threads = ThreadWatch()
    watched = {}
    for i, tr in enumerate(truns):
        key = "run" if i == 0 else "run%d" % (i + 1)
        own = {key: tr, key + ".prims": tr.prims, key + ".session": tr.session, key + ".l2": tr.l2,
               key + ".target": tr.target}
        watched.update(own)
        if len(truns) > 1:
            tr.watched_as = frozenset(own)
    # The parent's clock's connection: its descriptor, its identity and its methods, compared at
    # every sample like the run's own state (a relay put over it: _connection_intact).
    watched.update({"release": release, "hotkernel_release.Release": type(release)})
    harness = Harness(torch, hk, runner_module,
                      [f for f in (sess.baseline_fn, sess.reference_fn, sess.derive_fn) if f is not None], watched,
                      _KNOWN_TORCH_NAMES, _NATIVE_STUBS)
    _KNOWN_TORCH_NAMES.clear()
    steps["harness"] = time.perf_counter() - t_prepared
    steps["previous_exit"] = _previous_runs_gone(getattr(args, "wait_pidfds", ()))
    steps["previous_writes"] = hotkernel_sandbox.flush_writes([args.scratch] + list(inputs.get("caches") or []))
    t_calibration = time.perf_counter()
    try:
        trun.calibrate_release(harness)  # the parent times empty samples: the fixed cost of a sample
    except (ParentClockError, OSError) as e:
        return hk.error_result(target, role, hk.StageError("timer", "the parent's clock: %s" % e))
    for tr in truns[1:]:  # one calibration serves every workload's samples
        tr.copy_steps_s, tr.handlers_before = trun.copy_steps_s, trun.handlers_before
    harness.settled()  # the calibration's figures (copy_steps_s) are part of what is compared
    steps["clock_calibration"] = time.perf_counter() - t_calibration
    refused = hotkernel_sandbox.refusal(box)
    if refused and not inputs.get("allow_unsandboxed"):
        return dict(hk.error_result(target, role, hk.StageError("sandbox", refused)), sandbox=box)
    try:
        release.importing()
    except OSError as e:
        return hk.error_result(target, role, hk.StageError("timer", "the parent's clock: %s" % e))
    gc.collect()
    t_import = time.perf_counter()
    threads.take_threads_before()  # the threads the process has now (CUPTI's, torch's): not the candidate's
    watch_print = threads.fingerprint()  # a local: the candidate reaches this frame only through a frame
    # The audit watch, armed last before the candidate's first code (after the sandbox, whose own
    # ctypes calls it would otherwise see): the harness's code, to tell its frames and calls apart.
    sys.audit("hotkernel.arm", harness_codes([hk, runner_module, sys.modules["hotkernel_defences"]]), path, role,
              target.name, library_roots(), harness)
    try:
        fn = hk.load_kernel(path)
    except hk.StageError as e:
        return hk.error_result(target, role, e)
    t_loaded = time.perf_counter()
    # Each workload's result kept as JSON text in a tuple as soon as it is made: a dict or a list
    # here could be edited in place by the candidate's code in a later workload's calls.
    results = ()
    for (name, _), tr in zip(parts, truns):
        res = tr.measure(fn, role, harness, threads, watch_print)
        _finish_workload(tr, res, args.fake_fraction)
        results += ((name, json.dumps(res, default=str)),)
        failed = res.get("status") == "error"
        del res
        if failed:
            break  # a kernel that fails one shape: the run is an error, naming it; the rest adds nothing
    results = [(name, json.loads(text)) for name, text in results]
    result = results[0][1] if not target.workloads else hk.combine_workloads(results, target)
    # Where this run's seconds went (the first CUDA call, and so the context, is in "prepare").
    phases = {"sandbox": t_box - t_start, "start": t_target - t_box, "prepare": t_prepared - t_target}
    phases.update(steps)
    phases["gc"] = t_import - t_prepared - sum(steps.values())
    phases["import_candidate"] = t_loaded - t_import
    if not target.workloads:
        phases.update(_plain(trun.phases) or {})  # plain values only (_plain), as for a workload's
    phases["in_harness"] = time.perf_counter() - t_start
    age = _process_age_s()
    if age is not None:
        phases["process_age"] = age  # since fork/exec: in_harness plus the start before the harness ran
    result["phases_s"] = {k: round(v, 4) for k, v in phases.items() if type(v) is float}
    result["seed"] = target.seed  # the target's seed; the inputs came from a hidden one
    result["check_seed"] = "hidden"
    said = [tr.new_processes for tr in truns if isinstance(tr.new_processes, str)]
    if said:
        box["new_processes"] = said[0]
    result["sandbox"] = box
    if heap is not None:
        result["heap"] = heap
    result["trusted"] = True
    diff = _target_diff(own_dict, base_dict)
    if diff:
        result["status"] = "invalid"
        result["ok"] = False
        result["reason"] = ("the candidate's TARGET differs from the baseline's: %s; the run used the baseline's "
                            "definition (inputs, seed, tolerances)" % "; ".join(diff))
    return result


def _finish_workload(trun, result, fake_fraction):
    """What the harness adds to one workload's result after its measurement: how its calls were
    checked, the host's time, the profile cross-check, its phases; and the test-only fake speedup."""
    if fake_fraction and result.get("status") == "ok":
        keep = 1.0 - fake_fraction
        result["samples_ms"] = [round(x * keep, 6) for x in result["samples_ms"]]
        ordered = sorted(result["samples_ms"])
        mid = len(ordered) // 2
        result["ms"] = ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
    if trun.target.workload_name is not None:
        phases = _plain(trun.phases)
        result["phases_s"] = ({k: round(v, 4) for k, v in phases.items() if type(v) is float} if type(phases) is dict
                              else None)
    # A GPU timer checks every held call; the CPU a share of them, picked after each sample.
    timed_calls = "every_timed_call" if trun.session.is_cuda else "sampled_timed_calls"
    result["checked"] = result.get("checked", []) + [timed_calls, "fresh_values_per_sample", "inputs_unchanged"]
    if trun.cpu_checked is not None and result.get("calls_per_sample"):
        n = int(result["calls_per_sample"])
        result["sampled_checks"] = {"calls_per_sample": n, "checked_per_sample": trun.cpu_checked,
                                    "spot_per_sample": min(SPOT_CHECKS_PER_SAMPLE, n),
                                    "spot_copies": _plain(getattr(trun, "spot_copies", None))}
    if getattr(trun, "host_ms", None) is not None:
        result["host_ms"] = _plain(trun.host_ms)
    if trun.profiled is not None:
        prof = _plain(trun.profiled)
        prof = prof if type(prof) is dict else {"error": "not a plain dict"}
        if result.get("ms") and prof.get("span_per_call_ms"):
            prof["ms_over_span"] = round(result["ms"] / prof["span_per_call_ms"], 4)
        if result.get("ms") and prof.get("busy_per_call_ms"):
            prof["ms_over_busy"] = round(result["ms"] / prof["busy_per_call_ms"], 4)
        result["profile_check"] = prof


def main(argv):
    p = argparse.ArgumentParser(prog="hotkernel_harness.py")
    p.add_argument("--run", required=True)
    p.add_argument("--role", choices=("baseline", "candidate"), default="candidate")
    p.add_argument("--target-from")
    args = p.parse_args(argv)
    inputs = _take_secrets(args)
    # The run's scratch folder, made and removed by hotkernel; run by hand, one of our own.
    args.scratch = inputs.get("scratch") or _own_scratch()
    hotkernel_sandbox.point_temp_at(args.scratch)
    dumps = json.dumps
    try:
        result = run(args, inputs)
    except BaseException as e:  # a harness bug: still one line, and the traceback on stderr
        traceback.print_exc()
        result = {"protocol": 3, "status": "error", "ok": False, "ms": None, "role": args.role,
                  "reason": "internal: %s: %s" % (type(e).__name__, e)}
    result["harness_protocol"] = HARNESS_PROTOCOL
    if result.get("status") == "error":
        sys.stderr.write("hotkernel: %s\n" % result.get("reason"))
    # The audit hook adds what it saw, the nonce, and writes the line (to stdout when run by hand).
    sys.audit("hotkernel.result", dumps(_finite(result), allow_nan=False, default=str))
    sys.stdout.flush()
    sys.stderr.flush()
    # Every pipe closed, then the exit: a fork server answers at the close and starts the next run
    # while this exit tears down the CUDA context (~0.1 s on an H200). hotkernel judges the run by
    # the line alone (run_failed, src/measure/measure.h); the exit status is for a person running
    # this file by hand: 0 when the line is a measurement's result, even one that voids the run.
    code = 0 if result.get("status") in ("ok", "incorrect", "invalid") else 1
    _close_outputs()
    if not inputs.get("scratch"):  # by hand: what the run left (the folder goes at the next)
        import shutil
        for name in os.listdir(args.scratch):
            p = os.path.join(args.scratch, name)
            try:
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
            except OSError:
                pass
    # os._exit: no atexit hook or finaliser from the candidate runs after the result.
    os._exit(code)



def _own_scratch():
    """A scratch folder for a run started by hand, under <tmp>/hotkernel-by-hand: the sandboxed
    run can empty it but not remove it, so folders of runs that are gone are removed here."""
    import shutil
    import tempfile
    parent = os.path.join(tempfile.gettempdir(), "hotkernel-by-hand-%d" % os.getuid())
    os.makedirs(parent, mode=0o700, exist_ok=True)
    for name in os.listdir(parent):
        pid = name.split("-", 1)[0]
        if pid.isdigit() and not os.path.exists("/proc/%s" % pid):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
    return tempfile.mkdtemp(prefix="%d-" % os.getpid(), dir=parent)


def _close_outputs():
    try:  # the result fd is closed by the audit hook that wrote it
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
    except OSError:
        pass


def _same_digest(a, b):
    """Whether two digests (_digest's lists) agree, a NaN sum (an output with a NaN, for the check
    to report) agreeing with a NaN."""
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


def _finite(v):
    # The contract has its twin: each file stands alone (the contract is vendored beside targets,
    # and the harness writes its line even when the contract could not be loaded).
    import math
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


if __name__ == "__main__":
    main(sys.argv[1:])
