"""The contract's profile mode: a few calls of the kernel in named ranges, without reference, check
or timer, selected by HOTKERNEL_PROFILE for a script's __main__ and never by the measuring paths."""
import json

from conftest import ROOT, py_snippet, run_script

STAGE = "hotkernel-profile: "


def counting(gelu, name="counting", reference=None):
    """A candidate that appends a line to calls.txt at each call; optionally with another reference."""
    text = (gelu / "gelu_candidate.py").read_text()
    body = ("    with open(__file__.rsplit('/', 1)[0] + '/calls.txt', 'a') as f:\n"
            "        f.write('%s\\n' % list(x.shape))\n"
            "    return _baseline(x)\n")
    text = text.replace("    return _baseline(x)\n", body)
    if reference is not None:
        text = text.replace('"reference": None', '"reference": %r' % reference)
    path = gelu / ("gelu_%s.py" % name)
    path.write_text(text)
    return path


def test_profile_mode_makes_warmup_then_ranged_calls_and_no_reference_or_check(py, gelu):
    # A reference that raises: a measuring run stops there; profile mode never calls it.
    (gelu / "boom.py").write_text("def ref(x):\n    raise RuntimeError('the reference ran')\n")
    path = counting(gelu, reference="./boom.py:ref")
    rc, line, err = run_script(py, path)
    assert rc == 1 and line["status"] == "error" and "the reference ran" in line["reason"]
    (gelu / "calls.txt").unlink(missing_ok=True)

    rc, line, err = run_script(py, path, env={"HOTKERNEL_PROFILE": "1"})
    assert rc == 0, err
    assert line["mode"] == "profile" and line["status"] == "profiled" and line["ms"] is None
    assert line["role"] == "candidate" and line["target"] == "gelu"
    assert line["calls"] == 5 and line["warmup_calls"] == 3
    assert line["range"] == "hotkernel.profile" and line["call_range"] == "hotkernel.candidate"
    assert line["device"] == "cpu" and line["nvtx"] is False  # NVTX only where CUDA is
    assert line["rotate_k"] >= 2 and line["shapes"] == {"x": [64, 128]}
    # warm-up (the first call included) then the profiled calls: nothing else called the kernel
    assert (gelu / "calls.txt").read_text().splitlines() == ["[64, 128]"] * 8
    stages = [s[len(STAGE):] for s in err.splitlines() if s.startswith(STAGE)]
    assert stages == ["drawing the inputs", "making the first call (compilation, autotuning)",
                      "drawing %d rotated input sets" % line["rotate_k"], "making 2 more warm-up call(s)",
                      "making 5 profiled call(s) in range hotkernel.candidate"]


def test_profile_mode_off_for_zero_and_unset(py, gelu):
    for env in ({"HOTKERNEL_PROFILE": "0"}, {}):
        rc, line, err = run_script(py, gelu / "gelu_baseline.py", env=env)
        assert rc == 0, err
        assert "mode" not in line and line["status"] == "ok" and line["ms"] > 0 and STAGE not in err


def test_profile_mode_failure_names_the_stage_and_exits_1(py, gelu):
    text = (gelu / "gelu_candidate.py").read_text().replace(
        "    return _baseline(x)\n", "    raise ValueError('kernel broke')\n")
    (gelu / "gelu_broken.py").write_text(text)
    rc, line, err = run_script(py, gelu / "gelu_broken.py", env={"HOTKERNEL_PROFILE": "1"})
    assert rc == 1
    assert line["status"] == "error" and line["reason"].startswith("call: kernel raised ValueError: kernel broke")


def test_profile_file_labels_each_call_and_keeps_the_rest_out_of_the_window(py, gelu):
    """torch_profile's way in: the profiler on around the ranged calls only, each one labelled."""
    counting(gelu)
    out = py_snippet(py, """
import json, sys
sys.path.insert(0, %r)
import hotkernel_contract as hk
from torch.profiler import ProfilerActivity, profile
prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True)
stages = []
res = hk.profile_file('gelu_counting.py', window=prof, stage=stages.append)
rows = {e.key: e.count for e in prof.key_averages()}
print(json.dumps({"res": res, "rows": rows, "stages": stages, "file": hk.__file__}))
""" % str(ROOT / "python"), gelu)
    r = json.loads(out.strip().splitlines()[-1])
    res, rows = r["res"], r["rows"]
    assert res["status"] == "profiled" and res["role"] == "candidate" and res["calls"] == 5
    assert rows["hotkernel.candidate"] == 5 and rows["aten::gelu"] == 5
    # the inputs were drawn and the warm-up made before the profiler started
    assert "aten::randn" not in rows and "aten::normal_" not in rows
    assert r["stages"][0] == "importing gelu_counting.py"
    assert (gelu / "calls.txt").read_text().count("\n") == 8
    assert r["file"].startswith(str(ROOT / "python"))  # hotkernel's copy, as the harness uses


def test_script_role_reads_the_main_call(py, gelu):
    out = py_snippet(py, """
import hotkernel_contract as hk
print(hk.script_role('gelu_baseline.py'), hk.script_role('gelu_candidate.py'), hk.script_role('missing.py'))
""", gelu)
    assert out.split() == ["baseline", "candidate", "candidate"]


def test_measuring_paths_never_enter_profile_mode(py, gelu):
    """run_file (what the harness's harness builds on) and measure() ignore HOTKERNEL_PROFILE."""
    out = py_snippet(py, """
import json, os, sys
os.environ["HOTKERNEL_PROFILE"] = "1"
sys.path.insert(0, %r)
import hotkernel_contract as hk
a = hk.run_file('gelu_candidate.py', 'candidate', target_from='gelu_baseline.py')
b = hk.measure(hk.read_target_file('gelu_baseline.py'), lambda x: x * 1.0, base_dir='.')
print(json.dumps([a, b]))
""" % str(ROOT / "python"), gelu)
    a, b = json.loads(out.strip().splitlines()[-1])
    for line in (a, b):
        assert "mode" not in line and line["status"] in ("ok", "incorrect") and line["ms"] > 0
