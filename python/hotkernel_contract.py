"""hotkernel target contract, protocol 3: inputs, fp32 reference, check, rotation and timer.

A target script (written by `hotkernel new`) holds a literal TARGET dict and a `kernel`
function, and its __main__ is one call: `hotkernel_contract.main(TARGET, kernel, role=...)`.
Everything else lives here, as a library an outside harness can drive:

    target  = Target.from_dict(TARGET, base_dir)        # validated definition
    session = prepare(target)                            # inputs, reference, timer: before
    result  = session.measure(fn, role="candidate")      #   the candidate is even imported
    result  = measure(target, fn)                        # both steps at once

`python hotkernel_contract.py --run x_candidate.py --role candidate` does the same for a file:
it reads TARGET from the file's text (ast, no import), prepares everything, and only then
imports the file to get `kernel`. With HOTKERNEL_RESULT_FD (and HOTKERNEL_NONCE) set, the
result line goes to that inherited descriptor instead of stdout.

Profile mode (HOTKERNEL_PROFILE=1, or profile_file): a few calls of `kernel` in NVTX ranges and
torch.profiler labels, without reference, check or timer, for torch_profile, ncu and nsys.

Result line (one JSON object): protocol, target, role, status, ok, reason, ms, samples_ms,
timer, iters, calls_per_sample, seed, rotate_k, shapes, dtype, device, error{max_abs, rel,
atol, rtol, scale, tol_used}, checked, roofline_inputs{flops, bytes, dtype}, versions{python, torch,
triton}, plus gpu, cache_bytes, warmup_s, contract_sha256 (and nonce with a result fd).

Importing this module touches no CUDA (a fork server imports it before forking children).
Pure stdlib + torch; triton is never imported here.
"""
import builtins as _shared_builtins
__builtins__ = dict(vars(_shared_builtins))  # this module's own builtins (hotkernel_defences.own_builtins says why)

PROTOCOL = 3

import ast
import hashlib
import importlib
import importlib.util
import json
import math
import os
import platform
import re
import statistics
import sys
import time
import traceback

import torch

# ---------------------------------------------------------------------------------------------
# Constants (each one is reported or documented; nothing here adapts per run)
# ---------------------------------------------------------------------------------------------

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}

# (rtol, atol as a multiple of the reference's RMS). Elementwise: |out-ref| <= atol + rtol*|ref|.
# Scaling atol by the output's magnitude makes an all-zeros output fail for any non-zero
# reference (its largest element exceeds atol), whatever the units of the output.
TOLERANCES = {"bf16": (1.6e-2, 1.6e-2), "fp16": (2e-3, 2e-3), "fp32": (1e-4, 1e-4)}

# Used only when the device does not report its L2 (torch < 2.1 on CUDA; every CPU without
# /sys cache info). 50 MiB is the L2 of an H100; a larger guess only costs memory.
L2_FALLBACK_BYTES = 50 << 20
CPU_CACHE_FALLBACK_BYTES = 32 << 20

# Rotation: each rotated input set is revisited only after ROTATE_FACTOR x cache bytes of
# other sets went through, so every timed call reads from DRAM, not from L2.
ROTATE_FACTOR = 3
# On a CPU the cache is the last-level one from sysfs, and the harness writes fresh values
# into every set right before each sample, so between a set's write and its call pass the other
# K - 1 sets' writes and calls: (K - 1) x bytes per call, ~1.25-1.5 x the cache at this factor.
# A CPU sample's every set costs a fresh draw (~7.5 ns an element) and a call, and on a 2-core
# machine a call of the bundled bf16 RMSNorm (8 MiB a call) and a memory-bound fp32 add read
# the same from 2 to 12 sets (bench/probes/cpu_rotation_probe.py, bench/runs/2026-12-01-cpu-rotation).
CPU_ROTATE_FACTOR = 1.5
MAX_ROTATE_K = 256
# No set repeats within a sample: every call of a sample gets rotated inputs of its own, so a
# kernel that keys results by input address or values (and hands out copies on a repeat) never
# gets a hit while the clock runs. The sets a sample needs must fit in SETS_BUDGET_BYTES (at most
# 1/SETS_BUDGET_SHARE of the device's memory); where they do not, a sample has fewer calls. Every
# call's output is checked on two replays, so each set costs a reference and a check there: on an
# H200 4 GiB (64 calls of a 64 MiB gelu) took checked replays from 0.035 to 0.19 s a run
# (bench/runs/2026-11-30-h200-rotation-budget); 1 GiB gives that gelu 16 calls a sample (0.7 ms).
# A longer sample tightens the parent's clock's bound (docs/trust.md, "How tight the bound is"):
# HOTKERNEL_SETS_BYTES raises the budget where that is worth the time.
SETS_BUDGET_BYTES = 1 << 30
SETS_BUDGET_SHARE = 16
# On a GPU a sample of calls that fit SETS_BUDGET_BYTES can be short: the 1 GiB holds 4 calls of a
# 256 MiB gelu, 0.76 ms, and the parent's clock then leaves a fake of 10% through most of the
# time (docs/trust.md, "How tight the bound is"). Once the warm-up has timed a call, a GPU sample
# grows toward REPLAY_BUDGET_S of calls (calls_for), one set a call, within GPU_SETS_BUDGET_BYTES
# a run (at most 1/SETS_BUDGET_SHARE of the device's memory), which a run's workloads share: the
# checked replays cost each set a reference and a check, so a run's checks grow with the bytes of
# its sets, not with its shapes. At most GROW_MAX_CALLS calls: a tiny kernel's bound is set by the
# gap allowed a graph node, which a longer sample does not tighten.
GPU_SETS_BUDGET_BYTES = 8 << 30
GROW_MAX_CALLS = 256
# A CPU's sample grows too, within its sets budget: what an honest CPU sample leaves unexplained is
# a fixed part (0.4 ms of allowance) and ~1.1 us a call of the loop between calls, so a default
# sample of 100 calls of a 22 us gelu (2.2 ms) let a report 10% short through every time, one of
# 448 calls (~10 ms) caught it 7 times in 10 (bench/runs/2026-12-06-cpu-grown-samples). A CPU call
# is rarely as short as a GPU kernel's few microseconds, so its cap is higher.
CPU_GROW_MAX_CALLS = 1024

# Warm-up "auto": at least WARMUP_MIN_S, then until the median pass time of the last window
# matches the window before it within WARMUP_STEADY (clocks ramping, caches filling, lazy
# compilation and cudagraph recording all show as a drift), at most WARMUP_MAX_S. The floor is
# measured on an H200 (bench/runs/2026-11-30-h200-*): a 45 us gelu is steady from the first
# replay on a GPU busy within the last seconds (as in a bench/verify, runs back to back), A/A
# verifies with 0.2 s stayed inconclusive, and a 0.5 GB/call gelu moves +-3% between back-to-back
# half-second blocks whatever the warm-up (fidelity_probe); each 0.1 s here costs 0.2 s a pair.
# Since the harness ramps right before its samples (RAMP_S), 0.1 s did as well as 0.25 s: 16 runs
# of a 0.5 ms gelu spread 0.65%/0.57% against 0.60%/0.51%, at the same level, and a 45 us one
# 0.95% against 0.85% (bench/runs/2026-11-30-h200-warmup-floor), 0.2 s a run sooner.
# triton's 25 ms warm-up was 30% off on a cold GPU (triton#2306): the window test catches that.
WARMUP_MIN_S = 0.1
WARMUP_MAX_S = 1.0
# On a CPU nothing ramps like a GPU's clocks, and the medians of the windows move by more than
# WARMUP_STEADY with the scheduler alone, so the steady test rarely passes there and the warm-up
# ran to its cap: 1 s a workload of every run. After the first call a CPU's warm-up is its caches
# and branch predictors, warm within a few passes.
WARMUP_MAX_S_CPU = 0.3
# A workload after the first of a run follows the one before it on a GPU already busy, whose
# clocks are up (a 45 us gelu is steady from its first replay on a GPU busy within the last
# seconds, above): its warm-up asks the same steady test over windows of WARMUP_WINDOW_NEXT_S
# after WARMUP_MIN_NEXT_S, not 0.1 s, so each further shape costs its samples, not another 0.1 s.
WARMUP_MIN_NEXT_S = 0.02
WARMUP_WINDOW_NEXT_S = 0.01
WARMUP_WINDOW_S = 0.05
WARMUP_STEADY = 0.005

# A sample of long calls is cut to about REPLAY_BUDGET_S of calls (whole passes over the K sets,
# at least one): a 0.5 ms call needs ~20 calls a sample, not 100, to be far above the events'
# resolution and the graph's launch, and a run of it saves ~0.4 s. Calls shorter than
# REPLAY_BUDGET_S / iters grow toward it, as far as the sets' budget (grow_budget) and the cap
# on calls (GROW_MAX_CALLS, CPU_GROW_MAX_CALLS) let them.
REPLAY_BUDGET_S = 0.01
# A CPU's samples are twice as long: its allowance has a fixed 0.4 ms and 5% of the window, and a
# report 10% short adds ~2.2 us a call of a 22 us gelu where an honest call leaves ~1.5 us
# unexplained, so the fake clears the fixed part by more than the honest runs' spread only over
# many hundred calls (bench/runs/2026-12-06-cpu-grown-samples).
CPU_REPLAY_BUDGET_S = 0.02
# Before each timed graph replay a spin of this many SM cycles (~25 us) is queued, so the start
# event fires when the spin ends with the replay already queued behind it: an idle GPU would
# otherwise count the host's launch latency into the sample (nvbench's blocking kernel).
START_SPIN_CYCLES = 50000
# A GPU left idle for a few milliseconds (graph capture, the host side of a checked replay) runs
# the next replays slow until it has been busy again for ~10-20 ms: on an H200 the first samples
# of a ~0.5 ms gelu after capture read 2-4% over the rest of the run, and 10 ms of rest before
# every sample put every sample 2% (0.5 ms gelu) to 18% (45 us gelu) over
# (bench/runs/2026-11-30-h200-{drift,ramp}: drift_probe --runs, samples_ms). So the trusted
# harness's samples follow RAMP_S of untimed back-to-back replays of the timed graph, after capture
# (its checked replays are checked after the samples, so nothing else idles the GPU between them);
# time_cuda_graph below, the self-reported timer, after capture.
RAMP_S = 0.03

DEFAULTS = {"seed": 0, "iters": 100, "samples": 10, "warmup_s": "auto", "timer": "auto",
            "device": "auto", "dtype": "bf16"}
TIMERS = ("auto", "cupti", "cuda_graph", "cuda_events", "cpu")

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class TargetError(ValueError):
    """A target definition that cannot work (bad shape, unknown input name, ...)."""


class StageError(RuntimeError):
    """A failure in one stage of a run, raised with the stage name for the result's reason."""

    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


# ---------------------------------------------------------------------------------------------
# Target definition
# ---------------------------------------------------------------------------------------------

def parse_shape(text):
    """'4096x8192' (or [4096, 8192], or 8192) -> (4096, 8192). Raises TargetError."""
    if isinstance(text, int) and not isinstance(text, bool):
        dims = [text]
    elif isinstance(text, (list, tuple)):
        dims = list(text)
    elif isinstance(text, str):
        parts = text.strip().lower().split("x")
        try:
            dims = [int(p.strip()) for p in parts]
        except ValueError:
            raise TargetError("shape %r is not a list of sizes joined by 'x'; write it like '4096x8192'" % (text,))
    else:
        raise TargetError("shape %r must be a string like '4096x8192' or a list of ints" % (text,))
    if not dims or any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in dims):
        raise TargetError("shape %r must have positive integer sizes, like '4096x8192'" % (text,))
    return tuple(dims)


def parse_extra(extra):
    """{'w': [8192]} or ['w:8192', 'b:8192'] -> [('w', (8192,)), ('b', (8192,))] in call order."""
    if not extra:
        return []
    items = []
    if isinstance(extra, dict):
        items = [(k, parse_shape(v)) for k, v in extra.items()]
    else:
        for e in extra:
            if not isinstance(e, str) or ":" not in e:
                raise TargetError("extra input %r must be 'name:shape', like 'w:8192'" % (e,))
            name, shape = e.split(":", 1)
            items.append((name.strip(), parse_shape(shape)))
    seen = {"x"}
    for name, _ in items:
        if not _NAME_RE.match(name):
            raise TargetError("extra input name %r is not a Python identifier" % (name,))
        if name in seen:
            raise TargetError("extra input name %r is used twice (x is the primary input)" % (name,))
        seen.add(name)
    return items


def split_spec(spec):
    """'pkg.mod:fn' or './file.py:fn' -> (module_or_path, attribute). Raises TargetError."""
    if not isinstance(spec, str) or ":" not in spec:
        raise TargetError("%r is not 'module:function' or './file.py:function'" % (spec,))
    mod, attr = spec.rsplit(":", 1)
    mod, attr = mod.strip(), attr.strip()
    if not mod or not attr or not all(_NAME_RE.match(a) for a in attr.split(".")):
        raise TargetError("%r is not 'module:function' or './file.py:function'" % (spec,))
    return mod, attr


def is_file_spec(mod):
    return mod.endswith(".py") or "/" in mod or os.sep in mod


def load_callable(spec, base_dir=None):
    """Imports 'pkg.mod:fn' or loads 'file.py:fn' (relative to base_dir, a folder or a script's
    __file__) and returns the callable.

    Raises StageError('import'|'function') with a message that says what to fix.
    """
    mod_name, attr = split_spec(spec)
    if base_dir and os.path.isfile(base_dir):
        base_dir = os.path.dirname(os.path.abspath(base_dir))  # given a script's __file__
    if is_file_spec(mod_name):
        path = mod_name if os.path.isabs(mod_name) else os.path.join(base_dir or os.getcwd(), mod_name)
        path = os.path.normpath(path)
        if not os.path.isfile(path):
            raise StageError("import", "file %s (from %r) does not exist" % (path, spec))
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # so the file can import its siblings
        unique = "_hk_%s_%s" % (re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]),
                                hashlib.sha256(path.encode()).hexdigest()[:8])
        module = sys.modules.get(unique)
        if module is None:
            try:
                loader_spec = importlib.util.spec_from_file_location(unique, path)
                module = importlib.util.module_from_spec(loader_spec)
                sys.modules[unique] = module
                loader_spec.loader.exec_module(module)
            except BaseException as e:
                sys.modules.pop(unique, None)
                raise StageError("import", "importing %s failed: %s: %s" % (path, type(e).__name__, e))
    else:
        if base_dir and base_dir not in sys.path:
            sys.path.append(base_dir)
        try:
            module = importlib.import_module(mod_name)
        except BaseException as e:
            raise StageError("import", "cannot import module %r: %s: %s" % (mod_name, type(e).__name__, e))
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n, None))]
            close = _close_matches(part, names)
            hint = ("; did you mean %s?" % ", ".join(close)) if close else ""
            raise StageError("function", "%s has no function %r%s" % (mod_name, attr, hint))
        obj = getattr(obj, part)
    if not callable(obj):
        raise StageError("function", "%s:%s is a %s, not a function" % (mod_name, attr, type(obj).__name__))
    return obj


def _close_matches(word, names):
    import difflib
    return difflib.get_close_matches(word, names, n=3, cutoff=0.6)


class Target:
    """A validated target definition. Build it with Target.from_dict(TARGET, base_dir).

    base_dir resolves './file.py:fn' specs (the folder of the target script).
    """

    FIELDS = ("name", "from", "shape", "extra", "rotate", "derive", "inputs", "reference", "flops",
              "min_bytes", "dtype", "device", "seed", "iters", "samples", "warmup_s", "timer",
              "rtol", "atol", "workloads")

    def __init__(self, d, base_dir=None):
        unknown = sorted(set(d) - set(self.FIELDS))
        if unknown:
            raise TargetError("unknown TARGET field(s) %s; known: %s" % (", ".join(unknown), ", ".join(self.FIELDS)))
        self.raw = dict(d)
        self.base_dir = base_dir
        self.name = str(d.get("name") or "")
        self.fn_spec = d.get("from")
        if not self.name or not re.match(r"^[A-Za-z0-9_.-]+$", self.name):
            raise TargetError("TARGET name %r must be letters, digits, '_', '.' or '-'" % (self.name,))
        if self.fn_spec is not None:
            split_spec(self.fn_spec)
        # With workloads, shape/extra/flops/min_bytes are written in the dims' names ("MxK",
        # "2*M*K") and each workload binds them; this Target is then the first workload's.
        self.workloads = parse_workloads(d)
        if self.workloads:
            d = dict(d, **self.workloads[0]["fields"])
        self.workload_name = self.workloads[0]["name"] if self.workloads else None
        # The workloads of the run this shape is part of, which share a GPU's sets budget (grow_budget).
        self.workload_count = max(1, len(self.workloads))
        self.shape = parse_shape(d.get("shape"))
        self.extra = parse_extra(d.get("extra"))
        self.raw_names = ["x"] + [n for n, _ in self.extra]
        self.rotate = list(d.get("rotate", ["x"]) or [])
        for r in self.rotate:
            if r not in self.raw_names:
                raise TargetError("rotate names %r, which is not an input (inputs: %s)" % (r, ", ".join(self.raw_names)))
        self.derive = d.get("derive")
        self.reference = d.get("reference")
        inputs = d.get("inputs")
        if isinstance(inputs, str):
            inputs = [s.strip() for s in inputs.split(",") if s.strip()]
        self.inputs = list(inputs) if inputs else None
        if self.derive is not None:
            split_spec(self.derive)
            if self.reference is None:
                raise TargetError("derive needs a reference: the derived inputs (e.g. an int8 weight) cannot simply be "
                                  "upcast to fp32, so pass reference='module:function' doing its own fp32 math")
            if not self.inputs:
                raise TargetError("derive needs inputs: the names it returns, in call order, e.g. 'x,w_q,scales'")
            for n in self.inputs:
                if not _NAME_RE.match(n):
                    raise TargetError("input name %r is not a Python identifier" % (n,))
            if len(set(self.inputs)) != len(self.inputs):
                raise TargetError("inputs %r repeats a name" % (self.inputs,))
        elif self.inputs is not None and list(self.inputs) != self.raw_names:
            raise TargetError("inputs %r is only for derive (without derive the call takes %s)"
                              % (self.inputs, ", ".join(self.raw_names)))
        if self.reference is not None:
            split_spec(self.reference)
        self.call_names = list(self.inputs) if self.derive else list(self.raw_names)
        self.dtype_name = d.get("dtype", DEFAULTS["dtype"])
        if self.dtype_name not in DTYPES:
            raise TargetError("dtype %r is not one of %s" % (self.dtype_name, ", ".join(DTYPES)))
        self.dtype = DTYPES[self.dtype_name]
        self.device = d.get("device", DEFAULTS["device"])
        if self.device not in ("auto", "cuda", "cpu") and not str(self.device).startswith("cuda:"):
            raise TargetError("device %r is not auto, cuda or cpu" % (self.device,))
        self.seed = _int_field(d, "seed", DEFAULTS["seed"], 0)
        self.iters = _int_field(d, "iters", DEFAULTS["iters"], 1)
        self.samples = _int_field(d, "samples", DEFAULTS["samples"], 1)
        self.warmup_s = d.get("warmup_s", DEFAULTS["warmup_s"])
        if self.warmup_s != "auto":
            try:
                self.warmup_s = float(self.warmup_s)
            except (TypeError, ValueError):
                raise TargetError("warmup_s %r is not a number of seconds or \"auto\"" % (self.warmup_s,))
            if not (0 <= self.warmup_s <= 600):
                raise TargetError("warmup_s %r is outside 0..600 s" % (self.warmup_s,))
        self.timer = d.get("timer", DEFAULTS["timer"])
        if self.timer not in TIMERS:
            raise TargetError("timer %r is not one of %s" % (self.timer, ", ".join(TIMERS)))
        self.flops = d.get("flops")
        if isinstance(self.flops, str):  # an expression of constants ("2*512*4096*4096")
            self.flops = eval_dims_expr(self.flops, {}, "flops")
        self.min_bytes = d.get("min_bytes")
        if isinstance(self.min_bytes, str):
            self.min_bytes = eval_dims_expr(self.min_bytes, {}, "min_bytes")
        if self.flops is not None and (not isinstance(self.flops, (int, float)) or isinstance(self.flops, bool)
                                       or not math.isfinite(self.flops) or self.flops < 0):
            raise TargetError("flops %r must be a non-negative number (flops one call does)" % (self.flops,))
        if self.min_bytes is not None and (not isinstance(self.min_bytes, int) or self.min_bytes < 1):
            raise TargetError("min_bytes %r must be a positive integer (bytes one call reads)" % (self.min_bytes,))
        rtol, atol = TOLERANCES[self.dtype_name]
        self.rtol = float(d["rtol"]) if d.get("rtol") is not None else rtol
        self.atol = float(d["atol"]) if d.get("atol") is not None else atol

    @classmethod
    def from_dict(cls, d, base_dir=None):
        if isinstance(d, Target):
            return d
        if not isinstance(d, dict):
            raise TargetError("TARGET must be a dict, got %s" % type(d).__name__)
        return cls(d, base_dir)

    def to_dict(self):
        return dict(self.raw)

    def workload_targets(self):
        """[(name, Target)] of each workload, each a one-shape Target; [(None, self)] without workloads."""
        if not self.workloads:
            return [(None, self)]
        out = []
        for w in self.workloads:
            d = {k: v for k, v in self.raw.items() if k != "workloads"}
            d.update(w["fields"])
            sub = Target(d, self.base_dir)
            sub.workload_name, sub.weight = w["name"], w["weight"]
            sub.workload_count = self.workload_count
            out.append((w["name"], sub))
        return out


# ---------------------------------------------------------------------------------------------
# Workloads: one target, several shapes
# ---------------------------------------------------------------------------------------------

# The arithmetic an expression of the dims may use ("2*M*N*K", "(M+N)*K*2"): nothing else, so a
# TARGET stays a literal that no code runs.
_EXPR_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
             ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b,
             ast.Mod: lambda a, b: a % b}


def eval_dims_expr(text, dims, what):
    """'2*M*N*K' with dims {'M': 16, ...} -> 262144 (int when integral). Raises TargetError."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return text
    if not isinstance(text, str) or len(text) > 200:
        raise TargetError("%s %r must be a number or an expression of the dims, like '2*M*N*K'" % (what, text))
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise TargetError("%s %r is not an arithmetic expression of the dims, like '2*M*N*K'" % (what, text))

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in dims:
                raise TargetError("%s %r uses %r, which is not a dim (dims: %s)"
                                  % (what, text, node.id, ", ".join(dims) or "none"))
            return dims[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _EXPR_OPS:
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Pow) and abs(b) > 64:
                raise TargetError("%s %r raises to a power over 64" % (what, text))
            try:
                return _EXPR_OPS[type(node.op)](a, b)
            except ZeroDivisionError:
                raise TargetError("%s %r divides by zero" % (what, text))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        raise TargetError("%s %r may use only numbers, the dims and + - * / // %% **" % (what, text))

    v = ev(tree)
    if isinstance(v, float) and v.is_integer() and abs(v) < 2 ** 53:
        v = int(v)
    return v


def _dims_shape(shape, dims, what):
    """'MxK' / ['M', 4096] / 'Mx4096' with dims bound -> [16, 4096]."""
    if isinstance(shape, str):
        parts = [p.strip() for p in shape.strip().split("x")]
    elif isinstance(shape, (list, tuple)):
        parts = list(shape)
    else:
        parts = [shape]
    out = []
    for p in parts:
        if isinstance(p, str) and not p.isdigit():
            if p not in dims:
                raise TargetError("%s %r names %r, which is not a dim (dims: %s)" % (what, shape, p, ", ".join(dims)))
            out.append(dims[p])
        else:
            out.append(int(p) if isinstance(p, str) else p)
    return out


def workload_name(dims, varying):
    """'M=16' (the dims that differ between workloads), or 'M=16,K=4096' when none differ."""
    keys = [k for k in dims if k in varying] or list(dims)
    return ",".join("%s=%s" % (k, dims[k]) for k in keys)


def parse_workloads(d):
    """TARGET["workloads"] -> [{name, dims, weight, fields: {shape, extra, flops, min_bytes}}], [] without."""
    ws = d.get("workloads")
    if ws is None:
        return []
    if not isinstance(ws, (list, tuple)) or not ws:
        raise TargetError("workloads must be a non-empty list of dicts of dim values, like [{'M': 16, 'K': 4096}]")
    if len(ws) > 64:
        raise TargetError("workloads lists %d shapes; at most 64 a target" % len(ws))
    names = None
    bound = []
    for i, w in enumerate(ws):
        if not isinstance(w, dict) or not w:
            raise TargetError("workload %d is %r, not a dict of dim values like {'M': 16, 'K': 4096}" % (i + 1, w))
        dims = {k: v for k, v in w.items() if k != "weight"}
        for k, v in dims.items():
            if not isinstance(k, str) or not _NAME_RE.match(k):
                raise TargetError("workload %d: dim name %r is not an identifier" % (i + 1, k))
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise TargetError("workload %d: dim %s=%r must be a positive integer" % (i + 1, k, v))
        if names is None:
            names = list(dims)
        elif set(dims) != set(names):
            raise TargetError("workload %d names dims %s, the first names %s; every workload binds the same dims"
                              % (i + 1, ", ".join(dims), ", ".join(names)))
        weight = w.get("weight", 1)
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not (0 < weight < 1e9):
            raise TargetError("workload %d: weight %r must be a positive number" % (i + 1, weight))
        bound.append((dict((k, dims[k]) for k in names), weight))
    varying = {k for k in names if len({b[0][k] for b in bound}) > 1}
    out, seen = [], set()
    for dims, weight in bound:
        extra = d.get("extra") or {}
        if not isinstance(extra, dict):
            raise TargetError("with workloads, extra must be a dict of name -> shape in the dims, like {'w': 'K'}")
        fields = {
            "shape": _dims_shape(d.get("shape"), dims, "shape"),
            "extra": {k: _dims_shape(v, dims, "extra %s" % k) for k, v in extra.items()},
            "flops": None if d.get("flops") is None else eval_dims_expr(d["flops"], dims, "flops"),
            "min_bytes": None if d.get("min_bytes") is None else eval_dims_expr(d["min_bytes"], dims, "min_bytes"),
        }
        name = workload_name(dims, varying)
        if name in seen:
            raise TargetError("workload %s is listed twice" % name)
        seen.add(name)
        out.append({"name": name, "dims": dims, "weight": weight, "fields": fields})
    return out


def _int_field(d, key, default, minimum):
    v = d.get(key, default)
    if v is None:
        v = default
    if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
        raise TargetError("%s %r must be an integer >= %d" % (key, v, minimum))
    return v


def read_target_file(path):
    """The literal TARGET dict of a target script, read from its text without importing it."""
    with open(path, "r", encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGET" for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                raise TargetError("%s: TARGET must be a literal dict (no names or calls in it)" % path)
    raise TargetError("%s has no top-level `TARGET = {...}`; is it a protocol-3 target script?" % path)


# ---------------------------------------------------------------------------------------------
# Device and rotation depth
# ---------------------------------------------------------------------------------------------

def resolve_device(device):
    """'auto' -> 'cuda' when torch sees a GPU, else 'cpu'. This is the first CUDA call of a run."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise StageError("device", "device %r was asked for but torch %s sees no CUDA GPU; use device='cpu' or 'auto'"
                         % (device, torch.__version__))
    return device


def cache_bytes(device):
    """(bytes, source): the last-level cache that rotation must defeat, queried where possible.

    HOTKERNEL_CACHE_BYTES overrides (tests; hand-tuning). CUDA: the device's L2_cache_size
    (torch >= 2.1), else L2_FALLBACK_BYTES. CPU: the largest cache in sysfs, else 32 MiB.
    """
    env = os.environ.get("HOTKERNEL_CACHE_BYTES")
    if env:
        return int(env), "HOTKERNEL_CACHE_BYTES"
    if str(device).startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(device))
        l2 = getattr(props, "L2_cache_size", None)
        if l2:
            return int(l2), "device L2_cache_size"
        return L2_FALLBACK_BYTES, "fallback (device does not report L2)"
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(base):
            try:
                with open(os.path.join(base, entry, "size")) as f:
                    text = f.read().strip().upper()
                mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
                best = max(best, int(text.rstrip("KMG")) * mult)
            except (OSError, ValueError):
                continue
    except OSError:
        pass
    if best:
        return best, "sysfs cpu cache"
    return CPU_CACHE_FALLBACK_BYTES, "fallback (no cpu cache info)"


def rotate_factor(device):
    """ROTATE_FACTOR on a GPU, CPU_ROTATE_FACTOR on the CPU."""
    return ROTATE_FACTOR if str(device).startswith("cuda") else CPU_ROTATE_FACTOR


def rotation_k(bytes_per_call, cache, rotate=True, factor=ROTATE_FACTOR, max_k=MAX_ROTATE_K):
    """How many input copies to cycle through so each call's inputs come from DRAM.

    K = clamp(ceil(factor * cache / bytes_per_call), 2, max_k); 1 when nothing rotates.
    K >= 2 also means no two consecutive calls see the same tensors.
    """
    if not rotate:
        return 1
    if bytes_per_call <= 0:
        return max_k
    return int(min(max_k, max(2, math.ceil(factor * cache / float(bytes_per_call)))))


def _said_sets_bytes():
    """HOTKERNEL_SETS_BYTES as a positive int, else 0."""
    try:
        return max(0, int(os.environ.get("HOTKERNEL_SETS_BYTES") or 0))
    except ValueError:
        return 0


def _device_bytes(device):
    """The device's memory (GPU) or RAM (CPU), in bytes; None when it cannot be read."""
    try:
        if str(device).startswith("cuda"):
            return torch.cuda.get_device_properties(torch.device(device)).total_memory
        if hasattr(os, "sysconf"):
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except Exception:  # no such device (a CPU build's torch.cuda asserts): the default applies
        pass
    return None


def sets_budget(device):
    """Bytes the rotated input sets of one sample may take before the warm-up: SETS_BUDGET_BYTES,
    or a 1/SETS_BUDGET_SHARE of the device's memory (GPU) or of RAM (CPU) when that is less.
    HOTKERNEL_SETS_BYTES overrides (probes of a longer sample; hand-tuning)."""
    said = _said_sets_bytes()
    if said:
        return said
    total = _device_bytes(device)
    if not total or total <= 0:
        return SETS_BUDGET_BYTES
    return int(min(SETS_BUDGET_BYTES, total // SETS_BUDGET_SHARE))


def grow_budget(device, workloads=1):
    """Bytes a sample's sets may grow to once a call is timed (calls_for): on a GPU
    GPU_SETS_BUDGET_BYTES (at most 1/SETS_BUDGET_SHARE of its memory) shared by the run's
    `workloads`, never less than sets_budget; on a CPU sets_budget (the plan's budget).
    HOTKERNEL_SETS_BYTES fixes both."""
    plan = sets_budget(device)
    if _said_sets_bytes() or not str(device).startswith("cuda"):
        return plan
    total = _device_bytes(device)
    cap = GPU_SETS_BUDGET_BYTES if not total or total <= 0 else min(GPU_SETS_BUDGET_BYTES, total // SETS_BUDGET_SHARE)
    return int(max(plan, cap // max(1, int(workloads))))


def most_calls(calls, iters, set_bytes, budget, rotate=True, cap=GROW_MAX_CALLS):
    """The most calls a sample may grow to (calls_for): one set a call within `budget` bytes, at
    most max(iters, cap) (GROW_MAX_CALLS on a GPU, CPU_GROW_MAX_CALLS on a CPU), never fewer than
    the planned `calls`. Pure."""
    if not rotate or set_bytes <= 0:
        return calls
    return max(calls, min(max(iters, cap), int(budget // set_bytes)))


def plan_calls(iters, k_cache, set_bytes, budget, rotate=True):
    """Calls per sample: with rotation each call gets a set of its own, so at least `iters` and
    `k_cache` calls (the sets that keep caches cold), fewer than `iters` only where the sets
    would not fit in `budget` bytes. Without rotation (one set): `iters`. Pure."""
    if not rotate:
        return max(1, iters)
    fit = int(budget // set_bytes) if set_bytes > 0 else max(iters, k_cache)
    return max(k_cache, min(max(iters, k_cache), fit))


def tensor_bytes(t):
    return t.numel() * t.element_size()


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def seeded_generator(device, seed):
    g = torch.Generator(device=torch.device(device).type if str(device).startswith("cuda") else "cpu")
    g.manual_seed(int(seed))
    return g


def _draw(shape, dtype, device, gen):
    # Drawn in fp32 then cast, so a bf16 and an fp32 target with one seed see the same values.
    return torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(dtype)


def make_raw_inputs(target, gen, device, shared=None):
    """One raw set {name: tensor}; names in `shared` are reused as given (not redrawn)."""
    raw = {}
    for name, shape in [("x", target.shape)] + target.extra:
        if shared is not None and name in shared:
            raw[name] = shared[name]
        else:
            raw[name] = _draw(shape, target.dtype, device, gen)
    return raw


def derive_inputs(target, raw, derive_fn):
    """Raw random tensors -> the call's inputs, in call order (target.call_names)."""
    if derive_fn is None:
        return [raw[n] for n in target.raw_names]
    try:
        out = derive_fn(dict(raw))
    except BaseException as e:
        raise StageError("derive", "derive %s raised %s: %s" % (target.derive, type(e).__name__, e))
    if not isinstance(out, dict):
        raise StageError("derive", "derive %s must return a dict {name: tensor}, got %s" % (target.derive, type(out).__name__))
    if list(out.keys()) != list(target.call_names):
        raise StageError("derive", "derive %s returned names %s but inputs says %s (same names, same order)"
                         % (target.derive, list(out.keys()), list(target.call_names)))
    return [out[n] for n in target.call_names]


def make_inputs(target, seed=None, device=None, derive_fn=None):
    """The check input set for this seed, in call order (what the tests compare across runs)."""
    target = Target.from_dict(target)
    device = resolve_device(device or target.device)
    if target.derive and derive_fn is None:
        derive_fn = load_callable(target.derive, target.base_dir)
    gen = seeded_generator(device, target.seed if seed is None else seed)
    return derive_inputs(target, make_raw_inputs(target, gen, device), derive_fn)


def make_input_sets(target, seed, device, k, derive_fn=None):
    """(check_set, timed_sets): fresh draws for the check, then k timed sets, from one seed.

    Rotated inputs are redrawn for every timed set; the others are drawn once and shared.
    """
    gen = seeded_generator(device, seed)
    check_set = derive_inputs(target, make_raw_inputs(target, gen, device), derive_fn)
    return check_set, make_timed_sets(target, gen, device, k, derive_fn)


def make_timed_sets(target, gen, device, k, derive_fn=None):
    """k timed sets drawn from `gen` (continuing after the check set)."""
    return draw_sets(target, gen, device, k, derive_fn)[0]


def draw_sets(target, gen, device, k, derive_fn=None, shared=None):
    """(k sets, shared): the non-rotated raw inputs are drawn with the first set (or taken from
    `shared`, to add sets to earlier ones) and the same tensors go into every set."""
    timed = []
    for _ in range(k):
        raw = make_raw_inputs(target, gen, device, shared)
        if shared is None:
            shared = {n: t for n, t in raw.items() if n not in target.rotate}
        timed.append(tuple(derive_inputs(target, raw, derive_fn)))
    # Tuples: a kernel can reach the sets through its caller's frames, and must not rebind them.
    return tuple(timed), shared


# ---------------------------------------------------------------------------------------------
# Reference and check
# ---------------------------------------------------------------------------------------------

def as_outputs(out):
    """A tensor or a plain tuple/list of tensors -> list; anything else -> None. Types are read
    with type(), never through the object: a tuple or list subclass's __iter__, __len__ or
    __getitem__, an object's __class__, a metaclass's __eq__ are the candidate's code, which
    unpacking an output would run in the harness's thread after the window, computing the
    output only when it is checked (cheats/lazy_container.py)."""
    kind = type(out)
    if issubclass(kind, torch.Tensor):
        return [out]
    if (kind is tuple or kind is list) and out and all(issubclass(type(o), torch.Tensor) for o in out):
        return list(out)
    return None


def _returned(out):
    """What a call returned, named for an error: a container subclass says so."""
    kind = type(out)
    for plain in (tuple, list):
        if kind is not plain and issubclass(kind, plain):
            return "%s (a %s subclass; return a plain tuple or list)" % (kind.__qualname__, plain.__name__)
    return kind.__qualname__


# torch's own switches, taken when this file is imported: torch.backends.cuda.matmul is an object
# of a Python class whose __getattr__ a candidate replaced, and so ran its code at every reference,
# after the samples and before their checks (a red team's).
_GET_CUBLAS_TF32, _SET_CUBLAS_TF32 = torch._C._get_cublas_allow_tf32, torch._C._set_cublas_allow_tf32
_GET_CUDNN_TF32, _SET_CUDNN_TF32 = torch._C._get_cudnn_allow_tf32, torch._C._set_cudnn_allow_tf32


class _NoTF32:
    """TF32 off while the reference runs (an fp32 reference must be fp32), restored after."""

    def __enter__(self):
        self.saved = (_GET_CUBLAS_TF32(), _GET_CUDNN_TF32())
        _SET_CUBLAS_TF32(False)
        _SET_CUDNN_TF32(False)

    def __exit__(self, *exc):
        _SET_CUBLAS_TF32(self.saved[0])
        _SET_CUDNN_TF32(self.saved[1])


# Autograd off through torch's C switch, taken when this file is imported: torch.no_grad() is
# torch's Python, whose __exit__ looks torch._C._set_grad_enabled up at every call; rebound, it
# ran a red team's code after each sample's fresh values were written and before the release,
# which computed the sample's outputs there, outside every window (a clean 2.7-7.7x).
_IS_GRAD_ENABLED, _SET_GRAD_ENABLED = torch._C.is_grad_enabled, torch._C._set_grad_enabled


class _NoGrad:
    """torch.no_grad() without torch's Python: autograd off inside, as it was after."""

    def __enter__(self):
        self.was = _IS_GRAD_ENABLED()
        _SET_GRAD_ENABLED(False)

    def __exit__(self, *exc):
        _SET_GRAD_ENABLED(self.was)


def upcast(t):
    return t.float() if t.is_floating_point() and t.dtype != torch.float64 else t


def reference_outputs(target, inputs, baseline_fn=None, reference_fn=None):
    """The fp32 reference outputs (list of tensors) for one input set.

    Default: the baseline function on the inputs upcast to fp32. With `reference`: that function,
    on upcast inputs, or with derive on the derived inputs as they are (it does its own fp32 math).
    """
    fn = reference_fn or baseline_fn
    args = list(inputs) if (target.derive and reference_fn is not None) else [upcast(t) for t in inputs]
    which = ("reference %s" % target.reference) if reference_fn is not None else ("%s in fp32" % target.fn_spec)
    with _NoGrad(), _NoTF32():
        try:
            out = fn(*args)
        except BaseException as e:
            hint = "" if reference_fn is not None else "; if it cannot run in fp32, pass reference='module:function'"
            raise StageError("reference", "the reference (%s) raised %s: %s%s" % (which, type(e).__name__, e, hint))
    outs = as_outputs(out)
    if outs is None:
        raise StageError("reference", "the reference (%s) returned %s, not a tensor or tuple of tensors"
                         % (which, type(out).__name__))
    return [upcast(o).detach().clone() for o in outs]


# The checks' norm, a C function taken at import: Tensor.norm is torch's Python, which looks
# torch.functional's globals up at every call; one rebound there ran a red team's code inside
# every check, which copied the reference into the output under test (a clean 1.3-1.6x for
# calls that computed 8 of 128 rows).
_VECTOR_NORM = torch.linalg.vector_norm


def _clearly_within(of, rf, rtol, atol_f):
    """check()'s pass for one fp64 output and reference, in few distinct kernels: every element
    finite and inside its allowance by a margin. Returns check()'s figures then, else None, and
    check()'s exact path (NaN/Inf counts, elements over, the reason) decides. A run's first check
    is in a fresh CUDA context, where each kernel's first use loads it lazily: 10-80 ms each on an
    H200, ~0.2 s for the exact path's dozen (isfinite, all, sum, pow, mean, gt, clamp, ...), so
    the common case gets one norm, sub/abs/mul/add/div, one max (bench/probes/run_cost_probe.py)."""
    n = rf.numel()
    if n == 0:
        return None
    scale = float(_VECTOR_NORM(rf)) / math.sqrt(n)  # rms; NaN/Inf when the reference has any
    if not math.isfinite(scale):
        return None
    a_abs = atol_f * scale
    diff = torch.sub(of, rf).abs_()
    max_abs = float(diff.max())
    # allowance a_abs + rtol*|ref|; a zero allowance gives NaN (0/0) or Inf: the exact path
    used = float(diff.div_(rf.abs().mul_(rtol).add_(a_abs)).max())  # NaN from any NaN
    if not used < 1.0 - 1e-9:  # over, on or within rounding of the line: decided exactly
        return None
    # scale > 0 here: an all-zero reference has zero allowances, so `used` was NaN or Inf above
    return {"max_abs": max_abs, "rel": max_abs / scale, "atol": a_abs, "scale": scale, "tol_used": used}


def _shadowed(t):
    """The names in a tensor's own __dict__ that stand in for torch.Tensor's attributes (an
    instance's `detach` or `clone` is called before the class's): a plain torch.Tensor whose
    methods are the candidate's code."""
    try:
        own = vars(t)
    except TypeError:
        return []
    if not own:
        return []
    keys = list(own)  # a dict's keys, iterated: no hash or comparison of them runs
    # Looking a key up hashes it: a str subclass's __hash__ ran the candidate's code in the
    # harness's thread after a sample's window, before its checks, and filled every held output
    # there (cheats/hashed_key_after_window.py). A key of any other type than str is a shadow.
    if any(type(k) is not str for k in keys):
        return ["a key of its own type, not a str"]
    return sorted(k for k in keys if hasattr(torch.Tensor, k))


def check(out, ref, dtype="bf16", expected=None, rtol=None, atol=None):
    """Compares outputs with the fp32 reference. Returns a dict: ok, reason, max_abs, rel (max_abs /
    rms(ref)), atol (absolute, as used), rtol, scale (rms(ref)), tol_used (worst |err| / allowed).

    out/ref: a tensor or a list of tensors. dtype: the target's dtype name (picks the default
    tolerances). expected: [(shape, dtype)] per output (from the baseline) or None to check
    shapes against ref only. Per element |out-ref| <= atol*rms(ref) + rtol*|ref|; NaN/Inf,
    a wrong shape, dtype or device, a tensor subclass, or a non-tensor fail.
    """
    d_rtol, d_atol = TOLERANCES[dtype]
    rtol = d_rtol if rtol is None else rtol
    atol_f = d_atol if atol is None else atol
    res = {"ok": False, "reason": None, "max_abs": None, "rel": None, "atol": None, "rtol": rtol, "scale": None,
           "tol_used": None}
    refs = as_outputs(ref)
    outs = as_outputs(out)
    if outs is None:
        res["reason"] = "returned %s, expected %s" % (_returned(out),
                                                       "a tensor" if len(refs) == 1 else "%d tensors" % len(refs))
        return res
    if len(outs) != len(refs):
        res["reason"] = "returned %d tensor(s), expected %d" % (len(outs), len(refs))
        return res
    worst = None
    for i, (o, r) in enumerate(zip(outs, refs)):
        label = "output" if len(outs) == 1 else "output %d" % i
        if type(o) is not torch.Tensor:
            res["reason"] = "%s is a %s; return a plain torch.Tensor" % (label, type(o).__name__)
            return res
        shadow = _shadowed(o) or _shadowed(r)
        if shadow:
            res["reason"] = ("%s or its reference carries attributes of its own that stand in for torch.Tensor's (%s); "
                             "return a plain torch.Tensor" % (label, ", ".join(shadow[:4])))
            return res
        if tuple(o.shape) != tuple(r.shape):
            res["reason"] = "%s has shape %s, expected %s" % (label, list(o.shape), list(r.shape))
            return res
        if expected is not None and o.dtype != expected[i][1]:
            res["reason"] = "%s has dtype %s, expected %s" % (label, o.dtype, expected[i][1])
            return res
        if o.device != r.device:
            res["reason"] = "%s is on %s, expected %s" % (label, o.device, r.device)
            return res
        of = o.detach().double() if o.is_floating_point() else o.detach().to(torch.float64)
        rf = r.detach().double()
        clear = _clearly_within(of, rf, rtol, atol_f)
        if clear is not None:
            if worst is None or clear["tol_used"] > worst["tol_used"]:
                worst = clear
            continue
        if not torch.isfinite(rf).all():
            res["reason"] = "the reference for %s has NaN/Inf: the target's inputs or reference are bad" % label
            return res
        bad_nf = int((~torch.isfinite(of)).sum())
        if bad_nf:
            res["reason"] = "%s has %d NaN/Inf element(s)" % (label, bad_nf)
            return res
        scale = float(rf.pow(2).mean().sqrt()) if rf.numel() else 0.0
        a_abs = atol_f * scale
        diff = (of - rf).abs()
        max_abs = float(diff.max()) if diff.numel() else 0.0
        bound = a_abs + rtol * rf.abs()
        bad = diff > bound
        n_bad = int(bad.sum())
        rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
        # share of the allowed error used by the worst element: <= 1 passes
        used = float((diff / bound.clamp_min(1e-300)).max()) if diff.numel() else 0.0
        if worst is None or used > worst["tol_used"]:
            worst = {"max_abs": max_abs, "rel": rel, "atol": a_abs, "scale": scale, "tol_used": used}
        if n_bad:
            zeros = " (the output is all zeros)" if not bool(of.abs().max() > 0) else ""
            res["reason"] = ("%s: %d of %d elements outside tolerance%s: max abs error %.4g, %.3g x rms(ref); "
                             "allowed |err| <= %.3g + %.3g*|ref| (atol %.3g x rms %.4g)"
                             % (label, n_bad, diff.numel(), zeros, max_abs, rel, a_abs, rtol, atol_f, scale))
            res.update({"max_abs": max_abs, "rel": rel, "atol": a_abs, "scale": scale, "tol_used": used})
            return res
    res.update(worst or {})
    res["ok"] = True
    return res


# The screen passes an output only when its worst element uses under 1 - QUICK_MARGIN of its
# allowance; its fp32 rounding (~1e-6 relative) is far inside that margin, so it never passes
# an output check() would fail.
QUICK_MARGIN = 1e-3
_SCREENED = (torch.float32, torch.float16, torch.bfloat16)


def _screen_queued(o, r, want_dtype, rtol, atol_f):
    """One output's fp32 screen, queued on its device and not read: [the reference's rms, the
    worst element's share of its allowance], two 0-d fp32 tensors (screen_read decides), or None
    where the screen does not cover the pair: plain tensors of a screened dtype (and the one
    expected), the reference's shape and device."""
    if not (type(o) is torch.Tensor and type(r) is torch.Tensor and not _shadowed(o) and not _shadowed(r)
            and o.dtype in _SCREENED
            and r.dtype == torch.float32 and tuple(o.shape) == tuple(r.shape) and o.device == r.device
            and (want_dtype is None or o.dtype == want_dtype) and o.numel() > 0):
        return None
    scale = _VECTOR_NORM(r).div_(math.sqrt(r.numel()))
    diff = torch.sub(o.detach(), r).abs_()  # bf16/fp16 - fp32 promotes to fp32 in one pass
    bound = r.abs().mul_(rtol).add_(scale * atol_f)  # > 0 wherever screen_read passes: scale > 0, atol > 0
    return [scale, diff.div_(bound).max()]


def screen_read(values):
    """Whether the screens whose values (read back: rms, share, rms, share, ...) were queued all
    pass: every reference's rms positive and finite, every worst share under 1 - QUICK_MARGIN
    (False for NaN)."""
    if not values or len(values) % 2:
        return False
    for scale, used in zip(values[0::2], values[1::2]):
        if not (scale > 0 and math.isfinite(scale) and used <= 1.0 - QUICK_MARGIN):
            return False
    return True


def read_back(values):
    """0-d tensors of one device as Python floats, with one host read (a synchronisation) for
    all of them."""
    if not values:
        return []
    if len({v.device for v in values}) == 1:
        return torch.stack([v.float() for v in values]).tolist()
    return [float(v) for v in values]


def screen_queue(out, ref, dtype="bf16", expected=None, rtol=None, atol=None):
    """check_quick's screen of one call's outputs, queued on the device: its values (read them
    with read_back, decide with screen_read), or None where the screen does not cover them
    (check() must decide). Many calls' screens are read back at once: a timed sample's held
    outputs cost one synchronisation, not two a call."""
    d_rtol, d_atol = TOLERANCES[dtype]
    rtol = d_rtol if rtol is None else rtol
    atol_f = d_atol if atol is None else atol
    refs, outs = as_outputs(ref), as_outputs(out)
    if outs is None or refs is None or len(outs) != len(refs) or not atol_f > 0:
        return None
    values = []
    for i, (o, r) in enumerate(zip(outs, refs)):
        got = _screen_queued(o, r, expected[i][1] if expected is not None else None, rtol, atol_f)
        if got is None:
            return None
        values += got
    return values


def check_quick(out, ref, dtype="bf16", expected=None, rtol=None, atol=None):
    """check()'s verdict for less: a few fp32 passes (about a quarter of check()'s memory
    traffic) and one host read pass an output clearly within tolerance; anything else (NaN and
    Inf included, a near miss, an output the screen does not cover) gets check() itself. For the
    many outputs of a timed sample; a screened pass has ok True and no error figures."""
    rtol = TOLERANCES[dtype][0] if rtol is None else rtol
    values = screen_queue(out, ref, dtype, expected, rtol, atol)
    if values is not None and screen_read(read_back(values)):
        return {"ok": True, "reason": None, "max_abs": None, "rel": None, "atol": None, "rtol": rtol,
                "scale": None, "tol_used": None, "screened": True}
    return check(out, ref, dtype, expected, rtol, atol)


# ---------------------------------------------------------------------------------------------
# Timers. Each returns samples_ms (one per sample: mean time of one call) and the last call's
# output, which the session checks against the reference of the set it was computed from.
# ---------------------------------------------------------------------------------------------

def cycle(sets, n):
    return [sets[j % len(sets)] for j in range(n)]


def warmup_settled(marks, seconds, max_s=WARMUP_MAX_S, min_s=WARMUP_MIN_S, window_s=WARMUP_WINDOW_S):
    """Whether a warm-up may stop. marks: [(seconds since the warm-up started, that pass's
    duration)], one per pass over the rotated sets; seconds: a number (stop after it) or "auto"
    (see WARMUP_MIN_S above: steady for two windows in a row, or WARMUP_MAX_S). Pure."""
    elapsed = marks[-1][0] if marks else 0.0
    if seconds != "auto":
        return elapsed >= float(seconds)
    if elapsed >= max_s:
        return True
    if elapsed < min_s:
        return False
    passes = sorted(p for _, p in marks)
    w = max(window_s, 3 * passes[len(passes) // 2])  # at least ~3 passes a window
    last = sorted(p for t, p in marks if t > elapsed - w)
    prev = sorted(p for t, p in marks if elapsed - 2 * w < t <= elapsed - w)
    if len(last) < 3 or len(prev) < 3:
        return False
    a, b = last[len(last) // 2], prev[len(prev) // 2]
    return b > 0 and abs(a / b - 1) <= WARMUP_STEADY


def warm_up(fn, sets, seconds, sync, clock=time.perf_counter, marks=None, max_s=WARMUP_MAX_S, min_s=WARMUP_MIN_S,
            window_s=WARMUP_WINDOW_S):
    """First call (compilation, autotuning) finishes before the clock starts; then passes over
    all rotated sets until warmup_settled (clocks settle). Returns the warm-up time spent [s];
    `marks`, a list, gets each pass's (time since start, duration)."""
    fn(*sets[0])
    sync()
    t0 = clock()
    marks = [] if marks is None else marks
    while True:
        p0 = clock()
        for s in sets:
            fn(*s)
        sync()
        now = clock()
        marks.append((now - t0, now - p0))
        if warmup_settled(marks, seconds, max_s, min_s, window_s):
            return now - t0


def calls_for(calls, k, marks, most=None, budget_s=REPLAY_BUDGET_S):
    """Calls per sample after a warm-up whose passes over the `k` warm-up sets are `marks`:
    `calls`, or fewer when a sample of them would last over `budget_s` (REPLAY_BUDGET_S; a CPU's
    CPU_REPLAY_BUDGET_S), never fewer than `k` (the sets that keep caches cold); or, up to `most`,
    more when a sample of them would last less (grow_budget, most_calls). Pure."""
    if not marks or k <= 0:
        return calls
    passes = sorted(p for _, p in marks)
    per_call = passes[len(passes) // 2] / float(k)
    if per_call <= 0:
        return calls
    want = max(1, int(math.ceil(budget_s / per_call - 1e-9)))
    if per_call * calls <= budget_s:
        return max(calls, min(most or calls, want))
    return min(calls, max(k, want))


def start_spin():
    """Queues START_SPIN_CYCLES of spin on the current stream (nothing without torch.cuda._sleep)."""
    spin = getattr(torch.cuda, "_sleep", None)
    if spin is not None:
        spin(START_SPIN_CYCLES)


def ramp(replay, sync, seconds=RAMP_S, clock=time.perf_counter):
    """Untimed replays back to back for `seconds` (at least two), each waited for so the queue
    never runs ahead of the clock: the GPU is busy when the next timed sample starts. Returns
    the replays done."""
    t_end = clock() + seconds
    n = 0
    while n < 2 or clock() < t_end:
        replay()
        sync()
        n += 1
    return n


# ---------------------------------------------------------------------------------------------
# CUPTI's activity records: each kernel's and copy's own start and end on the GPU
# ---------------------------------------------------------------------------------------------

# Graph replay timed by events counts the gap between one kernel node and the next (~0.35-0.8 us
# on an H200): a 2.7 us gelu read 3.3 us a call, 21% over torch.profiler's kernel time. The
# profiler reads CUPTI's records; starting it costs ~3.5 s a process, reading the records straight
# from libcupti ~20 ms (bench/probes/cupti_probe.py). Records kept: copies, memsets and kernels, the
# device work a graph holds. Each starts with its kind (uint32) and has its start and end
# (uint64 ns) at bytes 16 and 24 (CUpti_ActivityMemcpy5-6, CUpti_ActivityMemset4,
# CUpti_ActivityKernel4-10).
CUPTI_KINDS = (1, 2, 10)  # MEMCPY, MEMSET, CONCURRENT_KERNEL
CUPTI_BUFFER_BYTES = 4 << 20
CUPTI_BUFFERS = 3  # made up front and reused (KernelClock._free)


class ClockError(RuntimeError):
    """CUPTI could not time a replay (not found, refused, or recorded nothing)."""


def find_cupti():
    """libcupti's path, or (None, why): the copy this process has mapped (torch links it for its
    profiler), else one in torch's nvidia wheels, else in a CUDA toolkit."""
    try:
        with open("/proc/self/maps", errors="surrogateescape") as f:
            for line in f:
                path = line.split()[-1] if line.strip() else ""
                if "/libcupti.so" in path:
                    return path, None
    except OSError:
        pass
    import glob
    roots = [os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia")]
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            roots.append(os.environ[env])
    roots.append("/usr/local/cuda")
    for root in roots:
        for pattern in ("*/lib/libcupti.so*", "lib64/libcupti.so*", "extras/CUPTI/lib64/libcupti.so*",
                        "targets/*/lib/libcupti.so*"):
            found = sorted(glob.glob(os.path.join(root, pattern)))
            if found:
                return found[0], None
    return None, ("libcupti was not found (not mapped by torch, not under %s)" % ", ".join(roots))


def per_call_ms(records, calls):
    """The time a call, in ms, from one replay's activity records [(start_ns, end_ns)] of `calls`
    calls, and the rule used. "span": the same number of records each call and each call's after
    the last call's, so each call is its first start to its last end (gaps between its own kernels
    count, the gap before it does not), and the calls' mean is taken. "busy" otherwise (calls that
    overlap, or a varying number of kernels): the time any record ran, a call. (None, None)
    without records. Pure."""
    if not records or calls <= 0:
        return None, None
    recs = sorted(records)
    n = len(recs)
    if n % calls == 0:
        m = n // calls
        total, prev_end, ordered = 0, None, True
        for i in range(calls):
            group = recs[i * m:(i + 1) * m]
            first, last = group[0][0], max(e for _, e in group)
            if prev_end is not None and first < prev_end:
                ordered = False
                break
            total += last - first
            prev_end = last
        if ordered:
            return total / float(calls) / 1e6, "span"
    return busy_time(recs) / float(calls) / 1e6, "busy"


def busy_time(intervals):
    """How long any of the intervals [(start, end)] ran: the length of their union, in their
    unit (0 for none). Pure."""
    busy, cur_s, cur_e = 0, None, None
    for a, b in sorted(intervals):
        if cur_e is None or a > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = a, b
        else:
            cur_e = max(cur_e, b)
    if cur_e is not None:
        busy += cur_e - cur_s
    return busy


def cupti_fallback_note(why):
    """The timer_note of a run that timer "auto" timed by events around graph replays, as CUPTI
    could not time it."""
    return "CUPTI cannot time this run (%s); timed by events around graph replays" % why


def cupti_refusal(why):
    """The error of timer "cupti" where CUPTI cannot time the run."""
    return StageError("timer", "CUPTI cannot time this run: %s; use timer: cuda_graph" % why)


class KernelClock:
    """CUPTI's records of the device work between start() and stop(), read through ctypes from
    libcupti. CUPTI's buffer callbacks are per process, so there is one clock a process: get()."""

    _one = None

    @classmethod
    def get(cls):
        """The process's clock; ClockError says why there is none."""
        if cls._one is None:
            path, why = find_cupti()
            if path is None:
                raise ClockError(why)
            cls._one = cls(path)
        return cls._one

    def __init__(self, path):
        import ctypes
        self.path = path
        self._c = ctypes
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise ClockError("%s could not be loaded: %s" % (path, e))
        lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        lib.cuptiGetResultString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        try:
            lib.cuptiGetTimestamp.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        except AttributeError as e:  # every libcupti has it: not one
            raise ClockError("%s is not a CUPTI library: %s" % (path, e))
        self._lib = lib
        self._buffers = {}
        # Buffers made once and handed back after CUPTI completes them: a flush completes the
        # buffer in use, and the next record asks for another. Made then (4 MiB, zero-filled,
        # often fresh pages), one cost ~0.65 ms inside the next sample's first launch on an H200,
        # more than the sample's calls of a small kernel (bench/probes/cupti_launch_probe.py).
        self._free = [ctypes.create_string_buffer(CUPTI_BUFFER_BYTES) for _ in range(CUPTI_BUFFERS)]
        self._records = []
        requested_t = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                       ctypes.POINTER(ctypes.c_size_t))
        completed_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                                       ctypes.c_size_t)
        self._requested = requested_t(self._on_requested)  # held: CUPTI calls them until exit
        self._completed = completed_t(self._on_completed)
        self._call("cuptiActivityRegisterCallbacks", self._requested, self._completed)

    def _call(self, name, *args):
        r = getattr(self._lib, name)(*args)
        if r != 0:
            text = self._c.c_char_p()
            self._lib.cuptiGetResultString(r, self._c.byref(text))
            raise ClockError("%s failed: %s (%d)" % (name, (text.value or b"?").decode(errors="replace"), r))

    def _on_requested(self, buf, size, max_records):
        # 16-byte aligned; CUPTI needs 8. A new one only when CUPTI holds every made one.
        b = self._free.pop() if self._free else self._c.create_string_buffer(CUPTI_BUFFER_BYTES)
        addr = self._c.addressof(b)
        self._buffers[addr] = b
        buf[0] = addr
        size[0] = CUPTI_BUFFER_BYTES
        max_records[0] = 0

    def _on_completed(self, ctx, stream, buf, size, valid):
        c = self._c
        rec = c.c_void_p(None)
        kinds = CUPTI_KINDS
        while buf and self._lib.cuptiActivityGetNextRecord(buf, valid, c.byref(rec)) == 0:
            a = rec.value
            if c.c_uint32.from_address(a).value in kinds:
                self._records.append((c.c_uint64.from_address(a + 16).value, c.c_uint64.from_address(a + 24).value))
        done = self._buffers.pop(buf, None)
        if done is not None:
            self._free.append(done)

    def start(self):
        self._records = []
        for k in CUPTI_KINDS:
            self._call("cuptiActivityEnable", k)

    def mark(self):
        """CUPTI's time now, on the clock of its records' timestamps (ns)."""
        ts = self._c.c_uint64(0)
        self._call("cuptiGetTimestamp", self._c.byref(ts))
        return ts.value

    def stop(self):
        """Flushes and returns the records since start(), sorted: [(start_ns, end_ns)]."""
        try:
            self._call("cuptiActivityFlushAll", 1)  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
        finally:
            for k in CUPTI_KINDS:
                self._lib.cuptiActivityDisable(k)
        got, self._records = self._records, []
        return sorted(got)


def time_cuda_graph(fn, sets, calls, samples, clock=None):
    """CUDA-graph replay of `calls` calls cycling over the rotated sets.

    Launch overhead is gone from the measurement (per-call events read ~30 us for a 3 us kernel
    on an H200). With a KernelClock, a sample is each call's own GPU time from CUPTI's records
    (per_call_ms): what torch.profiler reports. Without one, an event pair around each replay: the
    gap between kernel nodes stays in (a 2.7 us kernel reads ~3.1 us). Caveat: capture can change
    an op (a captured device copy ran on the copy engine at 2/3 of eager bandwidth), so the timer
    name is reported and compared.
    """
    order = cycle(sets, calls)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # allocator and lazy init warmed on a side stream, as torch advises
        for s in order[: len(sets)]:
            fn(*s)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    last = None
    with torch.cuda.graph(graph):
        for s in order:
            last = fn(*s)  # earlier outputs are freed and their graph-pool memory reused
    graph.replay()
    torch.cuda.synchronize()
    if clock is not None:  # CUPTI's first replay of a graph costs ~8 ms: not a sample
        clock.start()
        graph.replay()
        torch.cuda.synchronize()
        if not clock.stop():
            raise ClockError("CUPTI recorded no kernel or copy in a replay (another profiler may hold CUPTI)")
    ramp(graph.replay, torch.cuda.synchronize)  # capture left the GPU idle (RAMP_S above)
    out = []
    for _ in range(samples):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        if clock is not None:
            clock.start()
        else:
            start_spin()
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        if clock is None:
            out.append(a.elapsed_time(b) / calls)
            continue
        ms, _ = per_call_ms(clock.stop(), calls)
        if ms is None:
            raise ClockError("CUPTI recorded no kernel or copy in a timed replay")
        out.append(ms)
    torch.cuda.synchronize()
    return out, last, graph


def time_cuda_events(fn, sets, calls, samples):
    """Fallback: an event pair around every call; a sample is the mean of `calls` per-call times.
    Honest for kernels above ~50 us; launch overhead inflates tiny ones (32 us for 2.8 us)."""
    order = cycle(sets, calls)
    out = []
    last = None
    for _ in range(samples):
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in order]
        for (a, b), s in zip(evs, order):
            a.record()
            last = fn(*s)
            b.record()
        torch.cuda.synchronize()
        out.append(sum(a.elapsed_time(b) for a, b in evs) / calls)
    return out, last


def time_cpu(fn, sets, calls, samples):
    """perf_counter around `calls` calls cycling over the sets; one sample per block."""
    order = cycle(sets, calls)
    out = []
    last = None
    for _ in range(samples):
        t0 = time.perf_counter()
        for s in order:
            last = fn(*s)
        out.append((time.perf_counter() - t0) * 1e3 / calls)
    return out, last


# ---------------------------------------------------------------------------------------------
# A prepared session: everything built before the candidate exists
# ---------------------------------------------------------------------------------------------

def versions():
    try:
        from importlib import metadata
        triton = metadata.version("triton")
    except Exception:
        triton = None  # not installed (or no metadata): the contract never imports triton
    return {"python": platform.python_version(), "torch": torch.__version__, "triton": triton}


def contract_sha256():
    try:
        with open(os.path.abspath(__file__), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


class Session:
    """Inputs, references, expected output specs, rotation and timer for one target and seed."""

    def __init__(self, target, seed=None):
        self.target = target
        self.seed = target.seed if seed is None else int(seed)
        self.device = resolve_device(target.device)
        self.is_cuda = self.device.startswith("cuda")
        self.cache_bytes, self.cache_source = cache_bytes(self.device)
        t = target
        self.baseline_fn = load_callable(t.fn_spec, t.base_dir) if t.fn_spec else None
        self.reference_fn = load_callable(t.reference, t.base_dir) if t.reference else None
        self.derive_fn = load_callable(t.derive, t.base_dir) if t.derive else None
        if self.baseline_fn is None and self.reference_fn is None:
            raise TargetError("TARGET needs 'from' (the baseline function) or 'reference'")

        # Check set first, so the output specs and bytes per call are known before choosing K;
        # the timed sets continue from the same generator (fresh draws, distinct from the check's).
        gen = seeded_generator(self.device, self.seed)
        self.check_inputs = derive_inputs(t, make_raw_inputs(t, gen, self.device), self.derive_fn)
        self.check_ref = reference_outputs(t, self.check_inputs, self.baseline_fn, self.reference_fn)
        self.expected = self._expected_specs(self.check_inputs)
        self.out_bytes = sum(_numel(s) * _elsize(dt) for s, dt in self.expected)
        in_bytes = sum(tensor_bytes(x) for x in self.check_inputs)
        rotated_bytes = sum(tensor_bytes(self.check_inputs[i]) for i in self._rotated_call_indices(self.check_inputs))
        self.bytes_per_call = (t.min_bytes if t.min_bytes else rotated_bytes) + self.out_bytes
        self.roofline_bytes = (t.min_bytes if t.min_bytes else in_bytes) + self.out_bytes
        # K sets for the warm-up (enough to keep caches cold); calls per sample as planned, each
        # with a set of its own once use_calls() has run: the plan is the same for both roles, a
        # GPU's grown sample is not (calls_for sizes it by the run's own call).
        self.rotates = bool(t.rotate)
        self.k = self.cache_k = rotation_k(self.bytes_per_call, self.cache_bytes, rotate=self.rotates,
                                           factor=rotate_factor(self.device))
        self.calls = plan_calls(t.iters, self.k, rotated_bytes, sets_budget(self.device), rotate=self.rotates)
        # A sample may grow once the warm-up has timed a call (calls_for).
        self.sets_cap = grow_budget(self.device, t.workload_count)
        self.planned_calls = self.calls
        self.grow_note = None
        self.most_calls = most_calls(self.calls, t.iters, rotated_bytes, self.sets_cap, rotate=self.rotates,
                                     cap=GROW_MAX_CALLS if self.is_cuda else CPU_GROW_MAX_CALLS)
        self._gen = gen
        self.timed_sets, self._shared = draw_sets(t, gen, self.device, self.k, self.derive_fn)
        self.last_set = self.last_ref = None
        self.shapes = {n: list(x.shape) for n, x in zip(t.call_names, self.check_inputs)}
        outs = [list(s) for s, _ in self.expected]
        self.shapes["out"] = outs[0] if len(outs) == 1 else outs
        self._sync()

    def use_calls(self, calls):
        """Fixes the calls per sample (after the warm-up, see calls_for): with rotation the timed
        sets grow or shrink to one per call, so no set repeats within a sample. A sample grown past
        the plan is an option, not a need: where its sets do not fit in the device's memory (the
        candidate may hold much of it), the sample keeps the plan, and `grow_note` says so."""
        want = max(1, int(calls))
        if self.rotates and want > max(self.planned_calls, len(self.timed_sets)):
            try:
                return self._use_calls(want)
            except RuntimeError as e:  # torch.cuda.OutOfMemoryError is one
                if "out of memory" not in str(e).lower():
                    raise
            # Out of the except: the error's frames, which hold the sets drawn so far, are gone.
            self.grow_note = ("a sample of %d calls did not fit in the device's memory; it kept the planned %d"
                              % (want, self.planned_calls))
            if self.is_cuda:
                torch.cuda.empty_cache()
            want = self.planned_calls
        return self._use_calls(want)

    def _use_calls(self, calls):
        self.calls = calls
        if self.rotates and self.calls != len(self.timed_sets):
            if self.calls > len(self.timed_sets):
                more, _ = draw_sets(self.target, self._gen, self.device, self.calls - len(self.timed_sets),
                                    self.derive_fn, self._shared)
                self.timed_sets = self.timed_sets + more
            else:
                self.timed_sets = self.timed_sets[: self.calls]
            self.k = self.calls
        self.last_set = (self.calls - 1) % self.k
        self.last_ref = reference_outputs(self.target, self.timed_sets[self.last_set], self.baseline_fn,
                                          self.reference_fn)
        self._sync()
        return self.calls

    def _expected_specs(self, inputs):
        # The baseline in the target dtype says what the output must look like (shape, dtype).
        if self.baseline_fn is None:
            return [(tuple(r.shape), self.target.dtype if r.is_floating_point() else r.dtype) for r in self.check_ref]
        with _NoGrad():
            try:
                out = self.baseline_fn(*inputs)
            except BaseException as e:
                raise StageError("baseline", "the baseline %s raised %s: %s" % (self.target.fn_spec, type(e).__name__, e))
        outs = as_outputs(out)
        if outs is None:
            raise StageError("baseline", "the baseline %s returned %s, not a tensor or tuple of tensors"
                             % (self.target.fn_spec, type(out).__name__))
        if len(outs) != len(self.check_ref):
            raise StageError("reference", "the reference returns %d tensor(s) but the baseline %d"
                             % (len(self.check_ref), len(outs)))
        return [(tuple(o.shape), o.dtype) for o in outs]

    def _rotated_call_indices(self, call_inputs):
        t = self.target
        if not t.derive:
            return [i for i, n in enumerate(t.call_names) if n in t.rotate]
        return list(range(len(call_inputs)))  # derived inputs are rebuilt per set: all rotate

    def _sync(self):
        if self.is_cuda:
            torch.cuda.synchronize()

    def _check(self, out, ref):
        return check(out, ref, self.target.dtype_name, self.expected, self.target.rtol, self.target.atol)

    def result_base(self, role):
        t = self.target
        dev_name = torch.cuda.get_device_name(torch.device(self.device)) if self.is_cuda else platform.processor() or "cpu"
        return {
            "protocol": PROTOCOL, "target": t.name, "role": role, "status": None, "ok": False, "reason": None,
            "ms": None, "samples_ms": [], "timer": None, "iters": t.iters, "calls_per_sample": self.calls,
            "seed": self.seed, "rotate_k": self.k, "cache_k": self.cache_k, "shapes": self.shapes, "dtype": t.dtype_name,
            "device": self.device, "gpu": dev_name if self.is_cuda else None,
            "cache_bytes": self.cache_bytes, "cache_source": self.cache_source,
            "error": None, "checked": [],
            "roofline_inputs": {"flops": t.flops, "bytes": int(self.roofline_bytes), "dtype": t.dtype_name},
            "warmup_s": None, "versions": versions(), "contract_sha256": contract_sha256(),
        }

    def measure(self, fn, role="candidate"):
        """Checks fn on the check set, warms it up, times it, checks the last timed output."""
        t = self.target
        res = self.result_base(role)
        try:
            with _NoGrad():
                try:
                    out = fn(*self.check_inputs)
                    self._sync()
                except BaseException as e:
                    raise StageError("call", "%s raised %s: %s" % (getattr(fn, "__name__", "kernel"), type(e).__name__, e))
                first = self._check(out, self.check_ref)
                del out
                res["error"] = error_fields(first)
                res["checked"].append("check_set")
                sync = self._sync
                marks = []
                try:
                    res["warmup_s"] = round(warm_up(fn, self.timed_sets, t.warmup_s, sync, marks=marks,
                                                    max_s=WARMUP_MAX_S if self.is_cuda else WARMUP_MAX_S_CPU), 3)
                except BaseException as e:
                    raise StageError("call", "during warm-up %s raised %s: %s"
                                     % (getattr(fn, "__name__", "kernel"), type(e).__name__, e))
                res["calls_per_sample"] = self.use_calls(calls_for(
                    self.calls, self.k, marks, self.most_calls,
                    budget_s=REPLAY_BUDGET_S if self.is_cuda else CPU_REPLAY_BUDGET_S))
                if self.grow_note:
                    res["sample_note"] = self.grow_note
                res["rotate_k"] = self.k
                samples, last, timer, note = self._time(fn)
                res["samples_ms"] = [round(s, 6) for s in samples]
                res["ms"] = statistics.median(samples)
                res["timer"] = timer
                if note:
                    res["timer_note"] = note
                timed = self._check(last, self.last_ref)
                res["checked"].append("last_timed_call")
                del last
                self._graph = None
        except StageError as e:
            res["status"] = "error"
            res["reason"] = "%s: %s" % (e.stage, e)
            return res
        failed = first if not first["ok"] else (timed if not timed["ok"] else None)
        if failed is not None:
            res["status"] = "incorrect"
            where = "check call" if failed is first else "last timed call"
            res["reason"] = "%s: %s" % (where, failed["reason"])
            res["error"] = error_fields(failed)
        else:
            res["status"] = "ok"
            res["ok"] = True
            res["error"] = error_fields(first if first["tol_used"] >= timed["tol_used"] else timed)
        return res

    def _time(self, fn):
        t = self.target
        timer = t.timer
        if not self.is_cuda:
            try:
                samples, last = time_cpu(fn, self.timed_sets, self.calls, t.samples)
            except BaseException as e:
                raise StageError("call", "%s raised %s: %s" % (getattr(fn, "__name__", "kernel"), type(e).__name__, e))
            return samples, last, "cpu", None
        note = None
        if timer in ("auto", "cupti"):
            try:
                clock = KernelClock.get()
                samples, last, self._graph = time_cuda_graph(fn, self.timed_sets, self.calls, t.samples, clock)
                return samples, last, "cupti", None
            except ClockError as e:
                if timer == "cupti":
                    raise cupti_refusal(e)
                note = cupti_fallback_note(str(e)[:200])
                timer = "cuda_graph_fallback"
            except BaseException as e:
                if timer == "cupti":
                    raise StageError("timer", "CUDA-graph capture failed: %s: %s" % (type(e).__name__, e))
                note = "CUDA-graph capture failed (%s: %s); fell back to per-call events" % (type(e).__name__, str(e)[:200])
                timer = "events_fallback"
                try:
                    torch.cuda.synchronize()
                except BaseException:
                    pass
        if timer in ("cuda_graph", "cuda_graph_fallback"):
            try:
                samples, last, self._graph = time_cuda_graph(fn, self.timed_sets, self.calls, t.samples)
                return samples, last, "cuda_graph", note  # the graph (its memory pool) lives until checked
            except BaseException as e:
                if timer == "cuda_graph":
                    raise StageError("timer", "CUDA-graph capture failed: %s: %s" % (type(e).__name__, e))
                note = "CUDA-graph capture failed (%s: %s); fell back to per-call events" % (type(e).__name__, str(e)[:200])
                try:
                    torch.cuda.synchronize()
                except BaseException:
                    pass
        try:
            samples, last = time_cuda_events(fn, self.timed_sets, self.calls, t.samples)
        except BaseException as e:
            raise StageError("call", "%s raised %s: %s" % (getattr(fn, "__name__", "kernel"), type(e).__name__, e))
        return samples, last, "cuda_events", note


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _elsize(dtype):
    return torch.empty((), dtype=dtype).element_size()


def error_fields(c):
    return {"max_abs": c.get("max_abs"), "rel": c.get("rel"), "atol": c.get("atol"), "rtol": c.get("rtol"),
            "scale": c.get("scale"), "tol_used": c.get("tol_used")}


def prepare(target, seed=None, base_dir=None):
    """Builds a Session (inputs, reference, timer set-up) from a Target or a TARGET dict.
    Raises TargetError / StageError; measure() turns those into a result line."""
    return Session(Target.from_dict(target, base_dir), seed)


def measure(target, fn, role="candidate", seed=None, base_dir=None):
    """prepare + Session.measure, never raising for the user's mistakes: returns the result dict.
    A target with workloads measures each in turn and returns them combined (combine_workloads)."""
    try:
        t = Target.from_dict(target, base_dir)
        parts = t.workload_targets()
        sessions = [prepare(sub, seed) for _, sub in parts]
    except (TargetError, StageError) as e:
        return error_result(target, role, e)
    if not t.workloads:
        return sessions[0].measure(fn, role)
    return combine_workloads([(n, s.measure(fn, role)) for (n, _), s in zip(parts, sessions)], t)


# Fields every workload of a run shares: said once, at the top of a combined line.
SHARED_FIELDS = ("protocol", "target", "role", "iters", "seed", "dtype", "device", "gpu", "cache_bytes",
                 "cache_source", "versions", "contract_sha256")
# The order in which a workload's status decides the run's: the worst wins.
_STATUS_RANK = {"error": 0, "invalid": 1, "incorrect": 2, "ok": 3}


def combine_workloads(named_results, target):
    """One result line from each workload's: the shared fields once, `workloads` in order (name,
    dims, weight, and the workload's own fields), the run's status the worst of theirs with the
    first such workload named in its reason, and ms the weighted sum of the workloads' ms."""
    by_name = {w["name"]: w for w in target.workloads}
    first = named_results[0][1]
    line = {k: first.get(k) for k in SHARED_FIELDS if k in first}
    items = []
    for name, res in named_results:
        w = by_name.get(name, {})
        item = {"name": name, "dims": w.get("dims"), "weight": w.get("weight", 1)}
        item.update({k: v for k, v in res.items() if k not in SHARED_FIELDS})
        items.append(item)
    worst = min(items, key=lambda it: _STATUS_RANK.get(it.get("status"), 0))
    line["status"] = worst.get("status")
    line["ok"] = all(it.get("ok") is True for it in items)
    line["reason"] = None if line["status"] == "ok" else "workload %s: %s" % (worst["name"], worst.get("reason"))
    ms = [it.get("ms") for it in items]
    line["ms"] = (sum(it["weight"] * it["ms"] for it in items)
                  if all(isinstance(m, (int, float)) for m in ms) else None)
    line["timer"] = first.get("timer")
    line["workloads"] = items
    return line


def error_result(target, role, exc):
    name = target.get("name") if isinstance(target, dict) else getattr(target, "name", None)
    stage = getattr(exc, "stage", "target" if isinstance(exc, (TargetError, OSError, SyntaxError)) else "internal")
    return {"protocol": PROTOCOL, "target": name, "role": role, "status": "error", "ok": False,
            "reason": "%s: %s" % (stage, exc), "ms": None, "samples_ms": [], "versions": versions(),
            "contract_sha256": contract_sha256()}


# ---------------------------------------------------------------------------------------------
# Profile mode: a few calls of the kernel, each in a named range, for a profiler to look at
# ---------------------------------------------------------------------------------------------

# A profiler attached to a measuring run sees all of it: the fp32 reference, the checks, seconds
# of warm-up, graph capture and replays, and KernelClock, which takes CUPTI's activity callbacks
# (one set a process) from torch.profiler's own CUPTI client. Profile mode, which the profiling
# tools select (HOTKERNEL_PROFILE=1 for a script's __main__; profile_file() for a file), draws
# the inputs a measurement would, makes PROFILE_WARMUP_CALLS calls (compilation, autotuning, lazy
# loading), then PROFILE_CALLS calls over the rotated sets, each in an NVTX range and a
# torch.profiler label named PROFILE_CALL_RANGE % role, all inside the NVTX range PROFILE_RANGE
# (what ncu's --nvtx-include and nsys's --capture-range select). No reference, no check, no
# timer, no CUPTI: what a profiler records in the range is the calls' own work; correctness
# and speed are verify's. The harness never calls main(), so it never enters this mode.
PROFILE_MODE = 1  # the tools look for it in a vendored copy; raised when the mode changes
PROFILE_ENV = "HOTKERNEL_PROFILE"
PROFILE_RANGE = "hotkernel.profile"
PROFILE_CALL_RANGE = "hotkernel.%s"
PROFILE_WARMUP_CALLS = 3
PROFILE_CALLS = 5
# Each stage begun goes to stderr as one line with this prefix, so a tool whose profiler ran
# past its time limit can say what the run was doing.
PROFILE_STAGE_PREFIX = "hotkernel-profile: "
# The workload a profile looks at, by name ("M=16"); the first when unset.
PROFILE_WORKLOAD_ENV = "HOTKERNEL_WORKLOAD"


def pick_workload(target, name):
    """(the one-shape Target, its name) of the workload called `name`, or of the first when empty."""
    parts = target.workload_targets()
    if not name:
        return parts[0][1], parts[0][0]
    for n, sub in parts:
        if n == name:
            return sub, n
    raise TargetError("workload %r is not one of this target's: %s" % (name, ", ".join(n for n, _ in parts)))


def profile_mode_requested(environ=None):
    """Whether HOTKERNEL_PROFILE asks a script's __main__ for profile mode (set, not "0")."""
    v = (os.environ if environ is None else environ).get(PROFILE_ENV, "")
    return v.strip() not in ("", "0")


def script_role(path):
    """The role a target script's __main__ passes to main() ("candidate" when it names none)."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return "candidate"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "main":
            for kw in node.keywords:
                if kw.arg == "role" and isinstance(kw.value, ast.Constant) and kw.value.value in ("baseline",
                                                                                                  "candidate"):
                    return kw.value.value
    return "candidate"


def _stage_to_stderr(text):
    sys.stderr.write(PROFILE_STAGE_PREFIX + text + "\n")
    sys.stderr.flush()


class _Ranges:
    """NVTX push/pop (on CUDA, where torch has NVTX) and a torch.profiler label around a block."""

    def __init__(self, name, cuda, label=True):
        self.name, self.label = name, label
        self.nvtx = None
        if cuda:
            try:
                nvtx = torch.cuda.nvtx
                nvtx.range_push  # a torch built without NVTX has no such attribute
                self.nvtx = nvtx
            except (AttributeError, RuntimeError, ImportError):
                self.nvtx = None

    def __enter__(self):
        if self.nvtx is not None:
            self.nvtx.range_push(self.name)
        self._rf = torch.autograd.profiler.record_function(self.name) if self.label else None
        if self._rf is not None:
            self._rf.__enter__()
        return self

    def __exit__(self, *exc):
        if self._rf is not None:
            self._rf.__exit__(*exc)
        if self.nvtx is not None:
            self.nvtx.range_pop()


class _NoWindow:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def profile_calls(target, fn, role="candidate", calls=PROFILE_CALLS, warmup=PROFILE_WARMUP_CALLS, window=None,
                  stage=None, seed=None, base_dir=None):
    """Profile mode (above): the inputs, `warmup` calls, then `calls` calls each in its ranges.

    window: a context manager entered around the ranged calls only (torch_profile's
    torch.profiler), so it records nothing of the inputs, the import or the warm-up. stage: called
    with the name of each stage begun (default: a line on stderr). Returns the result dict
    (status "profiled", or "error" with the stage that failed); never raises for the user's
    mistakes."""
    stage = stage or _stage_to_stderr
    t0 = time.perf_counter()
    name = PROFILE_CALL_RANGE % role
    res = {"protocol": PROTOCOL, "mode": "profile", "target": None, "role": role, "status": None, "ok": None,
           "reason": None, "ms": None, "samples_ms": [], "range": PROFILE_RANGE, "call_range": name,
           "calls": int(calls), "warmup_calls": int(warmup), "versions": versions(),
           "contract_sha256": contract_sha256()}
    try:
        stage("drawing the inputs")
        t = Target.from_dict(target, base_dir)
        res["target"] = t.name
        if t.workloads:  # one shape is profiled: HOTKERNEL_WORKLOAD's, or the first
            t, res["workload"] = pick_workload(t, os.environ.get(PROFILE_WORKLOAD_ENV, ""))
        device = resolve_device(t.device)
        cuda = device.startswith("cuda")
        sync = torch.cuda.synchronize if cuda else (lambda: None)
        derive_fn = load_callable(t.derive, t.base_dir) if t.derive else None
        gen = seeded_generator(device, t.seed if seed is None else int(seed))
        first = derive_inputs(t, make_raw_inputs(t, gen, device), derive_fn)
        res.update({"device": device, "dtype": t.dtype_name,
                    "gpu": torch.cuda.get_device_name(torch.device(device)) if cuda else None,
                    "shapes": {n: list(x.shape) for n, x in zip(t.call_names, first)}})
        fn_name = getattr(fn, "__name__", "kernel")
        with _NoGrad():
            stage("making the first call (compilation, autotuning)")
            try:
                outs = as_outputs(fn(*first))
                sync()
            except BaseException as e:
                raise StageError("call", "%s raised %s: %s" % (fn_name, type(e).__name__, e))
            # The rotated sets a measurement would cycle through, sized the same way, so each
            # profiled call reads its inputs from DRAM as a timed call does.
            rotated = sum(tensor_bytes(first[i]) for i, n in enumerate(t.call_names) if t.derive or n in t.rotate)
            out_bytes = sum(tensor_bytes(o) for o in outs) if outs else 0
            k = rotation_k((t.min_bytes or rotated) + out_bytes, cache_bytes(device)[0], rotate=bool(t.rotate),
                           factor=rotate_factor(device))
            stage("drawing %d rotated input sets" % k)
            sets, _ = draw_sets(t, gen, device, k, derive_fn)
            res["rotate_k"] = k
            del outs
            stage("making %d more warm-up call(s)" % max(0, warmup - 1))
            try:
                for j in range(max(0, warmup - 1)):
                    fn(*sets[j % k])
                sync()
            except BaseException as e:
                raise StageError("call", "during warm-up %s raised %s: %s" % (fn_name, type(e).__name__, e))
            stage("making %d profiled call(s) in range %s" % (calls, name))
            outer = _Ranges(PROFILE_RANGE, cuda, label=False)
            with (window if window is not None else _NoWindow()):
                with outer:
                    for j in range(calls):
                        with _Ranges(name, cuda):
                            try:
                                fn(*sets[(max(0, warmup - 1) + j) % k])
                                sync()
                            except BaseException as e:
                                raise StageError("call", "%s raised %s: %s" % (fn_name, type(e).__name__, e))
                res["nvtx"] = outer.nvtx is not None
    except (TargetError, StageError) as e:
        stage_name = getattr(e, "stage", "target")
        res.update({"status": "error", "ok": False, "reason": "%s: %s" % (stage_name, e)})
        return res
    res.update({"status": "profiled", "wall_s": round(time.perf_counter() - t0, 6)})
    return res


def profile_file(path, role=None, calls=PROFILE_CALLS, warmup=PROFILE_WARMUP_CALLS, window=None, stage=None):
    """Profile mode for a target file, as run_file measures one: TARGET read from its text, the
    file imported (not as __main__) for its `kernel`, then profile_calls. role: the script's own
    (script_role) unless given. Returns the result dict."""
    path = os.path.abspath(path)
    role = role or script_role(path)
    stage = stage or _stage_to_stderr
    try:
        target = Target.from_dict(read_target_file(path), os.path.dirname(path))
    except (TargetError, SyntaxError, OSError) as e:
        return dict(error_result({"name": None}, role, StageError("target", str(e))), mode="profile")
    # The script's `import hotkernel_contract` gets this module, as the harness's does.
    sys.modules["hotkernel_contract"] = sys.modules[__name__]
    stage("importing %s" % os.path.basename(path))
    try:
        fn = load_kernel(path)
    except StageError as e:
        return dict(error_result(target, role, e), mode="profile")
    return profile_calls(target, fn, role, calls, warmup, window, stage)


# ---------------------------------------------------------------------------------------------
# Entry points: a script's __main__, and the file runner for an outside harness
# ---------------------------------------------------------------------------------------------

def emit(result, result_fd=None, nonce=None):
    """Writes the result as one JSON line to stdout, or to an inherited fd with the run's nonce."""
    if nonce is not None:
        result = dict(result, nonce=nonce)
    line = json.dumps(_finite(result), allow_nan=False, default=str) + "\n"
    if result_fd is None:
        sys.stdout.write(line)
        sys.stdout.flush()
    else:
        data = line.encode()
        while data:
            data = data[os.write(result_fd, data):]


def _finite(v):
    # JSON has no NaN/Infinity; a non-finite number becomes null rather than an invalid line.
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def exit_code(result):
    """0: measured (ok true or false) or profiled; 1: an error stopped the run (user code, target, device)."""
    return 0 if result.get("status") in ("ok", "incorrect", "profiled") else 1


def _result_channel():
    fd = os.environ.get("HOTKERNEL_RESULT_FD")
    return (int(fd) if fd else None), os.environ.get("HOTKERNEL_NONCE")


def _finish(result):
    if result.get("status") == "error":
        sys.stderr.write("hotkernel: %s\n" % result.get("reason"))
    fd, nonce = _result_channel()
    emit(result, fd, nonce)
    return exit_code(result)


def main(target, fn, role="candidate", file=None):
    """A target script's __main__: measure fn against the target and print the line; exits.
    With HOTKERNEL_PROFILE set (the profiling tools set it), profile mode instead (above)."""
    if file is None:
        file = getattr(sys.modules.get("__main__"), "__file__", None)
    base_dir = os.path.dirname(os.path.abspath(file)) if file else os.getcwd()
    try:
        if profile_mode_requested():
            result = profile_calls(target, fn, role, base_dir=base_dir)
        else:
            result = measure(target, fn, role, base_dir=base_dir)
    except BaseException as e:  # a bug here or in torch: still one line, never a bare traceback
        traceback.print_exc()
        result = error_result(target, role, e)
    sys.exit(_finish(result))


def run_file(path, role="candidate", result_fd=None, nonce=None, target_from=None, seed=None):
    """Measures the `kernel` of a target script, importing it only after the session is ready.

    target_from: take TARGET from this file instead (the baseline's), so a candidate cannot
    loosen its own definition. Returns the result dict (also emitted when result_fd is given).
    """
    path = os.path.abspath(path)
    tpath = os.path.abspath(target_from) if target_from else path
    base_dir = os.path.dirname(tpath)
    try:
        target = Target.from_dict(read_target_file(tpath), base_dir)
    except (TargetError, SyntaxError, OSError) as e:
        result = error_result({"name": None}, role, StageError("target", str(e)))
    else:
        try:
            parts = target.workload_targets()
            sessions = [prepare(sub, seed) for _, sub in parts]
        except (TargetError, StageError) as e:
            result = error_result(target, role, e)
        else:
            # The script's `import hotkernel_contract` must get this module, not a vendored copy.
            sys.modules["hotkernel_contract"] = sys.modules[__name__]
            try:
                fn = load_kernel(path)
            except StageError as e:
                result = error_result(target, role, e)
            else:
                if not target.workloads:
                    result = sessions[0].measure(fn, role)
                else:
                    result = combine_workloads([(n, s.measure(fn, role)) for (n, _), s in zip(parts, sessions)],
                                               target)
    if result_fd is not None:
        emit(result, result_fd, nonce)
    return result


def load_kernel(path):
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "_hk_target_" + hashlib.sha256(path.encode()).hexdigest()[:8]
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BaseException as e:
        raise StageError("import", "importing %s failed: %s: %s" % (path, type(e).__name__, e))
    fn = getattr(module, "kernel", None)
    if not callable(fn):
        raise StageError("function", "%s defines no function `kernel`" % path)
    return fn


# Their names before other modules used them (bench/ probes still do).
_cycle, _generator, _error_fields, _load_kernel = cycle, seeded_generator, error_fields, load_kernel


def _cli(argv):
    import argparse
    p = argparse.ArgumentParser(prog="hotkernel_contract.py", description="Run a protocol-%d target file." % PROTOCOL)
    p.add_argument("--run", required=True, metavar="TARGET_FILE", help="a *_baseline.py or *_candidate.py script")
    p.add_argument("--role", choices=("baseline", "candidate"), default="candidate")
    p.add_argument("--target-from", help="read TARGET from this file (the baseline) instead")
    p.add_argument("--seed", type=int, help="override the target's seed")
    a = p.parse_args(argv)
    fd, nonce = _result_channel()
    try:
        result = run_file(a.run, a.role, None, None, a.target_from, a.seed)
    except BaseException as e:
        traceback.print_exc()
        result = error_result({"name": None}, a.role, e)
    if result.get("status") == "error":
        sys.stderr.write("hotkernel: %s\n" % result.get("reason"))
    emit(result, fd, nonce)
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
