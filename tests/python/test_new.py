"""`hotkernel new` end to end: scaffolds, what it writes, and a clear error for every bad option."""
import hashlib
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, CONTRACT_SRC, hk_new, py_snippet, python_without_torch, run_script, shared_scaffold

HERE = Path(__file__).resolve().parent


@pytest.fixture()
def work(tmp_path):
    shutil.copy(HERE / "mykernels.py", tmp_path / "mykernels.py")
    return tmp_path


GELU_T = ("torch.nn.functional:gelu", "--shape", "8x64", "--iters", "5", "--out-dir", "t")


@pytest.fixture()
def gelu_t(py, tmp_path_factory):
    """`new GELU_T` run once per interpreter in a shared folder: (that folder, the result).
    Read-only: copy it (copy_of) before changing anything."""
    folder, rc, res, err = shared_scaffold(tmp_path_factory, py, *GELU_T)
    assert rc == 0, err
    return folder, res


def copy_of(gelu_t, work):
    shutil.copytree(gelu_t[0] / "t", work / "t")
    return work / "t"


def test_gelu_scaffold_writes_three_files_and_next_steps(py, gelu_t):
    work, res = gelu_t
    out = work / "t"
    assert res["name"] == "gelu"
    assert res["files"] == {"baseline": str(out / "gelu_baseline.py"), "candidate": str(out / "gelu_candidate.py"),
                            "contract": str(out / "hotkernel_contract.py")}
    assert sorted(res["written"]) == sorted(res["files"].values())
    # the vendored contract is the repo's, byte for byte, and the result says its protocol and hash
    vendored = (out / "hotkernel_contract.py").read_bytes()
    assert vendored == CONTRACT_SRC.read_bytes()
    assert res["contract"] == {"protocol": 3, "sha256": hashlib.sha256(vendored).hexdigest()}
    assert re.search(rb"\nPROTOCOL\s*=\s*3\b", vendored)
    # the candidate starts as the baseline: same TARGET and body, only its role differs
    base = (out / "gelu_baseline.py").read_text()
    cand = (out / "gelu_candidate.py").read_text()
    assert 'hk.main(TARGET, kernel, role="baseline")' in base and 'role="candidate"' in cand
    assert base.split("TARGET = ")[1].split("\n}\n")[0] == cand.split("TARGET = ")[1].split("\n}\n")[0]
    assert "def kernel(x):" in cand
    t = res["target"]
    assert (t["from"], t["shape"], t["rotate"], t["dtype"], t["device"], t["seed"], t["iters"]) == (
        "torch.nn.functional:gelu", [8, 64], ["x"], "bf16", "auto", 0, 5)
    assert res["next_steps"] == ["hotkernel bench t/gelu_baseline.py --python %s" % py,
                                 "hotkernel verify t/gelu_baseline.py t/gelu_candidate.py --python %s" % py]
    assert res["probe"]["out_shapes"] == [[8, 64]] and res["probe"]["device"] == "cpu"


def test_rerun_keeps_unedited_and_refuses_edited_candidate(py, work, gelu_t):
    args = GELU_T
    copy_of(gelu_t, work)  # what a first `new GELU_T` in work writes
    rc, res, err = hk_new(py, *args, cwd=work)
    assert rc == 0, err
    assert res["written"] == [] and len(res["unchanged"]) == 3
    cand = work / "t" / "gelu_candidate.py"
    edited = cand.read_text().replace("return _baseline(x)", "return _baseline(x) + 0")
    cand.write_text(edited)
    rc, res, err = hk_new(py, *args, cwd=work)
    assert rc == 1 and res is None
    assert "gelu_candidate.py exists and differs" in err and "--force" in err
    assert cand.read_text() == edited  # untouched
    # a changed target also counts as "differs": the edited file is never silently replaced
    rc, res, err = hk_new(py, "torch.nn.functional:gelu", "--shape", "8x32", "--out-dir", "t", cwd=work)
    assert rc == 1 and "--force" in err
    rc, res, err = hk_new(py, *args, "--force", cwd=work)
    assert rc == 0, err
    assert str(cand) in res["written"] and "_baseline(x) + 0" not in cand.read_text()
    assert any(w["id"] == "file_replaced" and "--force" in w["message"] for w in res["warnings"])


def test_scaffold_from_local_file_into_subfolder(py, work):
    rc, res, err = hk_new(py, "./mykernels.py:fused", "--shape", "8x16", "--extra", "w:16", "--out-dir", "sub/t",
                          cwd=work)
    assert rc == 0, err
    assert res["name"] == "fused"
    assert res["target"]["from"] == "../../mykernels.py:fused"  # relative to the scripts' folder
    assert res["target"]["extra"] == {"w": [16]}
    # runs from any current folder, as a script started afresh
    rc, line, err = run_script(py, work / "sub" / "t" / "fused_candidate.py", cwd="/", fresh=True)
    assert rc == 0, err
    assert line["ok"] is True and line["shapes"] == {"x": [8, 16], "w": [16], "out": [8, 16]}


def test_scaffold_with_extra_inputs_in_call_order(py, work):
    rc, res, err = hk_new(py, "torch.nn.functional:linear", "--shape", "16x32", "--extra", "w:24x32,b:24",
                          "--rotate", "x,w", "--flops", "24576", "--dtype", "fp32", "--name", "lin", cwd=work)
    assert rc == 0, err
    assert "def kernel(x, w, b):" in (work / "lin_candidate.py").read_text()
    rc, line, err = run_script(py, work / "lin_candidate.py")
    assert rc == 0, err
    assert line["ok"] is True and line["dtype"] == "fp32"
    assert line["shapes"] == {"x": [16, 32], "w": [24, 32], "b": [24], "out": [16, 24]}
    assert line["roofline_inputs"] == {"flops": 24576, "bytes": 4 * (16 * 32 + 24 * 32 + 24 + 16 * 24), "dtype": "fp32"}


def test_scaffold_quantized_matmul_with_derive_inputs_reference_min_bytes(py, work):
    rc, res, err = hk_new(py, "./mykernels.py:int8_matmul", "--shape", "16x64", "--extra", "w:32x64",
                          "--derive", "./mykernels.py:quantize", "--inputs", "x,w_q,scales",
                          "--reference", "./mykernels.py:int8_matmul_ref", "--min-bytes", "4096", cwd=work)
    assert rc == 0, err
    assert res["probe"]["call_names"] == ["x", "w_q", "scales"]
    assert res["probe"]["input_dtypes"] == {"x": "bfloat16", "w_q": "int8", "scales": "bfloat16"}
    assert "def kernel(x, w_q, scales):" in (work / "int8_matmul_candidate.py").read_text()
    for role in ("baseline", "candidate"):
        rc, line, err = run_script(py, work / ("int8_matmul_%s.py" % role), env={"HOTKERNEL_CACHE_BYTES": "65536"})
        assert rc == 0, err
        assert line["ok"] is True, line["reason"]
        assert line["shapes"] == {"x": [16, 64], "w_q": [32, 64], "scales": [32], "out": [16, 32]}
        # K is sized from min_bytes (+ the output), not from the derived tensors
        out_bytes = 16 * 32 * 2
        factor = float(re.search(r"^CPU_ROTATE_FACTOR = ([0-9.]+)", CONTRACT_SRC.read_text(), re.M).group(1))
        assert line["cache_k"] == max(2, math.ceil(factor * 65536 / (4096 + out_bytes)))  # on the CPU
        assert line["rotate_k"] == line["calls_per_sample"] >= line["cache_k"]
        assert line["roofline_inputs"]["bytes"] == 4096 + out_bytes


# ------------------------------------------------------------------ bad options: each a clear error

@pytest.mark.parametrize("args, needle", [
    (("torch.nn.functional:gelu", "--shape", "4096y8192"), "shape '4096y8192' is not a shape"),
    (("torch.nn.functional:gelu", "--shape", "0x8"), "is not a shape"),
    (("torch.nn.functional:gelu", "--shape", "8", "--extra", "w8"), "must be 'name:shape'"),
    (("torch.nn.functional:gelu", "--shape", "8", "--extra", "x:8"), "already used"),
    (("torch.nn.functional:gelu", "--shape", "8", "--rotate", "q"), "rotate names 'q', which is not an input"),
    (("gelu", "--shape", "8"), "is not 'module:function'"),
    (("torch.nn.functional:gelu", "--shape", "8", "--name", "a/b"), "not usable in a file name"),
    (("./missing.py:f", "--shape", "8"), "does not exist"),
    (("./mykernels.py:int8_matmul", "--shape", "16x64", "--extra", "w:32x64", "--derive", "./mykernels.py:quantize",
      "--inputs", "x,w_q,scales"), "derive needs reference"),
    (("./mykernels.py:int8_matmul", "--shape", "16x64", "--extra", "w:32x64", "--derive", "./mykernels.py:quantize",
      "--reference", "./mykernels.py:int8_matmul_ref"), "derive needs inputs"),
    (("torch.nn.functional:gelu", "--shape", "8", "--inputs", "x,y"), "only used with derive"),
])
def test_bad_option_is_a_clear_error_before_any_python(py, work, args, needle):
    rc, res, err = hk_new(py, *args, cwd=work)
    assert rc == 1, err
    assert needle in err
    assert not list(work.glob("*_candidate.py"))  # nothing written


@pytest.mark.parametrize("args, needles", [
    (("no_such_module_xyz:f", "--shape", "8"), ["cannot import", "no_such_module_xyz"]),
    (("torch.nn.functional:gelux", "--shape", "8"), ["has no function 'gelux'", "did you mean gelu"]),
    (("./mykernels.py:int8_matmul", "--shape", "16x64", "--extra", "w:32x64", "--derive",
      "./mykernels.py:quantize_misnamed", "--inputs", "x,w_q,scales", "--reference", "./mykernels.py:int8_matmul_ref"),
     ["returned names ['x', 'wq', 'scales'] but inputs says ['x', 'w_q', 'scales']"]),
    (("torch.nn.functional:linear", "--shape", "16x32", "--extra", "w:24x31"), ["does not run on the scaffolded inputs"]),
])
def test_bad_function_is_a_clear_error_from_the_probe(py, work, args, needles):
    rc, res, err = hk_new(py, *args, cwd=work)
    assert rc == 1, err
    for n in needles:
        assert n in err
    assert not list(work.glob("*_candidate.py"))


def test_interpreter_without_torch_is_named_with_the_fix(work):
    nopy = python_without_torch()
    if nopy is None:
        pytest.skip("python3 on PATH has torch here: no torch-less interpreter to test with")
    rc, res, err = hk_new(nopy, "torch.nn.functional:gelu", "--shape", "8", cwd=work)
    assert rc == 1
    assert "torch is not importable in the interpreter %s" % nopy in err
    assert "--python" in err and "HOTKERNEL_PYTHON" in err
    # the same through HOTKERNEL_PYTHON instead of --python
    rc, res, err = hk_new(nopy, "torch.nn.functional:gelu", "--shape", "8", cwd=work,
                          env={"HOTKERNEL_PYTHON": nopy}, python_flag=False)
    assert rc == 1 and "torch is not importable" in err and nopy in err


def test_device_cuda_without_a_gpu_is_a_clear_error(py, work):
    if py_snippet(py, "import torch; print(torch.cuda.is_available())", work).strip() != "False":
        pytest.skip("torch in %s sees a GPU: device=cuda is valid here" % py)
    rc, res, err = hk_new(py, "torch.nn.functional:gelu", "--shape", "8", "--device", "cuda", cwd=work)
    assert rc == 1 and "sees no CUDA GPU" in err and "device='cpu' or 'auto'" in err


def test_missing_interpreter_is_a_clear_error(work):
    rc, res, err = hk_new("/nonexistent/python", "torch.nn.functional:gelu", "--shape", "8", cwd=work)
    assert rc == 1 and "/nonexistent/python" in err and "--python" in err


def test_missing_required_option_is_a_usage_error(work):
    import subprocess
    r = subprocess.run([str(BIN), "new", "torch.nn.functional:gelu"], cwd=str(work), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "shape" in r.stderr


def test_trusted_bench_reports_where_each_run_went_and_what_it_could_not_profile(py, work, gelu_t):
    copy_of(gelu_t, work)
    r = subprocess.run([str(BIN), "bench", "t/gelu_baseline.py", "--n", "2", "--profile-check", "--python", py,
                        "--json"], cwd=str(work), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["trusted"] is True and "profile_check" not in out
    assert any("no run reported a profile of its timed graph" in w["message"] for w in out["warnings"])  # CPU: no graph
    for run in out["runs"]:
        ph = run["line"]["phases_s"]
        assert {"prepare", "check", "warmup", "timing_and_checks", "in_harness"} <= set(ph)
        assert ph["in_harness"] <= run["wall_s"] + 0.05
        if "process_age" in ph:  # from /proc: the fork (or exec) came before the runner started
            assert ph["in_harness"] - 0.05 <= ph["process_age"] <= run["wall_s"] + 0.05
        assert run["line"]["calls_per_sample"] == run["line"]["rotate_k"]  # no set repeats within a sample
