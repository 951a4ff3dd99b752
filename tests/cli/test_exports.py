"""verify/record --export (Markdown, CSV, Bencher BMF, github-action-benchmark), the
schema_version every result carries (and the refusal of a newer major), and --baseline-ref
(the baseline from a git ref, in a temporary repository)."""
import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from test_loop import Fake, hk, hk_json, write_script

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def exported(tmp_path, *extra):
    f = Fake(tmp_path)
    base = f.script("gelu_baseline.py", mean=1.0, sd=0.01)
    cand = f.script("gelu_candidate.py", mean=0.8, sd=0.01)
    out = hk_json("verify", base, cand, "--n", "5", *extra, env=f.env())
    return out


def test_every_export_format_is_written_and_valid(tmp_path):
    out = exported(tmp_path, "--export", f"bmf:{tmp_path}/b.json", "--export", f"github-action-benchmark:{tmp_path}/g.json",
                   "--export", f"{tmp_path}/t.md", "--export", f"csv:{tmp_path}/t.txt")
    assert [e["format"] for e in out["exports"]] == ["bmf", "github-action-benchmark", "markdown", "csv"]

    bmf = json.loads((tmp_path / "b.json").read_text())
    jsonschema.validate(bmf, json.loads((FORMATS / "bmf.schema.json").read_text()))
    lat = bmf["gelu/candidate"]["latency"]
    assert lat["value"] == pytest.approx(out["candidate"]["mean_ms"] * 1e6)  # Bencher's latency is in ns
    assert lat["lower_value"] < lat["value"] < lat["upper_value"]
    assert bmf["gelu/candidate"]["speedup"]["value"] == pytest.approx(out["speedup"])
    assert set(bmf) == {"gelu/baseline", "gelu/candidate"}

    gab = json.loads((tmp_path / "g.json").read_text())
    jsonschema.validate(gab, json.loads((FORMATS / "github-action-benchmark-custom.schema.json").read_text()))
    assert [g["name"] for g in gab] == ["gelu baseline", "gelu candidate"]
    assert gab[1]["unit"] == "ms" and gab[1]["value"] == pytest.approx(out["candidate"]["mean_ms"])
    assert "verdict=faster" in gab[1]["extra"]

    md = (tmp_path / "t.md").read_text()
    assert md.startswith("### gelu: faster") and "| candidate | `" in md and "speedup" in md
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.txt").read_text())))
    assert [r["side"] for r in rows] == ["baseline", "candidate"]
    assert float(rows[1]["mean_ms"]) == pytest.approx(out["candidate"]["mean_ms"], rel=1e-5)
    assert rows[1]["verdict"] == "faster" and float(rows[1]["speedup"]) == pytest.approx(out["speedup"], rel=1e-4)


def test_a_bad_export_is_a_usage_error_before_any_run(tmp_path):
    f = Fake(tmp_path)
    r = hk("verify", f.script("b.py"), f.script("c.py"), "--export", "out.json", env=f.env())
    assert r.returncode == 2 and "FORMAT:PATH" in r.stderr and "bmf" in r.stderr
    assert not (tmp_path / "out.json").exists()


def test_record_exports_the_recorded_result(tmp_path):
    out = exported(tmp_path)
    (tmp_path / "v.json").write_text(json.dumps(out))
    rec = hk_json("record", "--result", str(tmp_path / "v.json"), "--note", "n", "--who", "test",
                  "--results-dir", str(tmp_path / "results"), "--leaderboard", str(tmp_path / "LB.md"),
                  "--export", f"bmf:{tmp_path}/r.json")
    assert rec["exports"] == [{"format": "bmf", "path": f"{tmp_path}/r.json"}]
    jsonschema.validate(json.loads((tmp_path / "r.json").read_text()),
                        json.loads((FORMATS / "bmf.schema.json").read_text()))


def test_results_carry_a_schema_version_and_a_newer_major_is_refused(tmp_path):
    out = exported(tmp_path)
    assert out["schema_version"] == "1.1" and out["hotkernel_version"]
    newer = dict(out, schema_version="2.0")
    (tmp_path / "v.json").write_text(json.dumps(newer))
    r = hk("record", "--result", str(tmp_path / "v.json"), "--note", "n", "--who", "test",
           "--results-dir", str(tmp_path / "results"), "--leaderboard", str(tmp_path / "LB.md"))
    assert r.returncode == 1 and "schema_version 2.0" in r.stderr and "upgrade hotkernel" in r.stderr
    # A newer file already under results/ is skipped and named, not read as ours.
    (tmp_path / "v.json").write_text(json.dumps(out))
    d = tmp_path / "results" / "gelu"
    d.mkdir(parents=True)
    (d / "2099-01-01T00-00-00Z-newer.json").write_text(json.dumps({"format": 1, "schema_version": "2.0", "target": "gelu",
                                                                  "result": newer, "note": "x", "who": "y"}))
    rec = hk_json("record", "--result", str(tmp_path / "v.json"), "--note", "n", "--who", "test",
                  "--results-dir", str(tmp_path / "results"), "--leaderboard", str(tmp_path / "LB.md"))
    assert any("schema_version 2.0" in s["reason"] for s in rec["skipped"]), rec["skipped"]


# ---- --baseline-ref ----------------------------------------------------------------------------

def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin", "HOME": str(repo)})


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = tmp_path / "repo"
    (r / "kernels").mkdir(parents=True)
    write_script(r / "kernels", "k.py", mean=1.0, sd=0.01)
    (r / "kernels" / "helper.py").write_text("X = 1\n")
    git(r, "init", "-q", "-b", "main")
    git(r, "add", ".")
    git(r, "commit", "-q", "-m", "base")
    write_script(r / "kernels", "k.py", mean=1.4, sd=0.01)  # the working copy is 40% slower
    return r


def test_baseline_ref_verifies_the_working_copy_against_the_ref(repo):
    out = hk_json("verify", str(repo / "kernels" / "k.py"), "--baseline-ref", "main", "--n", "4")
    assert out["verdict"] == "slower", out["reasons"]
    assert out["baseline_script"] == "main:kernels/k.py"
    ref = out["baseline_ref"]
    assert ref["ref"] == "main" and len(ref["commit"]) == 40 and ref["files"] == 2
    assert out["candidate_script"] == str(repo / "kernels" / "k.py")
    # the temporary copy is gone
    assert not any(Path(c).exists() for c in [out["measurement"]["commands"]["baseline"].split()[-1]])


def test_baseline_ref_errors_say_what_to_do(repo, tmp_path):
    r = hk("verify", str(repo / "kernels" / "k.py"), "--baseline-ref", "no-such-branch")
    assert r.returncode == 1 and "names no commit" in r.stderr and "git fetch" in r.stderr
    (repo / "kernels" / "new.py").write_text("print(1)\n")
    r = hk("verify", str(repo / "kernels" / "new.py"), "--baseline-ref", "main")
    assert r.returncode == 1 and "is not in main" in r.stderr
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    write_script(outside, "x.py")
    r = hk("verify", str(outside / "x.py"), "--baseline-ref", "main")
    assert r.returncode == 1 and "not inside a git repository" in r.stderr
    r = hk("verify", str(repo / "kernels" / "k.py"))
    assert r.returncode == 2 and "candidate" in r.stderr and "baseline" in r.stderr
