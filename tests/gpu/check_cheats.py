#!/usr/bin/env python3
# Runs the whole adversarial table (tests/adversarial/cheats and honest) on the GPU: every
# cheat verified against the scaffolded F.gelu fp32 baseline at a GPU-sized shape, printed as
# `cheat | outcome | expected | pass`. Exit 1 if any cheat gets through or any honest candidate
# raises a false alarm; exit 0 with a message when there is no GPU.
#
#   HOTKERNEL_BIN=build/hotkernel HOTKERNEL_TORCH_PYTHON=python3 python3 tests/gpu/check_cheats.py [--only NAME,...] [--part 1/3]
import argparse
import concurrent.futures
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adversarial"))
import harness  # noqa: E402


def named_catch(res, err, why):
    """(ok, why): a catch names what the candidate did. Not a run error where the candidate kept
    the clock from timing anything, not the timer disagreement that follows a fallback from CUPTI
    (its cause, the candidate's calls launching nothing the clock saw, is the reason)."""
    if res is None and "no sample was timed" in err:
        return False, "ended as a run error (no sample was timed), not a verdict naming what the candidate did"
    reasons = (res or {}).get("reasons") or []
    if reasons and reasons[0].startswith("the scripts disagree on timer"):
        return False, "caught only by the timer disagreement, not by what the candidate did: %s" % reasons[0][:200]
    return True, why


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4096x4096", help="primary input shape (fp32); default 4096x4096 (64 MiB)")
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated cheat/honest names")
    ap.add_argument("--jobs", type=int, default=4, help="verifies at once (outcomes rest on checks, not timing; "
                    "hotkernel still times one run at a time per GPU; default 4)")
    ap.add_argument("--part", default="1/1", help="i/n: run every n-th candidate starting at the i-th (the whole "
                    "table took ~4 min on an H200 with 6 jobs, ~20 min with 1; split it across calls under a time limit)")
    a = ap.parse_args()
    part_i, part_n = (int(v) for v in a.part.split("/"))
    py = harness.torch_python(require_cuda=True)
    if py is None:
        print("check_cheats: skipped: no interpreter with torch that sees a CUDA GPU (set HOTKERNEL_TORCH_PYTHON)")
        return 0
    cheats, honest = harness.all_bodies()
    everything = [b.stem for b in cheats + honest]
    mine = {name for k, name in enumerate(everything) if k % part_n == part_i - 1}
    only = {s for s in a.only.split(",") if s}
    with tempfile.TemporaryDirectory(prefix="hk-cheats-") as d:
        t0 = time.time()
        base = harness.scaffold(d, py, device="cuda", shape=a.shape, iters=100, samples=10, warmup_s="auto")
        print("scaffolded %s in %.0f s" % (base, time.time() - t0), flush=True)
        todo = [(kind, body) for kind, bodies in (("cheat", cheats), ("honest", honest)) for body in bodies
                if not ((only and body.stem not in only) or body.stem not in mine)]
        dear = [body for _, body in todo if harness.module_flags(body)["dear"]]
        # Cheats that change what later verifies see run in homes of their own: test_persistence.py.
        todo = [(kind, body) for kind, body in todo if body not in dear and not harness.module_flags(body)["persists"]]
        # Cheats on the eager loop's own frames (a CPU sample's calls): on the GPU the calls are
        # captured once into a graph, so they have nothing to work on; tests/adversarial runs them.
        for kind, body in todo:
            if harness.module_flags(body)["cpu_only"]:
                print("%-22s | cheat  | skipped: works on the CPU's eager loop (tests/adversarial)" % body.stem, flush=True)
        todo = [(kind, body) for kind, body in todo if not harness.module_flags(body)["cpu_only"]]

        def one(kind, body):
            flags = harness.module_flags(body)
            expect = flags["gpu_expect"] if kind == "cheat" else "clean"
            cand = harness.make_candidate(d, body, base)
            t0 = time.time()
            rc, res, err = harness.verify(py, base, cand, n=a.n, warmup=a.warmup, timeout_s=600)
            took = time.time() - t0
            out = harness.outcome(rc, res, err)
            if kind == "honest" and res is None and "hk_gelu_ext" in err and "load_inline" in body.read_text():
                ok, why = True, "skipped: the CUDA extension did not build here"
                out = "not built"
            else:
                ok, why = harness.judge(expect, rc, res, err, harness.fake_ms_of(body) if kind == "cheat" else None)
                if ok and kind == "cheat" and expect == "caught":
                    ok, why = named_catch(res, err, why)
            box = (res or {}).get("sandbox") or {}
            if res is not None and box.get("fs") != "read-only outside scratch":  # the H200 has Landlock ABI 7
                ok, why = False, "the kernel sandbox was not in force: %s" % box
            speed = ""
            if res is not None and isinstance(res.get("speedup"), (int, float)):
                speed = " speedup %.3fx" % res["speedup"]
            if res is not None:
                c = res.get("candidate", {})
                if isinstance(c.get("mean_ms"), (int, float)):
                    speed += " cand %.4g ms" % c["mean_ms"]
            print("%-22s | %-6s | %-40s | expect %-8s | %s (%.0f s)%s" % (body.stem, kind, out, expect,
                                                                         "ok" if ok else "FAIL", took, speed),
                  flush=True)
            if not ok:
                print("    because " + why[:600], flush=True)
                for r in harness.candidate_reasons(res or {})[:2]:
                    print("    reason: " + r[:300], flush=True)
            return (body.stem, kind, out, expect, ok, why, took, speed)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            rows = list(pool.map(lambda kb: one(*kb), todo))
        # The parent's clock sees a sample's whole window: with other verifies on the same card,
        # an honest run's windows hold their work too (the blank candidate's baseline read 2.03 ms
        # a sample against 0.74 ms reported, 10 verifies at once on an H100). An honest row the
        # clock voided is verified again with the card to itself; that outcome is its row's.
        by_name = {b.stem: (kind, b) for kind, b in todo}
        for k, row in enumerate(rows):
            if row[1] == "honest" and not row[4] and "missing from the reported times" in row[5] and a.jobs > 1:
                print("%-22s | again, with the card to itself (the parent's clock voided it beside other verifies)"
                      % row[0], flush=True)
                rows[k] = one(*by_name[row[0]])
        for body in dear:
            # Against gelu a copy costs what the kernel does; against a baseline ~40 copies dear,
            # copies handed out on repeated input sets would show as a clean speedup.
            t0 = time.time()
            dbase = harness.scaffold_dear(d, py, device="cuda", shape=a.shape, iters=100, samples=10, warmup_s="auto")
            cand = harness.make_candidate(dbase.parent, body, dbase)
            rc, res, err = harness.verify(py, dbase, cand, n=a.n, warmup=a.warmup, timeout_s=600)
            ok, why = harness.judge_gains_nothing(res)
            out = harness.outcome(rc, res, err)
            print("%-22s | %-6s | %-40s | expect %-8s | %s (%.0f s) %s" % (body.stem, "cheat", out, "no gain",
                  "ok" if ok else "FAIL", time.time() - t0, why), flush=True)
            rows.append((body.stem, "cheat", out, "no gain (dear baseline)", ok, why, time.time() - t0, ""))
        failures = sum(0 if r[4] else 1 for r in rows)
    print()
    print("cheat | outcome | needs GPU")
    for name, kind, out, expect, ok, why, took, speed in rows:
        if kind == "cheat":
            path = harness.CHEATS / (name + ".py")
            print("%s | %s | %s" % (name, out, "yes" if path.exists() and harness.module_flags(path)["needs_cuda"] else "no"))
    print("\n%d row(s), %d failure(s)" % (len(rows), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
