#!/usr/bin/env python3
"""GPU check of the profilers on targets `new` scaffolds. Run on a CUDA machine:

    HOTKERNEL_BIN=build/hotkernel python tests/gpu/check_profilers.py      # with the torch interpreter

Scaffolds torch.nn.functional:gelu at 4096x8192 bf16 and the bundled RMSNorm with its fused
Triton candidate (examples/rmsnorm), then runs torch-profile, profile --tool ncu and profile
--tool nsys on the gelu baseline and the Triton candidate. Each must list the kernels of the
target's profiled calls and nothing else: every kernel row is the candidate's (a gelu kernel, or
the Triton _rmsnorm_row), in the 5 calls of the contract's profile mode, so no input draw, fp32
reference or check kernel is among them. Prints each wall time against the 30 s goal (ncu's own
replay time on top). An nsys that cannot write reports on this machine is reported as broken,
not as a failure. Exits 1 on a failure; skips (exit 0) without torch or a CUDA GPU.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("HOTKERNEL_BIN", os.path.join(ROOT, "build", "hotkernel"))
PY = os.environ.get("HOTKERNEL_PYTHON", sys.executable)
CALLS = 5  # the contract's PROFILE_CALLS
GOAL_S = 30


def hk(args, cwd, timeout=900):
    t0 = time.monotonic()
    r = subprocess.run([BIN, "--python", PY, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    try:
        out = json.loads(r.stdout) if r.returncode == 0 else None
    except ValueError:
        out = None
    return r.returncode, out, r.stderr, wall


def scaffold(tmp):
    """{label: (script, a test that a kernel name is the candidate's)} for the two targets."""
    targets = {}
    gelu = os.path.join(tmp, "gelu")
    rc, _, err, _ = hk(["new", "torch.nn.functional:gelu", "--shape", "4096x8192", "--dtype", "bf16",
                        "--out-dir", gelu, "--json"], tmp)
    if rc != 0:
        raise RuntimeError("new gelu failed: %s" % err.strip()[-2000:])
    targets["gelu bf16 4096x8192 (baseline)"] = (os.path.join(gelu, "gelu_baseline.py"), lambda n: "gelu" in n.lower())
    rms = os.path.join(tmp, "rmsnorm")
    os.makedirs(rms)
    shutil.copy(os.path.join(ROOT, "examples", "rmsnorm", "rmsnorm.py"), rms)
    rc, _, err, _ = hk(["new", "./rmsnorm.py:rmsnorm", "--shape", "512x4096", "--extra", "w:4096", "--iters", "20",
                        "--flops", "8388608", "--out-dir", ".", "--json"], rms)
    if rc != 0:
        raise RuntimeError("new rmsnorm failed: %s" % err.strip()[-2000:])
    # The fused Triton candidate of the bundled example, over the candidate `new` wrote.
    shutil.copy(os.path.join(ROOT, "examples", "rmsnorm", "rmsnorm_candidate.py"), rms)
    targets["rmsnorm Triton candidate"] = (os.path.join(rms, "rmsnorm_candidate.py"), lambda n: "_rmsnorm_row" in n)
    return targets


def check_rows(label, tool, names_calls, is_candidates, failures):
    """names_calls: [(kernel name, calls)]. All must be the candidate's, CALLS calls in all."""
    others = [n for n, _ in names_calls if not is_candidates(n)]
    total = sum(c for n, c in names_calls if is_candidates(n))
    for n, c in names_calls:
        print("    %5d  %s" % (c, n[:150]))
    if not names_calls:
        failures.append("%s / %s: no kernel listed" % (label, tool))
    if others:
        failures.append("%s / %s: kernels that are not the candidate's: %s" % (label, tool, [o[:100] for o in others]))
    if total != CALLS:
        failures.append("%s / %s: the candidate's kernels ran %d times, not the %d profiled calls" % (label, tool, total,
                                                                                                    CALLS))


def main():
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not importable in %s; run this with the interpreter that has torch" % sys.executable)
        return 0
    if not torch.cuda.is_available():
        print("SKIP: no CUDA GPU visible to torch %s; this check needs a GPU" % torch.__version__)
        return 0
    if not os.access(BIN, os.X_OK):
        print("FAIL: hotkernel binary %s not found; build it or set HOTKERNEL_BIN" % BIN)
        return 1
    print("GPU: %s  torch %s  python %s  binary %s" % (torch.cuda.get_device_name(0), torch.__version__, PY, BIN))
    tmp = tempfile.mkdtemp(prefix="hk-check-profilers-")
    failures, times, notes = [], [], []
    targets = scaffold(tmp)
    nsys_broken = False
    for label, (script, is_candidates) in targets.items():
        cwd = os.path.dirname(script)
        print("\n== %s: %s" % (label, script))

        rc, r, err, wall = hk(["--json", "torch-profile", script, "--n", "50", "--timeout-s", "300"], cwd)
        times.append((label, "torch-profile", wall))
        print("  torch-profile: %.1f s" % wall)
        if rc != 0 or r is None:
            failures.append("%s / torch-profile failed (%.0f s): %s" % (label, wall, err.strip()[-1500:]))
        else:
            print("    profile_mode %s; ranges %s; %.2f us of kernels a call" % (
                json.dumps(r.get("profile_mode", {}).get("label")), [(g["name"], g["on"], g["calls"]) for g in
                                                                     r.get("ranges", [])],
                r.get("kernel_time_per_call_us") or 0))
            if "profile_mode" not in r:
                failures.append("%s / torch-profile: the target was not profiled in profile mode" % label)
            check_rows(label, "torch-profile", [(k["name"], k["calls"]) for k in r["kernels"]], is_candidates, failures)

        out = os.path.join(tmp, "ncu-" + os.path.basename(script)[:-3])
        rc, r, err, wall = hk(["--json", "profile", "--tool", "ncu", "python %s" % script, "--output", out,
                               "--timeout-s", "600"], cwd)
        times.append((label, "profile ncu", wall))
        print("  profile --tool ncu: %.1f s" % wall)
        if rc != 0 or r is None:
            failures.append("%s / ncu failed (%.0f s): %s" % (label, wall, err.strip()[-1500:]))
        else:
            if (r.get("target") or {}).get("mode") != "profile":
                failures.append("%s / ncu: not filtered to the target's range: %s" % (label, r.get("target")))
            rows = {}
            for k in r["kernels"]:
                rows[k["name"]] = rows.get(k["name"], 0) + 1
            print("    launches in the report: %s" % r.get("launches_in_file"))
            check_rows(label, "ncu", sorted(rows.items()), is_candidates, failures)

        if nsys_broken:  # one failed import says it for the machine; another would cost its ~2 GB trace again
            print("  profile --tool nsys: skipped (broken on this machine, see above)")
            continue
        out = os.path.join(tmp, "nsys-" + os.path.basename(script)[:-3])
        rc, r, err, wall = hk(["--json", "profile", "--tool", "nsys", "python %s" % script, "--output", out,
                               "--timeout-s", "600"], cwd)
        times.append((label, "profile nsys", wall))
        print("  profile --tool nsys: %.1f s" % wall)
        if rc != 0 or r is None:
            # nsys's own failure to write reports here (profile says so), not a capture range never entered
            if "cannot produce reports on this machine" in err or "nsys was not found" in err:
                notes.append("%s / nsys is broken or missing on this machine (not counted as a failure): %s"
                             % (label, err.strip().splitlines()[0][:300]))
                print("    nsys broken here: %s" % err.strip()[-600:])
                nsys_broken = True
            else:
                failures.append("%s / nsys failed (%.0f s): %s" % (label, wall, err.strip()[-1500:]))
        else:
            if (r.get("target") or {}).get("mode") != "profile":
                failures.append("%s / nsys: not captured to the target's range: %s" % (label, r.get("target")))
            check_rows(label, "nsys", [(k["name"], k["calls"]) for k in r["kernels"]], is_candidates, failures)

    print("\n%-34s %-15s %8s" % ("target", "tool", "wall_s"))
    for label, tool, wall in times:
        over = "" if wall <= GOAL_S else ("  over %d s%s" % (GOAL_S, " (ncu replays)" if "ncu" in tool else ""))
        print("%-34s %-15s %8.1f%s" % (label, tool, wall, over))
    for n in notes:
        print("NOTE: " + n)
    if failures:
        print("\nFAIL:\n  " + "\n  ".join(failures))
        return 1
    print("\nPASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
