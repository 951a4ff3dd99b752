# Shared by test_cheats.py (CPU, pytest) and tests/gpu/check_cheats.py (H200): scaffold the
# common target with `hotkernel new`, turn a cheat or honest body into a candidate file, run
# `hotkernel verify baseline candidate --json`, and judge the outcome.
import ast
import functools
import json
import os
import pprint
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHEATS = HERE / "cheats"
HONEST = HERE / "honest"


def binary():
    return os.environ.get("HOTKERNEL_BIN", str(ROOT / "build" / "hotkernel"))


def torch_python(require_cuda=False):
    """An interpreter with torch (HOTKERNEL_TORCH_PYTHON, else the known ones), or None."""
    code = "import torch,sys; sys.exit(0 if (torch.cuda.is_available() or not %r) else 3)" % require_cuda
    for py in (os.environ.get("HOTKERNEL_TORCH_PYTHON"), os.environ.get("HOTKERNEL_PYTHON"), "/usr/bin/python3",
               "/opt/hotkernel-dev/torch2/bin/python", "python3"):
        if not py:
            continue
        try:
            if subprocess.run([py, "-c", code], capture_output=True, timeout=120).returncode == 0:
                return py
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


@functools.lru_cache(maxsize=None)
def torch_major(python):
    """The major version of the interpreter's torch (1 for Debian's 1.13)."""
    p = subprocess.run([python, "-c", "import torch; print(torch.__version__.split('.')[0])"], capture_output=True,
                       text=True, timeout=120)
    return int(p.stdout.strip())


def module_flags(path):
    """NEEDS_CUDA, EXPECT, GPU_EXPECT (the outcome on the GPU, where the calls are captured once
    into a graph, when it differs), TARGET_OVERRIDES, SHAPE (a target of that shape instead of the
    suite's small one, where a trick needs longer calls to show), ITERS (that many calls a sample
    for both scripts instead of the suite's 48, where a trick is judged at the default sample's
    length) and the first comment line of a body."""
    text = Path(path).read_text()
    tree = ast.parse(text)
    vals = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("NEEDS_CUDA", "EXPECT", "TARGET_OVERRIDES", "BUILD", "DEAR_BASELINE", "PERSISTS", "CPU_ONLY",
                        "NEEDS_TORCH2", "SHAPE", "ITERS", "GPU_EXPECT"):
                vals[name] = ast.literal_eval(node.value)
    first = text.splitlines()[0].lstrip("# ").strip() if text else ""
    return {"needs_cuda": bool(vals.get("NEEDS_CUDA", False)), "expect": vals.get("EXPECT", "clean"),
            "overrides": vals.get("TARGET_OVERRIDES", {}), "what": first, "dear": bool(vals.get("DEAR_BASELINE")),
            "persists": bool(vals.get("PERSISTS")), "cpu_only": bool(vals.get("CPU_ONLY")),
            "needs_torch2": bool(vals.get("NEEDS_TORCH2")), "shape": vals.get("SHAPE"), "iters": vals.get("ITERS"),
            "gpu_expect": vals.get("GPU_EXPECT") or vals.get("EXPECT", "clean")}


def read_target(path):
    tree = ast.parse(Path(path).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGET" for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError("%s has no TARGET" % path)


def write_target(path, target):
    """Rewrites the literal TARGET dict of a scaffolded file in place."""
    text = Path(path).read_text()
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGET" for t in node.targets):
            lines = text.splitlines(keepends=True)
            start, end = node.lineno - 1, node.end_lineno
            new = "TARGET = " + pprint.pformat(target, sort_dicts=False) + "\n"
            Path(path).write_text("".join(lines[:start]) + new + "".join(lines[end:]))
            return
    raise ValueError("%s has no TARGET" % path)


def scaffold(out_dir, python, device, shape, iters, samples, warmup_s, timeout=600, fn="torch.nn.functional:gelu"):
    """`hotkernel new` for `fn` (F.gelu) in fp32; returns the baseline path. Fewer samples and a
    short warm-up keep the CPU suite fast; both files keep one definition."""
    cmd = [binary(), "--python", python, "--json", "new", "--from", fn, "--shape", shape,
           "--dtype", "fp32", "--device", device, "--iters", str(iters), "--name", "gelu", "--out-dir", str(out_dir),
           "--force"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("hotkernel new failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
    base = Path(out_dir) / "gelu_baseline.py"
    target = read_target(base)
    target.update({"samples": samples, "warmup_s": warmup_s})
    for f in (base, Path(out_dir) / "gelu_candidate.py"):
        write_target(f, target)
    return base


DEAR_GELU = """import torch.nn.functional as F


def dear_gelu(x):
    y = x
    for _ in range(40):  # a kernel far dearer than a copy of its output
        y = F.gelu(x)
    return y
"""


def scaffold_dear(out_dir, python, device, shape, iters, samples, warmup_s):
    """A gelu target whose baseline costs ~40 copies of its output (for copy_repeats)."""
    out_dir = Path(out_dir) / "dear"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "dear.py").write_text(DEAR_GELU)
    return scaffold(out_dir, python, device, shape, iters, samples, warmup_s, fn=str(out_dir / "dear.py") + ":dear_gelu")


def judge_gains_nothing(res):
    """(ok, why) for copy_repeats against the dear baseline: caught (incorrect, invalid), or not
    under 0.8x the baseline's time with one set per call (copies handed out on repeated sets
    read ~0.5x or less). Not the verdict: the same work on both sides is `faster` by the seed's
    rule ~3% of the time (its A/A rate; CI saw one at 0.971x)."""
    if res is None:
        return False, "verify failed"
    if res.get("verdict") in ("incorrect", "invalid"):
        return True, "caught: %s" % res.get("verdict")
    c, b = res.get("candidate", {}), res.get("baseline", {})
    ratio = c.get("mean_ms", 0) / b["mean_ms"] if b.get("mean_ms") else 0.0
    same_k = all(r["line"].get("calls_per_sample") == r["line"].get("rotate_k") for r in res.get("runs", []))
    return (ratio >= 0.8 and same_k,
            "verdict %s, candidate/baseline time %.3f, one set per call %s" % (res.get("verdict"), ratio, same_k))


def make_candidate(out_dir, body_path, baseline):
    """<out>/<name>_cand.py: the contract import, the baseline's TARGET (plus any overrides the
    cheat asks for), then the body."""
    flags = module_flags(body_path)
    target = read_target(baseline)
    target.update(flags["overrides"])
    body = Path(body_path).read_text()
    dest = Path(out_dir) / ("%s_cand.py" % Path(body_path).stem)
    dest.write_text("import hotkernel_contract as hk\n\nTARGET = " + pprint.pformat(target, sort_dicts=False) +
                    "\n\n" + body)
    return dest


def verify(python, baseline, candidate, n=2, warmup=0, timeout_s=600, env=None, flags=()):
    """Runs verify (with extra CLI `flags`); returns (exit code, result dict or None, stderr)."""
    cmd = [binary(), "--python", python, "--json", "verify", str(baseline), str(candidate), "--n", str(n),
           "--warmup", str(warmup), "--timeout-s", str(timeout_s)] + list(flags)
    full = dict(os.environ)
    full.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s * (2 * (n + warmup)) + 120, env=full)
    try:
        res = json.loads(p.stdout) if p.returncode == 0 else None
    except ValueError:
        res = None
    return p.returncode, res, p.stderr


def candidate_reasons(res):
    out = list(res.get("reasons", []))
    for r in res.get("runs", []):
        line = r.get("line") or {}
        if r.get("role") == "candidate" and line.get("reason"):
            out.append(line["reason"])
    return out


def outcome(rc, res, err):
    """One word for the table: incorrect, invalid, flagged(...), faster, slower, inconclusive, error."""
    if res is None:
        return "error: " + (err.strip().splitlines() or ["?"])[-1][:160]
    flags = [f.get("id", "?") for f in res.get("flags", [])]
    v = res.get("verdict")
    return v + ("" if not flags else " flagged(%s)" % ",".join(sorted(set(flags))))


# A defeated trick's verify may be called faster by chance, never by this much (see judge).
DEFEATED_MAX_SPEEDUP = 1.05


def judge(expect, rc, res, err, fake_ms=None, control=None):
    """(ok, why) for one candidate. caught: incorrect/invalid or a flag; defeated: the trick did
    nothing (no clean 'faster' by 5% or more, and the fake number did not reach the result); clean: an honest
    candidate passes with no flag. control: for a defeated trick, the result of the untouched
    candidate verified right after it; a gain is then one by 5% or more over the control's speedup."""
    if res is None:
        # A cheat that makes the harness refuse the run outright is caught; an honest one is not ok.
        return (expect == "caught", "verify failed: " + err.strip()[-400:])
    v = res.get("verdict")
    flags = res.get("flags", [])
    on_baseline = [f for f in flags if f.get("role") == "baseline"] + \
        [r for r in res.get("reasons", []) if "baseline" in r and "candidate" not in r]
    if on_baseline:
        # The baseline is the untouched scaffold: anything found there is a false alarm of the
        # harness, and it would make every cheat look caught.
        return False, "the harness faulted the untouched baseline: %s" % on_baseline[:2]
    if expect == "caught":
        return (v in ("incorrect", "invalid") or bool(flags), "verdict %s, flags %s" % (v, flags))
    if expect == "defeated":
        # A defeated trick leaves the baseline's own work, so its verify is an A/A one: at n = 2
        # pairs the seed's rule calls identical work faster ~9% of the time (its statistic has ~2
        # degrees of freedom; the H200 saw 1.002x called faster under the CUPTI timer). Had the
        # trick worked (the work skipped), the candidate would read several times faster.
        c = res.get("candidate", {})
        faked = fake_ms is not None and isinstance(c.get("min_ms"), (int, float)) and c["min_ms"] <= fake_ms * 10
        speedup = res.get("speedup") if isinstance(res.get("speedup"), (int, float)) else 1.0
        floor, beside = 1.0, ""
        if control is not None:
            # What the machine alone gives an untouched candidate at this moment (seen at 1.5-2x
            # with two busy processes on 2 cores: the baseline's runs slowed, not the candidate's).
            cs = control.get("speedup") if isinstance(control.get("speedup"), (int, float)) else 1.0
            floor = max(1.0, cs)
            beside = "; the untouched candidate beside it: verdict %s, speedup %.3fx, runs %s" % (
                control.get("verdict"), cs, _runs_text(control))
        gained = v == "faster" and not flags and speedup >= DEFEATED_MAX_SPEEDUP * floor
        return (not gained and not faked, "verdict %s, speedup %.3fx, candidate min %s ms, runs (ms, in order) %s%s"
                % (v, speedup, c.get("min_ms"), _runs_text(res), beside))
    ok = v not in ("incorrect", "invalid") and not flags
    return ok, "verdict %s, flags %s, reasons %s" % (v, flags, candidate_reasons(res)[:2])


def _runs_text(res):
    return " ".join("%s %.4g" % (r.get("role", "?")[0], r["ms"]) for r in res.get("runs", [])
                    if isinstance(r.get("ms"), (int, float)))


def fastest_run_ratio(res):
    """The fastest baseline run's time over the fastest candidate run's: load on a shared machine
    only makes runs slower, so a ratio that every run carries (a faked clock, a slowed baseline)
    shows here while one slow run of an honest A/A pair does not."""
    fastest = {}
    for r in res.get("runs", []):
        if isinstance(r.get("ms"), (int, float)) and r["ms"] > 0:
            role = r.get("role")
            fastest[role] = min(fastest.get(role, r["ms"]), r["ms"])
    if "baseline" not in fastest or "candidate" not in fastest:
        return None
    return fastest["baseline"] / fastest["candidate"]


def fake_ms_of(body_path):
    text = Path(body_path).read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FAKE_MS" for t in node.targets):
            return ast.literal_eval(node.value)
    return 1e-05 if "fake" in Path(body_path).stem or "forge" in Path(body_path).stem else None


def all_bodies():
    return sorted(CHEATS.glob("*.py")), sorted(HONEST.glob("*.py"))
