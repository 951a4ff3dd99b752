# The profilers on targets `new` scaffolds: torch-profile on the CPU under torch 1.13 and 2.x
# (the contract's profile mode: a few labelled calls, no reference or check), profile through the
# fake ncu and nsys (tests/fixtures/fake-nsight) filtered to the target's NVTX range, an older
# vendored contract profiled whole with a warning, and every timeout naming what it waited for.
import json
import re
import shutil
import time

import pytest

from test_inside import FAKE, TORCH2, TORCH113, calls, has_torch, hk

INTERPRETERS = [pytest.param(TORCH113, id="torch1.13"), pytest.param(TORCH2, id="torch2")]
# What the target's fp32 reference, its check and its input draws run; none is the candidate's.
NOT_THE_CANDIDATES = {"aten::randn", "aten::normal_", "aten::norm", "aten::linalg_vector_norm", "aten::sub",
                      "aten::div", "aten::div_", "aten::max", "aten::abs", "aten::to", "aten::_to_copy",
                      "aten::copy_"}


@pytest.fixture(scope="module", params=INTERPRETERS)
def scaffold(request, tmp_path_factory):
    """(interpreter, folder) with gelu 64x256 bf16 scaffolded by `new` for it, once per module."""
    py = request.param
    if not has_torch(py):
        pytest.skip(f"no torch in {py}")
    base = tmp_path_factory.mktemp("profilers")
    rc, _, _, err = hk("--python", py, "--json", "new", "torch.nn.functional:gelu", "--shape", "64x256",
                       "--dtype", "bf16", "--out-dir", str(base / "gelu"), "--no-warm", tmp_path=base, timeout=300)
    assert rc == 0, err
    return py, base / "gelu"


def copy_of(scaffold, tmp_path):
    py, src = scaffold
    d = tmp_path / "gelu"
    shutil.copytree(src, d)
    return py, d


def test_torch_profile_on_a_target_profiles_only_the_candidates_calls(scaffold, tmp_path):
    py, d = copy_of(scaffold, tmp_path)
    t0 = time.monotonic()
    rc, r, _, err = hk("--python", py, "--json", "torch-profile", str(d / "gelu_candidate.py"), "--n", "100",
                       tmp_path=tmp_path, timeout=300)
    print(f"torch-profile of a scaffolded target under {py}: {time.monotonic() - t0:.1f} s wall")
    assert rc == 0, err
    pm = r["profile_mode"]
    assert pm["role"] == "candidate" and pm["calls"] == 5 and pm["warmup_calls"] == 3
    assert pm["label"] == "hotkernel.candidate" and pm["shapes"] == {"x": [64, 256]}
    names = [o["name"] for o in r["ops"]]
    gelu = [o for o in r["ops"] if o["name"] == "aten::gelu"]
    # exactly the profiled calls: not the warm-up, the fp32 reference or the check's
    assert len(gelu) == 1 and gelu[0]["calls"] == 5 and gelu[0]["input_shapes"][0] == [64, 256]
    assert not set(names) & NOT_THE_CANDIDATES, names
    assert r["ranges"] == [dict(r["ranges"][0], name="hotkernel.candidate", on="cpu", calls=5)]
    assert r["ranges"][0]["cpu_total_us"] >= gelu[0]["cpu_total_us"] > 0  # the label spans its call
    assert r["cuda_available"] is False and r["kernels"] == []
    # the baseline script is profiled as the baseline
    rc, r, _, err = hk("--python", py, "--json", "torch-profile", str(d / "gelu_baseline.py"), tmp_path=tmp_path,
                       timeout=300)
    assert rc == 0, err
    assert r["profile_mode"]["role"] == "baseline" and r["ranges"][0]["name"] == "hotkernel.baseline"


def test_torch_profile_target_failure_names_the_stage(scaffold, tmp_path):
    py, d = copy_of(scaffold, tmp_path)
    text = (d / "gelu_candidate.py").read_text().replace("    return _baseline(x)\n",
                                                         "    raise ValueError('kernel broke')\n")
    (d / "gelu_broken.py").write_text(text)
    rc, _, _, err = hk("--python", py, "torch-profile", str(d / "gelu_broken.py"), tmp_path=tmp_path, timeout=300)
    assert rc == 1
    assert "profile mode failed at call: kernel raised ValueError: kernel broke" in err


def test_torch_profile_timeout_names_what_it_was_waiting_for(scaffold, tmp_path):
    py, _ = scaffold
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(600)\n")
    rc, _, _, err = hk("--python", py, "torch-profile", str(slow), "--timeout-s", "8", tmp_path=tmp_path, timeout=120)
    assert rc == 1 and "timed out after 8 s" in err
    # torch's import can take longer than that on a loaded machine: either stage is named
    assert re.search(r"while (importing torch|running the script under torch\.profiler) \(from [0-9.]+ s on\)", err), err


def test_profile_ncu_on_a_target_profiles_its_range_in_profile_mode(scaffold, tmp_path):
    py, d = copy_of(scaffold, tmp_path)
    log = tmp_path / "ncu.log"
    rc, r, _, err = hk("--python", py, "--json", "profile", "--tool", "ncu", f"python {d / 'gelu_candidate.py'}",
                       path_prefix=FAKE, tmp_path=tmp_path, timeout=300,
                       env={"FAKE_NCU_LOG": str(log), "FAKE_NCU_MODE": "ok"})
    assert rc == 0, err
    run = calls(log)[0]
    assert run[run.index("--nvtx-include") + 1] == "hotkernel.profile/" and "--nvtx" in run
    assert r["target"] == {"script": str(d / "gelu_candidate.py"), "contract": str(d / "hotkernel_contract.py"),
                           "mode": "profile", "range": "hotkernel.profile"}
    line = json.loads([x for x in r["program_output_tail"].splitlines() if x.startswith("{")][-1])
    assert line["mode"] == "profile" and line["status"] == "profiled"  # HOTKERNEL_PROFILE reached it
    assert not [w for w in r["warnings"] if w["id"] == "profile_mode_unavailable"]


def test_profile_nsys_on_a_target_captures_its_range(scaffold, tmp_path):
    py, d = copy_of(scaffold, tmp_path)
    log = tmp_path / "nsys.log"
    rc, r, _, err = hk("--python", py, "--json", "profile", "--tool", "nsys", f"python {d / 'gelu_baseline.py'}",
                       path_prefix=FAKE, tmp_path=tmp_path, timeout=300,
                       env={"FAKE_NSYS_LOG": str(log), "FAKE_NSYS_MODE": "ok"})
    assert rc == 0, err
    run = calls(log)[0]
    assert "--capture-range=nvtx" in run and "--nvtx-capture=hotkernel.profile" in run
    assert "--capture-range-end=stop" in run
    assert r["target"]["mode"] == "profile"
    line = json.loads([x for x in r["program_output_tail"].splitlines() if x.startswith("{")][-1])
    assert line["status"] == "profiled" and line["role"] == "baseline"


def test_profile_with_an_older_vendored_contract_profiles_the_whole_run_and_says_so(scaffold, tmp_path):
    py, d = copy_of(scaffold, tmp_path)
    contract = d / "hotkernel_contract.py"
    contract.write_text(re.sub(r"(?m)^PROFILE_MODE = .*$", "", contract.read_text()))
    log = tmp_path / "ncu.log"
    rc, r, _, err = hk("--python", py, "--json", "profile", "--tool", "ncu", f"python3 {d / 'gelu_candidate.py'}",
                       path_prefix=FAKE, tmp_path=tmp_path, timeout=300, env={"FAKE_NCU_LOG": str(log)})
    assert rc == 0, err
    assert "--nvtx" not in calls(log)[0]
    assert r["target"]["mode"] == "whole_run"
    w = [w for w in r["warnings"] if w["id"] == "profile_mode_unavailable"]
    assert len(w) == 1 and str(contract) in w[0]["message"] and "fresh `hotkernel new`" in w[0]["message"]


def test_profile_of_a_plain_script_is_as_before(tmp_path):
    log = tmp_path / "ncu.log"
    script = tmp_path / "prog.py"
    script.write_text("TARGET = {}\nprint('not a target: no contract imported')\n")
    rc, r, _, err = hk("--json", "profile", "--tool", "ncu", f"python3 {script}", path_prefix=FAKE, tmp_path=tmp_path,
                       env={"FAKE_NCU_LOG": str(log)})
    assert rc == 0, err
    assert "--nvtx" not in calls(log)[0] and "target" not in r


@pytest.mark.parametrize("tool,mode,waiting", [
    ("ncu", "replay", "while waiting for ncu's replay of kernel 'vectorized_elementwise_kernel'"),
    ("nsys", "export", "while waiting for nsys's export of its trace"),
])
def test_profile_timeouts_name_what_they_waited_for(tmp_path, tool, mode, waiting):
    env = {"FAKE_NCU_MODE": mode} if tool == "ncu" else {"FAKE_NSYS_MODE": mode}
    start = time.monotonic()
    rc, _, _, err = hk("profile", "--tool", tool, "true", "--timeout-s", "3", path_prefix=FAKE, tmp_path=tmp_path,
                       env=env, timeout=120)
    assert rc == 1 and "timed out after 3 s" in err and waiting in err, err
    assert time.monotonic() - start < 60  # killed with its process group, not waited for


def test_measuring_ignores_profile_mode_in_the_callers_environment(scaffold, tmp_path):
    py, d = copy_of(scaffold, tmp_path)
    env = {"HOTKERNEL_PROFILE": "1", "HOTKERNEL_KEEP_WARM_S": "0"}
    # the harness: a protocol-3 target is measured as ever
    rc, r, _, err = hk("--python", py, "--json", "bench", str(d / "gelu_candidate.py"), "--n", "1", "--no-warm",
                       tmp_path=tmp_path, env=env, timeout=300)
    assert rc == 0, err
    assert r["mean_ms"] > 0
    # a self-reporting script does not find the variable
    probe = tmp_path / "probe.py"
    probe.write_text("import json, os\nprint(json.dumps({'ms': 2.0 if 'HOTKERNEL_PROFILE' in os.environ else 1.0}))\n")
    rc, r, _, err = hk("--python", py, "--json", "bench", str(probe), "--n", "2", "--no-warm", tmp_path=tmp_path,
                       env=env, timeout=300)
    assert rc == 0, err
    assert r["mean_ms"] == 1.0
