"""verify --fail-on: the gate's outcome in the result and the CLI's exit code (0 pass, 1 fail,
4 undecided, 2 usage), on the fake runner (HOTKERNEL_FAKE_RUNNER) and once on real
interpreters; and progress as log lines when stderr is not a terminal (--quiet silences it)."""
import json

import pytest

from test_loop import Fake, failing, hk, write_script

CASES = {  # candidate: (mean ms, per-run overrides); the baseline is 1.0 ms
    "slower": (1.10, None),
    "incorrect": (0.5, failing(1)),
    "aa": (1.0, None),
}
EXPECTED = {  # (gate, candidate) -> (outcome, exit code)
    ("slower", "slower"): ("fail", 1),
    ("slower", "incorrect"): ("fail", 1),
    ("slower", "aa"): ("pass", 0),
    ("not-faster", "slower"): ("fail", 1),
    ("not-faster", "incorrect"): ("fail", 1),
    ("not-faster", "aa"): ("undecided", 4),
    ("regression:5", "slower"): ("fail", 1),
    ("regression:5", "incorrect"): ("fail", 1),
    ("regression:5", "aa"): ("pass", 0),
}


@pytest.mark.parametrize("gate,case", sorted(EXPECTED))
def test_every_gate_on_a_slower_an_incorrect_and_an_a_a_candidate(tmp_path, gate, case):
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0, sd=0.01)
    mean, runs = CASES[case]
    cand = f.script("c.py", mean=mean, sd=0.01, runs=runs)
    r = hk("--json", "verify", base, cand, "--n", "10", "--fail-on", gate, env=f.env(3))
    outcome, code = EXPECTED[(gate, case)]
    assert r.returncode == code, (r.returncode, r.stderr[-2000:])
    out = json.loads(r.stdout)
    assert out["gate"]["outcome"] == outcome, out["gate"]
    assert out["gate"]["fail_on"] == gate and out["gate"]["reason"]


def test_without_fail_on_a_slower_verdict_exits_0_and_has_no_gate(tmp_path):
    f = Fake(tmp_path)
    r = hk("--json", "verify", f.script("b.py"), f.script("c.py", mean=1.2), env=f.env())
    assert r.returncode == 0, r.stderr
    assert "gate" not in json.loads(r.stdout)


def test_a_regression_within_the_bound_passes_and_one_past_it_fails(tmp_path):
    f = Fake(tmp_path)
    base = f.script("b.py", mean=1.0, sd=0.002)
    within = f.script("w.py", mean=1.02, sd=0.002)  # 2% slower: the seed's rule says slower
    past = f.script("p.py", mean=1.10, sd=0.002)
    r = hk("--json", "verify", base, within, "--fail-on", "regression:5", env=f.env())
    out = json.loads(r.stdout)
    assert out["verdict"] == "slower" and out["gate"]["outcome"] == "pass" and r.returncode == 0, out["gate"]
    r = hk("--json", "verify", base, past, "--fail-on", "regression:5", env=f.env())
    assert r.returncode == 1 and "more than 5% slower" in json.loads(r.stdout)["gate"]["reason"]


def test_a_bad_gate_is_a_usage_error_before_any_run(tmp_path):
    f = Fake(tmp_path)
    r = hk("verify", f.script("b.py"), f.script("c.py"), "--fail-on", "slowr", env=f.env())
    assert r.returncode == 2
    assert "slower, not-faster or regression:<pct>" in r.stderr and "slowr" in r.stderr
    assert "hotkernel verify:" not in r.stderr  # no run started, so no progress line
    r = hk("verify", f.script("b.py"), f.script("c.py"), "--fail-on", "regression:x" * 5000, env=f.env())
    assert r.returncode == 2 and len(r.stderr) < 600


def test_the_gate_decides_on_real_interpreters_too(tmp_path):
    base = write_script(tmp_path, "b.py", mean=1.0, sd=0.01)
    cand = write_script(tmp_path, "c.py", mean=1.3, sd=0.01)
    r = hk("verify", base, cand, "--n", "4", "--fail-on", "slower")
    assert r.returncode == 1, r.stderr
    assert "gate:      fail (slower): the candidate is slower" in r.stdout


def test_progress_in_a_log_is_a_line_at_most_a_second_and_quiet_silences_it(tmp_path):
    base = write_script(tmp_path, "b.py", mean=1.0, sd=0.01, pre="time.sleep(0.4)")
    cand = write_script(tmp_path, "c.py", mean=1.0, sd=0.01, pre="time.sleep(0.4)")
    r = hk("verify", base, cand, "--n", "4", "--no-stop-early", "--no-warm")
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.startswith("hotkernel verify: ")]
    assert lines, r.stderr
    assert "\r" not in r.stderr and "\033[" not in r.stderr  # no terminal codes in a log
    assert 1 <= len(lines) <= 10  # 10 runs of ~0.5 s: not one line per run
    assert any("of 4" in l for l in lines)
    q = hk("--quiet", "verify", base, cand, "--n", "2", "--no-stop-early")
    assert q.returncode == 0 and "hotkernel verify: " not in q.stderr
