"""--plot on verify, bench, roofline and record, end to end through the CLI: the file is written
where asked, the result names it, the SVG parses as XML with a dot per timed run, the PNG's header
holds the canvas size, and a path that is neither .png nor .svg is refused before anything runs.
verify and bench run on the fake runner (test_loop.Fake), so no interpreter starts."""
import json
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from test_loop import Fake, hk, hk_json

SVG = "{http://www.w3.org/2000/svg}"


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", data[:16]
    return struct.unpack(">II", data[16:24])


def filled_dots(svg_path):
    """Filled circles cairo drew (outside <defs>), by fill colour: paths of arcs ('C') with a fill."""
    root = ET.parse(svg_path).getroot()
    defs = {id(e) for d in root.iter(SVG + "defs") for e in d.iter()}
    by_fill = {}
    for p in root.iter(SVG + "path"):
        style, d = p.get("style", ""), p.get("d", "")
        if id(p) in defs or "fill:rgb(" not in style or " C " not in d:
            continue
        fill = style.split("fill:rgb(")[1].split(")")[0]
        x, y = map(float, d.split()[1:3])
        by_fill.setdefault(fill, []).append((x, y))
    return by_fill


def test_verify_plot_svg_has_a_dot_per_timed_run_and_the_result_names_the_file(tmp_path):
    f = Fake(tmp_path)
    b = f.script("gelu_baseline.py", mean=1.0, sd=0.01)
    c = f.script("gelu_candidate.py", mean=0.8, sd=0.01)
    out = hk_json("verify", b, c, "--n", "6", "--no-stop-early", "--plot", str(tmp_path / "v.svg"), env=f.env())
    assert out["verdict"] == "faster"
    plot = out["plot"]
    assert plot["format"] == "svg" and Path(plot["path"]) == (tmp_path / "v.svg")
    assert plot["bytes"] == (tmp_path / "v.svg").stat().st_size
    counts = sorted(len(v) for v in filled_dots(tmp_path / "v.svg").values())
    timed = out["n"]
    assert counts == [1, timed, timed], counts  # baseline, candidate, and the speedup point
    # The readable rendering says where the picture is.
    text = hk("verify", b, c, "--n", "4", "--plot", str(tmp_path / "v2.png"), env=f.env())
    assert text.returncode == 0, text.stderr
    assert f"plot: {tmp_path / 'v2.png'} (png, " in text.stdout
    assert png_size((tmp_path / "v2.png").read_bytes()) == (880, 540)


def test_bench_and_roofline_plots_are_pngs_of_the_canvas_size(tmp_path):
    f = Fake(tmp_path)
    s = f.script("k.py")
    out = hk_json("bench", s, "--n", "3", "--plot", str(tmp_path / "b.png"), env=f.env())
    assert out["plot"]["format"] == "png"
    assert png_size((tmp_path / "b.png").read_bytes()) == (880, 540)
    r = hk_json("roofline", "--gpu", "NVIDIA H200", "--flops", "83886080", "--bytes", "335544320",
                "--baseline-ms", "0.12", "--candidate-ms", "0.085", "--plot", str(tmp_path / "r.svg"))
    assert [p["label"] for p in r["points"]] == ["baseline", "candidate"]
    assert r["points"][1]["pct_of_floor"] == pytest.approx(100 * r["attainable_ms"] / 0.085, rel=1e-12)
    assert sum(len(v) for v in filled_dots(tmp_path / "r.svg").values()) == 2


def test_record_plot_draws_the_target_s_history(tmp_path):
    f = Fake(tmp_path)
    b = f.script("gelu_baseline.py", mean=1.0, sd=0.01, line={"target": "gelu"})
    c = f.script("gelu_candidate.py", mean=0.8, sd=0.01, line={"target": "gelu"})
    for i in range(3):
        res = tmp_path / f"v{i}.json"
        r = hk("--json-out", str(res), "verify", b, c, "--n", "4", env=f.env(trial=i))
        assert r.returncode == 0, r.stderr
        out = hk_json("record", "--result", str(res), "--note", f"try {i}", "--who", "test suite",
                      "--plot", str(tmp_path / "h.svg"), cwd=tmp_path)
    assert out["plot"]["format"] == "svg"
    # Three faster records: three green dots with their intervals.
    counts = [len(v) for v in filled_dots(tmp_path / "h.svg").values()]
    assert counts == [3], counts


def test_a_plot_that_is_not_png_or_svg_is_refused_before_the_run(tmp_path):
    f = Fake(tmp_path)
    b, c = f.script("b.py"), f.script("c.py")
    r = hk("verify", b, c, "--plot", str(tmp_path / "v.pdf"), env=f.env())
    assert r.returncode == 2, r.stderr
    assert ".png or .svg" in r.stderr and "v.pdf" in r.stderr
    assert not (tmp_path / "v.pdf").exists()


def test_a_machine_without_a_fontconfig_configuration_still_gets_labelled_plots_and_no_error(tmp_path):
    # Minimal GPU images have no /etc/fonts/fonts.conf: fontconfig then printed "Fontconfig error:
    # Cannot load default config file" on every drawing. A missing configuration file stands in
    # for it here; the drawing falls back to the usual font folders.
    env = {"FONTCONFIG_FILE": str(tmp_path / "absent" / "fonts.conf"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    r = hk("roofline", "--gpu", "NVIDIA H200", "--flops", "1e9", "--bytes", "1e9", "--plot", str(tmp_path / "r.svg"),
           env=env)
    assert r.returncode == 0, r.stderr
    assert "Fontconfig" not in r.stderr, r.stderr
    root = ET.parse(tmp_path / "r.svg").getroot()
    glyphs = [g for g in root.iter() if (g.get("id") or "").startswith("glyph")]
    assert len(glyphs) > 20, len(glyphs)  # the labels' distinct characters, each drawn from a font
