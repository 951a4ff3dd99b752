"""Workloads end to end on the CPU, under both torch generations: one target at several shapes
(`new --dims`), bench's samples per shape, verify's verdict per shape and its summary (a candidate
faster at two shapes and slower at the third is `mixed`, naming it; one wrong at one shape is
`incorrect`, naming it), and the leaderboard's cell per shape."""
import csv
import io
import json
import os
import subprocess
import textwrap

import pytest

from conftest import BIN, ROOT, TIMEOUT, hk_new

# A deliberately slow baseline (the same multiply 30 times over), so a candidate can be faster.
KERNEL = textwrap.dedent("""\
    import torch

    def scale(x, w):
        y = x * w
        for _ in range(30):
            y = y * 1.0
        return y
    """)
DIMS = ("./k.py:scale", "--shape", "MxK", "--dims", "M=8,64,256", "--dims", "K=128", "--extra", "w:K",
        "--flops", "M*K", "--min-bytes", "4*(M*K+K)", "--dtype", "fp32", "--iters", "10", "--rotate", "")
NAMES = ["M=8", "M=64", "M=256"]


def candidate(target_dir, name, body):
    """A copy of the scaffolded candidate whose kernel() is `body` (indented into it)."""
    src = (target_dir / "scale_candidate.py").read_text()
    head, _, _ = src.partition("def kernel(x, w):")
    path = target_dir / name
    path.write_text(head + "def kernel(x, w):\n" + textwrap.indent(textwrap.dedent(body), "    ") +
                    "\n\nif __name__ == \"__main__\":\n    hk.main(TARGET, kernel, role=\"candidate\")\n")
    return path


def hk(py, *args, cwd, measured=True):
    extra = ["--python", py, "--detail", "full"] if measured else []
    r = subprocess.run([str(BIN), *args, *extra, "--json"], cwd=str(cwd), capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.stdout.strip(), r.stderr[-2000:]
    return r.returncode, json.loads(r.stdout), r.stderr


@pytest.fixture(scope="module")
def target(py, tmp_path_factory):
    d = tmp_path_factory.mktemp("workloads")
    (d / "k.py").write_text(KERNEL)
    rc, res, err = hk_new(py, *DIMS, cwd=d)
    assert rc == 0, err
    return d, res


def test_a_listed_workload_set_is_written_as_given(py, tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    rc, res, err = hk_new(py, "./k.py:scale", "--shape", "MxK", "--dims", "M=8,K=128; M=16,K=64", "--extra", "w:K",
                          "--dtype", "fp32", "--no-warm", cwd=tmp_path)
    assert rc == 0, err
    assert res["target"]["workloads"] == [{"M": 8, "K": 128}, {"M": 16, "K": 64}]
    assert [w["name"] for w in res["probe"]["workloads"]] == ["M=8,K=128", "M=16,K=64"]  # both dims differ


def test_new_with_dims_writes_one_target_holding_every_workload(py, target):
    d, res = target
    t = res["target"]
    assert t["shape"] == "MxK" and t["extra"] == {"w": "K"} and t["flops"] == "M*K"
    assert t["workloads"] == [{"M": 8, "K": 128}, {"M": 64, "K": 128}, {"M": 256, "K": 128}]
    assert [w["name"] for w in res["probe"]["workloads"]] == NAMES  # the probe ran every shape
    text = (d / "scale_baseline.py").read_text()
    assert '"workloads": [{"M": 8, "K": 128}' in text  # readable: the dims, not a blob


def test_bench_gives_each_workload_its_samples_and_the_run_totals(py, target):
    d, _ = target
    rc, r, err = hk(py, "bench", "scale_baseline.py", "--n", "2", cwd=d)
    assert rc == 0, err
    assert [w["name"] for w in r["workloads"]] == NAMES
    for w, m in zip(r["workloads"], (8, 64, 256)):
        assert w["n"] == 2 and len(w["samples_ms"]) == 2 and w["ok"] is True
        assert w["shapes"]["x"] == [m, 128]
        assert w["roofline_inputs"]["flops"] == m * 128  # the expression, per workload
        assert w["roofline_inputs"]["bytes"] == 4 * (m * 128 + 128) + 4 * m * 128  # min_bytes + the output
    # the run's figure is the total over its workloads
    for i, run in enumerate(r["samples_ms"]):
        assert run == pytest.approx(sum(w["samples_ms"][i] for w in r["workloads"]), rel=1e-9)
    assert "total_is" in r


def test_verify_faster_at_two_shapes_and_slower_at_one_is_mixed_naming_it(py, target, tmp_path):
    d, _ = target
    candidate(d, "mixed_candidate.py", """\
        if x.shape[0] == 256:
            y = x * w
            for _ in range(120):
                y = y * 1.0
            return y
        return x * w
        """)
    rc, r, err = hk(py, "verify", "scale_baseline.py", "mixed_candidate.py", "--n", "4", cwd=d)
    assert rc == 0, err
    assert r["verdict"] == "mixed", r["reasons"]
    assert r["aggregate"]["slower_on"] == ["M=256"]
    assert r["aggregate"]["faster_on"] == ["M=8", "M=64"]
    assert "slower at M=256" in r["reasons"][0]
    per = {w["name"]: w for w in r["workloads"]}
    assert per["M=256"]["verdict"] == "slower" and per["M=8"]["verdict"] == "faster"
    assert per["M=256"]["speedup"] < 1 < per["M=8"]["speedup"]
    # the geometric mean over the workloads, with its interval from the pairs
    g = r["aggregate"]["geomean_speedup"]
    assert g == pytest.approx((per["M=8"]["speedup"] * per["M=64"]["speedup"] * per["M=256"]["speedup"]) ** (1 / 3))
    assert r["speedup"] == pytest.approx(g)
    assert r["speedup_ci95"]["low"] <= g <= r["speedup_ci95"]["high"]
    # record: the leaderboard shows a cell per workload, the speedup only where it is faster
    rc, rec, err = hk(py, "record", "--result", r["full_record"], "--note", "fast small M", "--who", "test",
                      "--export", f"csv:{d}/w.csv", "--export", f"bmf:{d}/w.json", "--export", f"{d}/w.md",
                      "--export", f"github-action-benchmark:{d}/g.json", cwd=d, measured=False)
    assert rc == 0, err
    # the exports: a row per workload beside the totals, each with its own verdict and speedup
    rows = list(csv.DictReader(io.StringIO((d / "w.csv").read_text())))
    assert [(x["workload"], x["side"]) for x in rows][:2] == [("", "baseline"), ("", "candidate")]
    cand = {x["workload"]: x for x in rows if x["side"] == "candidate"}
    assert set(cand) == {"", "M=8", "M=64", "M=256"}
    assert cand["M=256"]["verdict"] == "slower" and cand[""]["verdict"] == "mixed"
    assert float(cand["M=256"]["speedup"]) == pytest.approx(per["M=256"]["speedup"], rel=1e-4)
    assert float(cand["M=8"]["mean_ms"]) == pytest.approx(per["M=8"]["candidate"]["mean_ms"], rel=1e-4)
    bmf = json.loads((d / "w.json").read_text())
    assert bmf["scale/M=256/candidate"]["speedup"]["value"] == pytest.approx(per["M=256"]["speedup"])
    assert {"scale/baseline", "scale/candidate", "scale/M=8/baseline"} <= set(bmf)
    md = (d / "w.md").read_text()
    assert "| workload | verdict |" in md and "| M=256 | slower |" in md
    names = [g["name"] for g in json.loads((d / "g.json").read_text())]
    assert names[:2] == ["scale baseline", "scale candidate"] and "scale M=64 candidate" in names
    board = (d / "LEADERBOARD.md").read_text()
    header = next(line for line in board.splitlines() if line.startswith("| # |"))
    assert "| M=8 | M=64 | M=256 |" in header
    row = next(line for line in board.splitlines() if "mixed_candidate.py" in line)
    cells = [c.strip() for c in row.split("|")]
    at = header.split("|").index(" M=8 ")
    assert cells[at].endswith("×") and cells[at + 1].endswith("×") and cells[at + 2] == "slower"
    assert cells[2] == "mixed"  # the aggregate's Speedup cell never shows a gain that hides a loss


def test_verify_wrong_at_one_shape_only_is_incorrect_naming_it(py, target):
    d, _ = target
    candidate(d, "wrong_candidate.py", """\
        y = _baseline(x, w)
        return y + 1 if x.shape[0] == 64 else y
        """)
    rc, r, err = hk(py, "verify", "scale_baseline.py", "wrong_candidate.py", "--n", "3", cwd=d)
    assert rc == 0, err
    assert r["verdict"] == "incorrect"
    assert r["aggregate"]["incorrect_on"] == ["M=64"]
    assert all("M=64" in reason for reason in r["reasons"]), r["reasons"]
    per = {w["name"]: w["verdict"] for w in r["workloads"]}
    assert per["M=64"] == "incorrect" and per["M=8"] != "incorrect" and per["M=256"] != "incorrect"
    assert "speedup" not in r


def test_a_later_workloads_settings_changed_and_undone_before_its_samples_are_seen(py, target):
    # A sample compares its own workload's objects; every workload's are compared after its last
    # sample. This candidate loosens the last workload's check settings from the first
    # workload's calls, passes that workload's check call with wrong outputs, and puts the
    # settings back at its next call, before any of that workload's samples is compared.
    d, _ = target
    candidate(d, "undone_candidate.py", """\
        import sys
        if x.shape[0] == 8 and not _kept:
            f = sys._getframe(0)
            while f is not None and not isinstance(f.f_locals.get("truns"), list):
                f = f.f_back
            if f is not None:
                run = f.f_locals["truns"][-1]
                _kept.append((run, run._check_args))
                a = run._check_args
                run._check_args = (a[0], a[1], 1e30, 1e30)
        if x.shape[0] == 256 and _kept and not _kept[-1] is None:
            run, args = _kept[-1]
            _kept.append(None)
            return _baseline(x, w) + 1  # the check call, judged with the loosened settings
        if x.shape[0] == 256 and _kept and _kept[-1] is None and len(_kept) == 2:
            _kept[0][0]._check_args = _kept[0][1]  # undone before any sample of M=256
            _kept.append(None)
        return _baseline(x, w)
        """)
    path = d / "undone_candidate.py"
    path.write_text(path.read_text().replace("def kernel(x, w):", "_kept = []\n\n\ndef kernel(x, w):", 1))
    rc, r, err = hk(py, "verify", "scale_baseline.py", "undone_candidate.py", "--n", "2", cwd=d)
    assert rc == 0, err
    assert r["verdict"] == "invalid", (r["verdict"], r.get("reasons"))
    assert any("changed the harness's own state" in reason and "_check_args" in reason
               for reason in r["reasons"]), r["reasons"]


@pytest.mark.parametrize("args, needle", [
    (("--shape", "MxN", "--dims", "M=8"), "'N' is neither a size nor a dim"),
    (("--shape", "MxK", "--dims", "M=8,K=2; M=16"), "every workload gives the same dims"),
    (("--shape", "MxK", "--dims", "M=0", "--dims", "K=4"), "not a positive integer"),
    (("--shape", "MxK", "--dims", "M=8", "--dims", "K=4", "--flops", "2*M*Q"), "'Q', which is not a dim"),
])
def test_bad_workloads_are_a_clear_error(py, target, tmp_path, args, needle):
    (tmp_path / "k.py").write_text(KERNEL)
    r = subprocess.run([str(BIN), "new", "./k.py:scale", *args, "--python", py, "--no-warm", "--out-dir", "o"],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 1, r.stderr
    assert needle in r.stderr, r.stderr
    assert not (tmp_path / "o" / "scale_candidate.py").exists()  # nothing half-written


def test_torch_profile_runs_the_workload_asked_for_and_names_a_wrong_one(py, target):
    d, _ = target
    script = str(d / "scale_candidate.py")
    rc, r, err = hk(py, "torch-profile", script, "--workload", "M=64", "--python", py, cwd=d, measured=False)
    assert rc == 0, err
    assert r["profile_mode"]["workload"] == "M=64" and r["profile_mode"]["shapes"]["x"] == [64, 128], r["profile_mode"]
    rc, r, err = hk(py, "torch-profile", script, "--python", py, cwd=d, measured=False)
    assert rc == 0, err
    assert r["profile_mode"]["workload"] == "M=8"  # the first, without the parameter
    p = subprocess.run([str(BIN), "torch-profile", script, "--workload", "M=7", "--python", py], cwd=str(d),
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 1
    assert "workload 'M=7' is not one of this target's: M=8, M=64, M=256" in p.stderr, p.stderr


def test_profile_runs_the_workload_asked_for_under_ncu(py, target, tmp_path):
    # The fake ncu (tests/fixtures/fake-nsight) runs the command: the target's profile mode prints
    # its line, which names the shape it ran.
    d, _ = target
    fake = ROOT / "tests" / "fixtures" / "fake-nsight"
    env = dict(os.environ, PATH=str(fake) + os.pathsep + os.environ["PATH"], FAKE_NCU_MODE="ok",
               FAKE_NCU_LOG=str(tmp_path / "ncu.log"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    p = subprocess.run([str(BIN), "--python", py, "--json", "profile", "--tool", "ncu", "--workload", "M=256",
                        "python %s" % (d / "scale_baseline.py")], cwd=str(d), capture_output=True, text=True,
                       timeout=TIMEOUT, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(p.stdout)
    assert r["target"]["workload"] == "M=256", r["target"]
    line = json.loads([x for x in r["program_output_tail"].splitlines() if x.startswith("{")][-1])
    assert line["status"] == "profiled" and line["workload"] == "M=256" and line["shapes"]["x"] == [256, 128], line
