"""bench, verify and record end to end, on a scripted fake runner and on real interpreters.

The verdict, A/A, stop-early, threshold and record tests run on the fake runner
(HOTKERNEL_FAKE_RUNNER, src/process/fake_runner.h): each run's "ms" is drawn from a normal
distribution seeded by (trial, script, role, run index, warm-up), as a synthetic script would
draw it, but no process starts, so a verify takes milliseconds and no test depends on the
machine's load. What needs a real interpreter (a crash's traceback, a hang killed at its
timeout, a silent or malformed script) runs the synthetic scripts below for real.

Each synthetic script draws its "ms" from a seeded normal distribution. The seed mixes a
per-test trial number (env HK_TRIAL) with the role and run index hotkernel gives each run
(HOTKERNEL_ROLE, HOTKERNEL_RUN_INDEX, HOTKERNEL_WARMUP), so every run differs and every trial
is reproducible.
"""
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cli_support import H200_UUID, McpSession

BIN = os.path.abspath(os.environ.get("HOTKERNEL_BIN", "build/hotkernel"))
# Any Python 3 runs the synthetic scripts; Debian's starts fastest here (no site packages scan).
PY = os.environ.get("HOTKERNEL_TEST_PYTHON") or ("/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable)

SCRIPT = """\
import json, os, random, sys, time
rng = random.Random("{{}}:{{}}:{{}}:{{}}".format(os.environ.get("HK_TRIAL", "0"), os.environ.get("HOTKERNEL_ROLE"),
                    os.environ.get("HOTKERNEL_RUN_INDEX"), os.environ.get("HOTKERNEL_WARMUP")))
run = int(os.environ.get("HOTKERNEL_RUN_INDEX", "0"))
warm = os.environ.get("HOTKERNEL_WARMUP") == "1"
{pre}
line = {{"ms": max(rng.gauss({mean}, {sd}), 1e-6), "ok": {ok}, "seed": {seed}, "shapes": {shapes},
        "dtype": "fp32", "iters": 1}}
{extra}
print("warming up ...")
print(json.dumps(line))
"""


def write_script(dirpath, name, mean=1.0, sd=0.02, ok=True, seed=0, shapes=((4096,),), pre="", extra=""):
    p = Path(dirpath) / name
    p.write_text(SCRIPT.format(mean=mean, sd=sd, ok=ok, seed=seed, shapes=json.dumps([list(s) for s in shapes]),
                               pre=pre, extra=extra))
    return str(p)


# ---- the fake runner -------------------------------------------------------------------------

_fake_ids = itertools.count()


class Fake:
    """Scripts answered by the fake runner: each has a stub file (bench and verify check that the
    file exists) and an entry in the runner's script giving the line the synthetic script above
    would print: ms ~ N(mean, sd), ok, seed, shapes, dtype, iters."""

    def __init__(self, dirpath):
        self.dir = Path(dirpath)
        self.scripts = {}

    def script(self, name, mean=1.0, sd=0.02, ok=True, seed=0, shapes=((4096,),), line=None, runs=None):
        p = self.dir / name
        p.write_text("# answered by the fake runner (HOTKERNEL_FAKE_RUNNER); never run\n")
        self.scripts[name] = {"ms": {"mean": mean, "sd": sd}, "stdout_before": "warming up ...\n",
                              "line": {"ok": ok, "seed": seed, "shapes": [list(s) for s in shapes], "dtype": "fp32",
                                       "iters": 1, **(line or {})},
                              "runs": runs or {}}
        return str(p)

    def env(self, trial=0):
        f = self.dir / f"fake-runner-{next(_fake_ids)}.json"
        f.write_text(json.dumps({"seed": trial, "programs": {"nvidia-smi": {"spawn_failed": True}},
                                 "scripts": self.scripts}))
        return {"HOTKERNEL_FAKE_RUNNER": str(f)}


def failing(*indices):
    """Per-run overrides: these timed runs print ok=false (the script's `ok="run != 3"`)."""
    return {str(i): {"line": {"ok": False}} for i in indices}


def hk(*args, env=None, cwd=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BIN, "--python", PY, *args], capture_output=True, text=True, env=e, cwd=cwd,
                          timeout=timeout)


def hk_json(*args, **kw):
    r = hk("--json", *args, **kw)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_bench_aggregates_every_run(tmp_path):
    f = Fake(tmp_path)
    s = f.script("k.py", line={"roofline_inputs": {"flops": 1e9, "bytes": 2e6, "dtype": "fp32"}})
    out = hk_json("bench", s, "--n", "5", env=f.env())
    assert out["n"] == 5
    assert len(out["samples_ms"]) == 5 and len(out["runs"]) == 5
    assert len(set(out["samples_ms"])) == 5, "each run must draw its own sample"
    assert out["mean_ms"] == pytest.approx(sum(out["samples_ms"]) / 5)
    assert out["min_ms"] == min(out["samples_ms"])
    assert out["seed"] == 0
    assert out["roofline_inputs"] == {"flops": 1e9, "bytes": 2e6, "dtype": "fp32"}
    assert out["self_reported"] is True
    assert out["ok"] is True
    assert all(r["line"]["ms"] == r["ms"] for r in out["runs"])


def test_bench_warns_about_noise_and_failed_checks(tmp_path):
    f = Fake(tmp_path)
    s = f.script("noisy.py", sd=0.3, runs=failing(2))
    out = hk_json("bench", s, "--n", "4", env=f.env())
    assert out["ok"] is False
    by_id = {w["id"]: w["message"] for w in out["warnings"]}
    assert by_id.get("script_check_failed", "").startswith("run(s) 2 printed ok=false"), out["warnings"]
    assert "cv" in by_id.get("high_variance", ""), out["warnings"]


def test_profile_check_is_the_harness_s_own_and_says_when_it_could_not_run(tmp_path):
    # A plain script's line cannot supply the cross-check: only the harness profiles.
    f = Fake(tmp_path)
    s = f.script("k.py", line={"profile_check": {"ms_over_span": 1.0, "span_per_call_ms": 1.0}})
    out = hk_json("bench", s, "--n", "2", "--profile-check", env=f.env())
    assert "profile_check" not in out
    assert any(w["id"] == "profile_check_untrusted" for w in out["warnings"]), out["warnings"]
    plain = hk_json("bench", s, "--n", "2", env=f.env())["warnings"]
    assert not any(w["id"].startswith("profile_check") or "profile_check" in w["message"] for w in plain), plain


def test_bench_and_verify_results_carry_only_catalogue_ids(tmp_path):
    # Agents match the id: every warning and flag of a result has one from docs/warnings.md, and
    # none is the `unclassified` an older result file's bare string reads as.
    docs = hk("docs", "--warnings")
    assert docs.returncode == 0, docs.stderr
    catalogue = set(re.findall(r"^\| `([a-z0-9_]+)` \|", docs.stdout, re.M))
    assert "single_run" in catalogue and "unclassified" not in catalogue, sorted(catalogue)
    f = Fake(tmp_path)
    noisy = f.script("noisy.py", sd=0.3, runs=failing(2), line={"ok": None})
    unchecked = f.script("unchecked.py", line={"ok": None})
    base = f.script("base.py", mean=1.0, line={"ok": None})
    cand = f.script("cand.py", mean=0.05, line={"ok": None})
    results = {"bench n=4": hk_json("bench", noisy, "--n", "4", env=f.env()),
               "bench n=1": hk_json("bench", unchecked, "--n", "1", env=f.env()),
               "verify": verdict_of(f, base, cand, 6, 1, 0, "--no-stop-early")}
    seen = set()
    for name, r in results.items():
        for key in ("warnings", "flags"):
            for item in r.get(key, []):
                assert isinstance(item, dict) and isinstance(item.get("message"), str), (name, item)
                assert item.get("id") in catalogue, (name, key, item)
                seen.add(item["id"])
    # The results above raise findings of bench, of the comparison and of a flag.
    assert {"script_check_failed", "single_run", "output_unchecked", "self_reported_timing",
            "speedup_over_10x"} <= seen, sorted(seen)


def verdict_of(fake, base, cand, n=10, warmup=0, trial=0, *extra):
    return hk_json("verify", base, cand, "--n", str(n), "--warmup", str(warmup), *extra, env=fake.env(trial))


def test_a_a_is_inconclusive_in_at_least_90_percent_of_50_trials(tmp_path):
    f = Fake(tmp_path)
    base = f.script("a_baseline.py")
    cand = f.script("a_candidate.py")
    # Each trial seeds every draw afresh: the candidate's runs are not the baseline's.
    verdicts = [verdict_of(f, base, cand, 8, 0, t)["verdict"] for t in range(50)]
    assert set(verdicts) <= {"inconclusive", "faster", "slower"}
    assert verdicts.count("inconclusive") >= 45, verdicts


def test_true_10_percent_slowdown_is_slower(tmp_path):
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("c.py", mean=1.1)
    out = verdict_of(f, base, cand, 6, 1, 0, "--no-stop-early")
    assert out["verdict"] == "slower", out["reasons"]
    assert out["speedup"] == pytest.approx(1 / 1.1, rel=0.03)
    ci = out["speedup_ci95"]
    assert ci["low"] < ci["high"] < 1.0
    # ABBA: 7 pairs (1 warm-up) = 14 runs; pair 1 baseline first, pair 2 candidate first.
    roles = [(r["role"], r["warmup"]) for r in out["runs"]]
    assert len(roles) == 14
    assert [r for r, _ in roles[:4]] == ["baseline", "candidate", "candidate", "baseline"]
    assert out["baseline"]["n"] == 6 and len(out["baseline"]["samples_ms"]) == 6
    assert out["n"] == 6 and out["stopped_early"] is None


def test_a_clear_difference_stops_after_three_pairs_and_keeps_the_seeds_rule(tmp_path):
    # cv 1% and a 10% slowdown: |diff| is ~8 standard errors at 3 pairs, past twice the threshold.
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("c.py", mean=1.1)
    out = verdict_of(f, base, cand, n=10, warmup=0)
    assert out["verdict"] == "slower", out["reasons"]
    assert out["n"] == 3 and out["n_max"] == 10 and len(out["runs"]) == 6
    assert "stopped after 3 pairs" in out["stopped_early"]
    assert abs(out["diff_ms"]) > 2 * out["threshold_ms"]  # the seed's rule holds, with room


def test_a_large_difference_stops_after_one_abba_cycle(tmp_path):
    # sd 0.02 and a 50% slowdown: |diff| is ~25 standard errors after 2 pairs, past the 10
    # thresholds a stop there needs where calibrate measured no spread between processes.
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("c.py", mean=1.5)
    out = verdict_of(f, base, cand, n=10, warmup=0)
    assert out["verdict"] == "slower", out["reasons"]
    assert out["n"] == 2 and len(out["runs"]) == 4
    assert "stopped after 2 pairs (one ABBA cycle)" in out["stopped_early"], out["stopped_early"]
    assert abs(out["diff_ms"]) > 10 * out["threshold_ms"]


H200_LIST = "0, NVIDIA H200, %s, 580.159.04, 143771, 700.00, 9.0, 1980, Disabled\n" % H200_UUID


def with_calibrated_gpu(fake, tmp_path, cv_pct, runs=6):
    """The fake runner's env with nvidia-smi listing one H200 and a calibration of it cached,
    whose spread between processes is cv_pct over `runs` processes."""
    cal = tmp_path / "cache" / "hotkernel" / "calibration" / f"{H200_UUID}.json"
    cal.parent.mkdir(parents=True, exist_ok=True)
    cal.write_text(json.dumps({"mem_gbs": 4250, "measured_at": "2026-12-06T00:00:00Z", "process_spread_pct": cv_pct,
                               "details": {"process_spread": {"runs": runs, "cv_pct": cv_pct}}}))
    env = fake.env()
    script = json.loads(Path(env["HOTKERNEL_FAKE_RUNNER"]).read_text())
    script["programs"]["nvidia-smi"] = {"stdout": H200_LIST}
    Path(env["HOTKERNEL_FAKE_RUNNER"]).write_text(json.dumps(script))
    return {**env, "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_the_floor_of_an_early_stop_is_the_upper_bound_of_calibrate_s_spread(tmp_path):
    # calibrate measured a cv of 0.4% over 6 processes: its 95% upper bound is 0.836%, so a stop
    # after 2 pairs needs an effect of 2.5% (3x) and one from 3 pairs 1.67% (2x). A 2% slowdown
    # with little noise is 40 standard errors at 2 pairs and over 3x the cv itself (1.2%), yet
    # under 3x its bound: it stops at 3 pairs, not 2.
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0, sd=0.0005)
    cand = f.script("c.py", mean=1.02, sd=0.0005)
    out = hk_json("verify", base, cand, "--n", "10", "--warmup", "0", env=with_calibrated_gpu(f, tmp_path, 0.4))
    assert out["verdict"] == "slower", out["reasons"]
    assert out["process_spread_pct"] == pytest.approx(0.4)
    assert out["process_spread_bound_pct"] == pytest.approx(0.4 * 2.0893, rel=1e-3)
    assert out["n"] == 3 and "stopped after 3 pairs" in out["stopped_early"], out["stopped_early"]
    # A spread measured over more processes is bounded tighter: 20 give 1.38x, a 2-pair floor of
    # 1.66%, which the 2% slowdown is past.
    out = hk_json("verify", base, cand, "--n", "10", "--warmup", "0",
                  env=with_calibrated_gpu(f, tmp_path, 0.4, runs=20))
    assert out["n"] == 2 and "one ABBA cycle" in out["stopped_early"], out["stopped_early"]


def test_verify_s_measured_floor_is_a_copy_of_the_call_s_size(tmp_path):
    # calibrate timed a 64 MiB copy (bytes a call) at 2125 GB/s and the large one at 4250: a call
    # moving 64 MiB has a measured floor of 67108864 B / 2125e9 B/s = 0.031581 ms, not half that,
    # and a side at 0.04 ms is at 79% of it.
    f = Fake(tmp_path)
    inputs = {"roofline_inputs": {"flops": 0, "bytes": 67108864, "dtype": "bf16"}}
    base = f.script("b.py", mean=0.04, sd=0.00001, line=inputs)
    cand = f.script("c.py", mean=0.04, sd=0.00001, line=inputs)
    env = with_calibrated_gpu(f, tmp_path, 0.01)
    cal = tmp_path / "cache" / "hotkernel" / "calibration" / f"{H200_UUID}.json"
    cal.write_text(json.dumps({**json.loads(cal.read_text()),
                               "copy_curve": [{"bytes": 67108864, "gbs": 2125}, {"bytes": 2147483648, "gbs": 4250}]}))
    out = hk_json("verify", base, cand, "--n", "2", "--warmup", "0", env=env)
    r = out["roofline"]
    assert r["measured_mem_gbs"] == pytest.approx(2125), r
    assert r["attainable_ms_measured"] == pytest.approx(0.031581, rel=1e-4), r
    assert r["baseline_pct_of_measured_floor"] == pytest.approx(100 * 0.031581 / 0.04, rel=0.01), r
    assert not [x for x in out["flags"] if "floor" in x["id"]], out["flags"]


def test_a_decisive_effect_under_twice_the_bound_is_warned_about(tmp_path):
    # cv 0.4% (bound 0.836%): a 1% slowdown that runs to the 10th pair is decisive by the seed's
    # rule, and under twice the bound (1.67%): the warning names the bound and where it came from.
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0, sd=0.0005)
    cand = f.script("c.py", mean=1.01, sd=0.0005)
    out = hk_json("verify", base, cand, "--n", "4", "--warmup", "0", "--no-stop-early",
                  env=with_calibrated_gpu(f, tmp_path, 0.4))
    assert out["verdict"] == "slower", out["reasons"]
    w = next((w for w in out["warnings"] if w["id"] == "effect_under_process_spread"), None)
    assert w is not None, out["warnings"]
    assert "1.67%" in w["message"] and "upper bound" in w["message"] and "6 processes" in w["message"], w["message"]


CLOCK_VOIDED = {"line": {"ok": False, "status": "invalid", "parent_clock": {"bound": "broken", "only_cause": True},
                          "reason": "the run reports samples of 0.84 ms (32 calls) but the parent saw each take 2.65 ms"}}


def test_a_run_the_parent_clock_alone_voided_is_run_again_once_and_said(tmp_path):
    # A busy host stretched the windows of the candidate's run 2; its rerun holds, and stands in.
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("c.py", mean=1.0, runs={"2": [CLOCK_VOIDED, {}]})
    out = verdict_of(f, base, cand, 3, 0, 0, "--no-stop-early", "--detail", "full")
    assert out["verdict"] != "invalid", out["reasons"]
    assert [w["id"] for w in out["warnings"]].count("parent_clock_rerun") == 1, out["warnings"]
    assert "candidate run 2" in next(w["message"] for w in out["warnings"] if w["id"] == "parent_clock_rerun")
    assert len(out["voided_runs"]) == 1 and out["voided_runs"][0]["status"] == "invalid"
    assert sum(1 for r in out["runs"] if r.get("rerun_of")) == 1
    # A flag the voided run raised stays in the verdict's flags: the rerun is no second chance.
    flagged = {"line": dict(CLOCK_VOIDED["line"], flags=[{"id": "signal_handler", "message": "a handler on SIGALRM"}])}
    cand3 = f.script("c3.py", mean=1.0, runs={"2": [flagged, {}]})
    out3 = verdict_of(f, base, cand3, 3, 0, 0, "--no-stop-early")
    assert [(x["id"], x.get("role")) for x in out3["flags"]] == [("signal_handler", "candidate")], out3["flags"]
    # Voided again: invalid, as any run its clock voids.
    cand2 = f.script("c2.py", mean=1.0, runs={"2": [CLOCK_VOIDED, CLOCK_VOIDED]})
    assert verdict_of(f, base, cand2, 3, 0, 0, "--no-stop-early")["verdict"] == "invalid"


def two_workload_runs(a, b, wrong_at=None):
    """Per-run lines of a two-workload target (A, B), each run's figures given; at run `wrong_at`
    A's check fails, and with it the run, as the contract says it."""
    runs = {}
    for i in range(len(a)):
        wa = {"name": "A", "ms": a[i], "ok": True, "status": "ok", "samples_ms": [a[i]], "shapes": [[8]]}
        if i + 1 == wrong_at:
            wa.update(ok=False, status="incorrect", reason="check call: 3 elements outside tolerance")
        wb = {"name": "B", "ms": b[i], "ok": True, "status": "ok", "samples_ms": [b[i]], "shapes": [[16]]}
        line = {"workloads": [wa, wb]}
        if i + 1 == wrong_at:
            line.update(ok=False, status="incorrect", reason="at A: check call: 3 elements outside tolerance")
        runs[str(i + 1)] = {"line": line}
    return runs


# A is settled (too close to become decisive) after 3 pairs; B stays between 1x and 2.5x the
# seed's threshold to the last pair, so the verify runs all 10. A then shifts 5% (pairs 4-10).
ALT = [0.01 * (-1) ** i for i in range(10)]
A_BASE = [1 + x for x in ALT]
A_CAND = [A_BASE[i] + (0.001 if i < 3 else 0.05) for i in range(10)]
B_BASE = [2 + x for x in ALT]
B_CAND = [x + 0.02 for x in B_BASE]


def test_a_workload_settled_early_keeps_its_verdict_while_another_runs_on(tmp_path):
    # The seed's rule over all 10 pairs would call A slower, but a verify of A alone would have
    # stopped at 3, inconclusive, and so does A here: more workloads must not mean more chances
    # for a false verdict.
    f = Fake(tmp_path)
    base = f.script("b.py", mean=3.0, sd=0.01, runs=two_workload_runs(A_BASE, B_BASE))
    cand = f.script("c.py", mean=3.0, sd=0.01, runs=two_workload_runs(A_CAND, B_CAND))
    out = verdict_of(f, base, cand, n=10, warmup=0)
    assert out["n"] == 10 and out["stopped_early"] is None
    per = {w["name"]: w for w in out["workloads"]}
    assert per["A"]["verdict"] == "inconclusive" and per["A"]["settled_after_pairs"] == 3, per["A"]
    assert per["A"]["baseline"]["n"] == 3  # its figures are those pairs'
    assert per["B"]["verdict"] == "slower" and "settled_after_pairs" not in per["B"]
    assert out["aggregate"]["verdict"] == "slower" and out["aggregate"]["slower_on"] == ["B"]
    assert "own pairs" in out["aggregate"]["geomean_ci95"]["pairs"]  # the interval says what it covers


def test_a_workload_settled_early_is_still_incorrect_when_a_later_run_fails_its_check(tmp_path):
    # Only the timing stops early: A wrong in the candidate's 6th run is incorrect, settled or not.
    f = Fake(tmp_path)
    base = f.script("b.py", mean=3.0, sd=0.01, runs=two_workload_runs(A_BASE, B_BASE))
    cand = f.script("c.py", mean=3.0, sd=0.01, runs=two_workload_runs(A_CAND, B_CAND, wrong_at=6))
    out = verdict_of(f, base, cand, n=10, warmup=0)
    assert out["n"] == 6 and "candidate run 6 printed ok=false" in out["stopped_early"]
    per = {w["name"]: w for w in out["workloads"]}
    assert per["A"]["verdict"] == "incorrect" and "settled_after_pairs" not in per["A"], per["A"]
    assert out["verdict"] == "incorrect" and out["aggregate"]["incorrect_on"] == ["A"]


def test_a_failing_candidate_stops_at_once_as_incorrect(tmp_path):
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("c.py", mean=0.5, ok=False)
    out = verdict_of(f, base, cand, n=10, warmup=0)
    assert out["verdict"] == "incorrect"
    assert len(out["runs"]) == 2 and "ok=false" in out["stopped_early"]


def test_a_candidate_failing_in_the_warm_up_pair_stops_there_and_is_reported_once(tmp_path):
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("c.py", mean=0.5, ok=False)
    out = verdict_of(f, base, cand, n=10, warmup=1)
    assert out["verdict"] == "incorrect"
    assert len(out["runs"]) == 2 and "warm-up run 1" in out["stopped_early"]
    assert len(out["reasons"]) == 1, out["reasons"]


def test_true_speedup_is_faster_with_record_fields(tmp_path):
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("gelu_candidate.py", mean=0.8)
    out = verdict_of(f, base, cand, n=4, warmup=1)
    assert out["verdict"] == "faster"
    assert out["speedup"] == pytest.approx(1.25, rel=0.04)
    assert out["target"] == "gelu"
    m = out["measurement"]
    for key in ("gpu", "clocks_before", "clocks_after", "host", "timestamp_utc", "hotkernel_version", "contract_hash",
                "commands"):
        assert key in m, key
    assert m["commands"]["candidate"].endswith("gelu_candidate.py")
    assert m["gpu"] is None or isinstance(m["gpu"], dict)
    if m["gpu"] is None:
        assert m["gpu_note"]


def test_ok_false_is_incorrect_and_reports_no_speedup(tmp_path):
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0)
    cand = f.script("c.py", mean=0.5, runs=failing(2))  # run 2: before one ABBA cycle could settle it
    out = verdict_of(f, base, cand, n=4)
    assert out["verdict"] == "incorrect"
    assert "speedup" not in out
    assert any("candidate run 2 printed ok=false" in r for r in out["reasons"]), out["reasons"]


@pytest.mark.parametrize("field,kw", [("seed", {"seed": 1}), ("shapes", {"shapes": ((2048,),)})])
def test_mismatch_is_invalid(tmp_path, field, kw):
    f = Fake(tmp_path)
    base = f.script("b.py")
    cand = f.script("c.py", mean=0.5, **kw)
    out = verdict_of(f, base, cand, n=3)
    assert out["verdict"] == "invalid"
    assert "speedup" not in out
    assert any(r.startswith("the scripts disagree on " + field) for r in out["reasons"]), out["reasons"]


def test_baseline_failing_its_check_is_invalid(tmp_path):
    f = Fake(tmp_path)
    base = f.script("b.py", ok=False)
    cand = f.script("c.py")
    out = verdict_of(f, base, cand, n=3)
    assert out["verdict"] == "invalid"
    assert any("baseline fails its own check" in r for r in out["reasons"])


def test_a_cancelled_verify_frees_the_gpu_for_the_next_call_at_once(tmp_path):
    # The fake's candidate hangs in run 2 (the first run of pair 2) for up to 600 s while it
    # holds the GPU lock. Cancelling the call must end that run: the bench sent after it then
    # gets the lock and answers well inside the session's 60 s watchdog.
    f = Fake(tmp_path)
    base = f.script("b.py", runs={"1": {"sleep_s": 1.1}})  # past the progress throttle (1 s)
    cand = f.script("c.py", runs={"2": {"hang": True}})
    with McpSession("--python", PY, env=f.env(), timeout=60) as session:
        session._send({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
                       "params": {"name": "verify", "arguments": {"baseline": base, "candidate": cand, "n": 4,
                                                                   "warmup": 0, "timeout_s": 600},
                                  "_meta": {"progressToken": "v"}}})
        while True:  # progress is sent at most once a second: wait until run 2 has started
            m = json.loads(session.proc.stdout.readline())
            assert m.get("id") != 900, m
            if m.get("method") == "notifications/progress" and m["params"]["progress"] >= 1:
                break
        time.sleep(0.3)
        session.notify("notifications/cancelled", {"requestId": 900, "reason": "test"})
        res = session.call("bench", {"script": base, "n": 2})
        assert not res.get("isError"), res
        assert res["structuredContent"]["n"] == 2


def test_crashing_run_is_an_error_naming_the_run_and_its_stderr(tmp_path):
    base = write_script(tmp_path, "b.py")
    cand = write_script(tmp_path, "c.py", pre='if run == 3 and not warm: raise ZeroDivisionError("boom in kernel")')
    r = hk("verify", base, cand, "--n", "4", "--warmup", "1")
    assert r.returncode == 1
    assert "candidate run 3 of 4" in r.stderr
    assert "exited with status 1" in r.stderr
    assert "ZeroDivisionError: boom in kernel" in r.stderr
    assert r.stdout == ""


def test_hanging_run_is_killed_at_its_timeout(tmp_path):
    s = write_script(tmp_path, "hang.py", pre='if run == 2: print("stuck", flush=True); time.sleep(600)')
    t0 = time.monotonic()
    r = hk("bench", s, "--n", "3", "--timeout-s", "2", timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == 1
    assert "run 2 of 3" in r.stderr and "timed out after 2 s" in r.stderr, r.stderr
    assert elapsed < 20, elapsed


def test_silent_script_is_a_clear_error(tmp_path):
    s = Path(tmp_path) / "silent.py"
    s.write_text("import sys\nsys.stderr.write('loaded weights\\n')\n")
    r = hk("bench", str(s), "--n", "2")
    assert r.returncode == 1
    assert "run 1 of 2" in r.stderr
    assert 'printed no JSON line with "ms"' in r.stderr
    assert "loaded weights" in r.stderr


def test_nan_ms_is_a_clear_error(tmp_path):
    s = write_script(tmp_path, "nan.py", extra='line["ms"] = float("nan")')
    r = hk("bench", s, "--n", "2")
    assert r.returncode == 1
    assert "NaN" in r.stderr and "run 1 of 2" in r.stderr


def test_protocol_error_line_reason_is_shown(tmp_path):
    # What hotkernel_contract prints when the kernel raised: ms null, status error, exit 1.
    s = Path(tmp_path) / "err.py"
    s.write_text("import json, sys\n"
                 "sys.stderr.write('hotkernel: call: kernel raised RuntimeError: bad shape\\n')\n"
                 "print(json.dumps({'protocol': 3, 'status': 'error', 'ok': False, 'ms': None,\n"
                 "                  'reason': 'call: kernel raised RuntimeError: bad shape'}))\n"
                 "sys.exit(1)\n")
    r = hk("bench", str(s), "--n", "2")
    assert r.returncode == 1
    assert "run 1 of 2" in r.stderr and "exited with status 1" in r.stderr
    assert "it reported reason: call: kernel raised RuntimeError: bad shape" in r.stderr, r.stderr


def test_missing_script_is_a_clear_error(tmp_path):
    r = hk("verify", str(tmp_path / "nope.py"), str(tmp_path / "nope2.py"))
    assert r.returncode == 1
    assert "baseline script" in r.stderr and "does not exist" in r.stderr


@pytest.fixture(scope="module")
def verify_json(tmp_path_factory):
    d = tmp_path_factory.mktemp("verify")
    f = Fake(d)
    base = f.script("gelu_baseline.py", mean=1.0)
    cand = f.script("gelu_candidate.py", mean=0.9)
    out = hk_json("verify", base, cand, "--n", "3", "--warmup", "0", env=f.env())
    p = d / "verify.json"
    p.write_text(json.dumps(out))
    return p


def read_board(d):
    return (Path(d) / "LEADERBOARD.md").read_text()


def test_record_writes_result_and_leaderboard(tmp_path, verify_json):
    out = hk_json("record", "--result", str(verify_json), "--note", "fused the epilogue", "--who", "test suite",
                  cwd=tmp_path)
    f = Path(tmp_path) / out["file"]
    assert f.parent == Path(tmp_path) / "results" / "gelu"
    doc = json.loads(f.read_text())
    assert doc["format"] == 1 and doc["note"] == "fused the epilogue" and doc["who"] == "test suite"
    assert doc["result"] == json.loads(verify_json.read_text())
    board = read_board(tmp_path)
    assert out["row"] in board
    assert "## gelu on" in board
    cell = "no gain" if doc["result"]["verdict"] != "faster" else "×"
    assert cell in out["row"]
    # JSON text works as well as a path.
    out2 = hk_json("record", "--result", verify_json.read_text(), "--note", "again", "--who", "t", cwd=tmp_path)
    assert out2["rows"] == 2


def test_record_rejects_bad_input(tmp_path, verify_json):
    r = hk("record", "--result", str(verify_json), "--note", "two\nlines", "--who", "t", cwd=tmp_path)
    assert r.returncode == 2 and "one line" in r.stderr
    r = hk("record", "--result", '{"ms": 1}', "--note", "x", "--who", "t", cwd=tmp_path)
    assert r.returncode == 1 and "not a verify result" in r.stderr
    r = hk("record", "--result", str(tmp_path / "missing.json"), "--note", "x", "--who", "t", cwd=tmp_path)
    assert r.returncode == 1 and "missing.json" in r.stderr
    assert not (Path(tmp_path) / "results").exists()


def test_eight_concurrent_records_give_eight_files_and_eight_rows(tmp_path, verify_json):
    def one(i):
        return hk("--json", "record", "--result", str(verify_json), "--note", f"attempt {i}", "--who", "t",
                  cwd=tmp_path)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(8)))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    files = sorted((Path(tmp_path) / "results" / "gelu").glob("*.json"))
    assert len(files) == 8
    board = read_board(tmp_path)
    for i in range(8):
        assert f"| attempt {i} |" in board
    assert board.count("`gelu/") == 8


def test_corrupt_file_is_skipped_and_named(tmp_path, verify_json):
    bad = Path(tmp_path) / "results" / "gelu" / "20260101T000000Z-dead.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"format": 1, "target": "gelu", "result": {"verdict": ')
    (Path(tmp_path) / "results" / "notes.txt").write_text("mine")
    out = hk_json("record", "--result", str(verify_json), "--note", "x", "--who", "t", cwd=tmp_path)
    skipped = {s["file"]: s["reason"] for s in out["skipped"]}
    assert skipped == {"gelu/20260101T000000Z-dead.json": "not valid JSON", "notes.txt": "not a .json file"}
    assert out["rows"] == 1
    assert "20260101T000000Z-dead.json" in read_board(tmp_path)
    assert [w["id"] for w in out["warnings"]] == ["results_skipped"]


def test_read_only_results_dir_is_a_clear_error_and_keeps_earlier_results(verify_json):
    # As root a read-only folder is still writable, so drop to nobody for the second record.
    base = Path(tempfile.mkdtemp(prefix="hk-ro-"))
    try:
        os.chmod(base, 0o755)
        shutil.copy(verify_json, base / "verify.json")
        os.chmod(base / "verify.json", 0o644)
        first = hk_json("record", "--result", "verify.json", "--note", "first", "--who", "t", cwd=base)
        before = {p: p.read_bytes() for p in (base / "results").rglob("*") if p.is_file()}
        board_before = read_board(base)
        for p in [base, *(base / "results").rglob("*")]:
            if p.is_dir():
                os.chmod(p, 0o555)
        cmd = [BIN, "--python", PY, "record", "--result", "verify.json", "--note", "second", "--who", "t"]
        if os.geteuid() == 0:
            assert shutil.which("setpriv"), "running as root needs setpriv to drop privileges for this test"
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=base, timeout=60)
        assert r.returncode == 1, r.stdout
        assert "results/gelu" in r.stderr and "writable" in r.stderr, r.stderr
        after = {p: p.read_bytes() for p in (base / "results").rglob("*") if p.is_file()}
        assert after == before
        assert read_board(base) == board_before
        assert first["file"] in {str(p.relative_to(base)) for p in before}
    finally:
        for p in [base, *base.rglob("*")]:
            if p.is_dir():
                os.chmod(p, 0o755)
        shutil.rmtree(base)
