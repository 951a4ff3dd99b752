"""Every bench/ path that README.md, docs/, python/, src/ and tests/ cite exists, and every
measured run kept under bench/runs/ is cited.

The docs and the contract's comments point at bench/runs/ for the measurements behind a claim
or a constant; a renamed or dropped run would leave the claim citing nothing, and a run nothing
cites is a log kept for no claim."""
import glob
import itertools
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCANNED = ("README.md", "docs", "python", "src", "tests")
SKIP_DIRS = {"node_modules", "__pycache__", ".pytest_cache"}
# "bench/" then path characters; "bench/verify" and the like (no folder, no extension) are words.
CITATION = re.compile(r"(?<![\w/.-])bench/[\w./{},*-]+")


def _expand_braces(path):
    """a-{x,y}.json -> a-x.json, a-y.json (as a shell would)."""
    parts = re.split(r"(\{[^{}]*\})", path)
    choices = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
    return ["".join(c) for c in itertools.product(*choices)]


def _is_path(cited):
    rest = cited[len("bench/"):]
    return "/" in rest.rstrip("/") or rest.endswith("/") or re.search(r"\.\w+$", rest) is not None


def _files(root):
    for top in SCANNED:
        start = os.path.join(root, top)
        if os.path.isfile(start):
            yield start
        for folder, dirs, names in os.walk(start):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            for name in names:
                yield os.path.join(folder, name)


def citations(root):
    """(file, line number, cited path) for every bench/ path cited under root's scanned folders."""
    found = []
    for path in _files(root):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(lines, 1):
            for match in CITATION.finditer(line):
                cited = match.group(0).rstrip(".,:;)")
                if _is_path(cited):
                    found.append((os.path.relpath(path, root), number, cited))
    return found


def missing(root):
    """The citations under root whose path (each brace alternative, each glob) does not exist."""
    absent = []
    for where, number, cited in citations(root):
        for one in _expand_braces(cited):
            target = os.path.join(root, one)
            if not (glob.glob(target) if "*" in one else os.path.exists(target)):
                absent.append("%s:%d: %s" % (where, number, one))
    return absent


def uncited_runs(root):
    """The folders under bench/runs/ that no scanned file (nor bench/README.md, the index of the
    probes that made them) names."""
    runs = os.path.join(root, "bench", "runs")
    names = sorted(d for d in os.listdir(runs) if os.path.isdir(os.path.join(runs, d))) if os.path.isdir(runs) else []
    texts = []
    for path in itertools.chain(_files(root), [os.path.join(root, "bench", "README.md")]):
        try:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
        except (UnicodeDecodeError, OSError):
            continue
    return [n for n in names if not any("runs/" + n in t for t in texts)]


def test_every_cited_bench_path_exists():
    assert missing(REPO) == []


def test_every_kept_run_is_cited():
    assert uncited_runs(REPO) == []


def test_an_uncited_run_is_reported(tmp_path):
    for name in ("2026-01-01-h200-cited", "2026-01-01-h200-forgotten"):
        (tmp_path / "bench" / "runs" / name).mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    b = "bench/"  # built here, so this file cites neither folder itself
    (tmp_path / "docs" / "page.md").write_text(f"Measured: `{b}runs/2026-01-01-h200-cited/`.\n")
    assert uncited_runs(str(tmp_path)) == ["2026-01-01-h200-forgotten"]


def test_the_docs_cite_measured_runs():
    cited = [c for _, _, c in citations(REPO)]
    assert any(c.startswith("bench/runs/") for c in cited), cited
    assert any(w.startswith("docs/measurement.md") for w, _, _ in citations(REPO))


def test_a_made_up_path_is_reported(tmp_path):
    run = tmp_path / "bench" / "runs" / "2026-01-01-h200-real"
    run.mkdir(parents=True)
    (run / "raw.jsonl").write_text("{}\n")
    (run / "bench-a.json").write_text("{}\n")
    (tmp_path / "docs").mkdir()
    made_up = "bench/" + "runs/2026-01-01-h200-made-up/raw.jsonl"
    b = "bench/"  # built here, so this file cites none of these paths itself
    (tmp_path / "docs" / "page.md").write_text(
        f"Real: `{b}runs/2026-01-01-h200-real/raw.jsonl`, {b}runs/2026-01-01-h200-real/.\n"
        f"Braces: `{b}runs/2026-01-01-h200-real/bench-{{a,b}}.json`; glob {b}runs/*/raw.jsonl.\n"
        f"Not a path: each {b}verify run. Made up: {made_up}.\n")
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "x.py").write_text(f"# see ({b}probes/nothing_probe.py)\n")
    assert missing(str(tmp_path)) == [
        "docs/page.md:2: " + b + "runs/2026-01-01-h200-real/bench-b.json",
        "docs/page.md:3: " + made_up,
        "python/x.py:1: " + b + "probes/nothing_probe.py",
    ]
