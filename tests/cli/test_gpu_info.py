# gpu-info through a fake nvidia-smi on PATH (tests/fixtures/fake-bin/nvidia-smi): the real H200
# capture replayed, and made-up multi-GPU, old-driver, [N/A], MIG, failing-driver, no-device and
# hung-driver outputs; and no nvidia-smi at all.
import json
import os
import subprocess
import sys
import time

from cli_support import BIN, FAKE_BIN, H200_UUID, ROOT, check_schema, declared_output_schemas, run_with_fake_smi

INVENTORY_QUERY = ("--query-gpu=index,name,uuid,driver_version,memory.total,power.limit,compute_cap,"
                   "clocks.max.sm,mig.mode.current")


def hk(*args, **kw):
    """(exit code, stdout, stderr, argv lists the fake nvidia-smi saw)."""
    return run_with_fake_smi(*args, **kw)


def one_error_line(err):
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_fake_replays_the_real_capture_byte_for_byte():
    # The fake must answer the captured queries exactly as the H200 did, or it proves nothing.
    env = dict(os.environ, FAKE_NVIDIA_SMI_SCENARIO="h200")
    fixtures = ROOT / "tests" / "fixtures" / "h200"
    out = subprocess.run([sys.executable, str(FAKE_BIN / "nvidia-smi"),
                          "--query-gpu=name,driver_version,memory.total,power.limit,compute_cap,clocks.max.sm",
                          "--format=csv,noheader,nounits"], capture_output=True, env=env, check=True).stdout
    assert out == (fixtures / "query-gpu-nounits.csv").read_bytes()
    fields = ("name,driver_version,memory.total,power.limit,power.max_limit,power.default_limit,compute_cap,"
              "clocks.max.sm,clocks.max.memory,clocks.sm,clocks.mem,pci.bus_id,uuid,temperature.gpu,"
              "clocks_event_reasons.active,clocks_throttle_reasons.active,mig.mode.current,persistence_mode,"
              "pstate,utilization.gpu")
    out = subprocess.run([sys.executable, str(FAKE_BIN / "nvidia-smi"), "--query-gpu=" + fields, "--format=csv"],
                         capture_output=True, env=env, check=True).stdout
    assert out == (fixtures / "query-gpu.csv").read_bytes()
    bogus = subprocess.run([sys.executable, str(FAKE_BIN / "nvidia-smi"), "--query-gpu=name,bogus_field",
                            "--format=csv"], capture_output=True, env=env)
    assert bogus.returncode == 2
    assert bogus.stdout.decode() == (fixtures / "query-gpu-bogus.txt").read_text().replace("rc=2\n", "")


def test_h200_capture(tmp_path):
    code, out, err, calls = hk("gpu-info", "--json", tmp_path=tmp_path)
    assert code == 0, err
    assert len(calls) == 1
    assert INVENTORY_QUERY in calls[0] and "--format=csv,noheader,nounits" in calls[0]
    r = json.loads(out)
    assert r["count"] == 1 and r["warnings"] == []
    g = r["gpus"][0]
    assert g["index"] == 0
    assert g["name"] == "NVIDIA H200"
    assert g["uuid"] == H200_UUID
    assert g["driver"] == "580.159.04"
    assert g["memory_mib"] == 143771
    assert g["power_limit_w"] == 700
    assert g["compute_capability"] == "9.0"
    assert g["compute_capability_source"] == "nvidia-smi"
    assert g["max_sm_clock_mhz"] == 1980
    assert g["mig_mode"] == "Disabled"
    spec = g["spec"]
    assert spec["key"] == "h200_sxm"
    assert spec["mem_gbs"] == 4800 and spec["peak_tflops"]["bf16"] == 989.4 and spec["l2_mib"] == 60
    assert spec["source"]
    assert "spec_reason" not in g


def test_h200_readable_rendering(tmp_path):
    code, out, err, _ = hk("gpu-info", tmp_path=tmp_path)
    assert code == 0, err
    assert "NVIDIA H200" in out and "580.159.04" in out
    assert "spec h200_sxm" in out and "4800 GB/s" in out
    assert not out.lstrip().startswith("{")


def test_several_gpus_one_unknown_to_the_table(tmp_path):
    code, out, err, _ = hk("gpu-info", "--json", scenario="multi", tmp_path=tmp_path)
    assert code == 0, err
    r = json.loads(out)
    assert r["count"] == 4
    assert [g["index"] for g in r["gpus"]] == [0, 1, 2, 3]
    assert [g["spec"]["key"] if g["spec"] else None for g in r["gpus"]] == ["h100_sxm5", "h100_sxm5", "l40s", None]
    assert r["gpus"][1]["power_limit_w"] == 500
    assert r["gpus"][2]["mig_mode"] is None  # [N/A]
    unknown = r["gpus"][3]
    assert unknown["name"] == "NVIDIA RTX A2000 12GB"
    assert "not in the spec table" in unknown["spec_reason"]
    assert any(w["id"] == "gpu_not_in_spec_table" and w["message"].startswith("GPU 3:") for w in r["warnings"])


def test_old_driver_without_compute_cap(tmp_path):
    code, out, err, calls = hk("gpu-info", "--json", scenario="old-driver", tmp_path=tmp_path)
    assert code == 0, err
    assert len(calls) == 2  # rejected, then re-queried without compute_cap
    assert not any("compute_cap" in a for a in calls[1])
    g = json.loads(out)["gpus"][0]
    assert g["name"] == "A100-SXM4-40GB"
    assert g["driver"] == "470.82.01"
    assert g["compute_capability"] == "8.0"
    assert g["compute_capability_source"] == "spec table"
    assert g["spec"]["key"] == "a100_sxm4_40gb"
    assert any(w["id"] == "compute_cap_from_spec_table" for w in json.loads(out)["warnings"])


def test_not_available_values_are_null(tmp_path):
    code, out, err, _ = hk("gpu-info", "--json", scenario="na", tmp_path=tmp_path)
    assert code == 0, err
    g = json.loads(out)["gpus"][0]
    assert g["power_limit_w"] is None
    assert g["max_sm_clock_mhz"] is None
    assert g["mig_mode"] is None
    assert g["memory_mib"] == 24576
    assert g["compute_capability"] == "8.6"
    assert g["spec"]["key"] == "rtx_3090"


def test_mig_enabled(tmp_path):
    code, out, err, _ = hk("gpu-info", "--json", scenario="mig", tmp_path=tmp_path)
    assert code == 0, err
    r = json.loads(out)
    g = r["gpus"][0]
    assert g["mig_mode"] == "Enabled"
    assert g["spec"]["key"] == "a100_sxm4_80gb"
    assert any(w["id"] == "mig_enabled" and "MIG is enabled" in w["message"] for w in r["warnings"])


def test_failing_driver(tmp_path):
    code, out, err, _ = hk("gpu-info", "--json", scenario="failing-driver", tmp_path=tmp_path)
    assert code == 1
    assert out == ""
    line = one_error_line(err)
    assert "couldn't communicate with the NVIDIA driver" in line
    assert "exited with status 9" in line
    assert "lsmod" in line  # says how to fix it


def test_no_devices(tmp_path):
    code, _, err, _ = hk("gpu-info", scenario="no-devices", tmp_path=tmp_path)
    assert code == 1
    assert "found no NVIDIA GPU" in one_error_line(err)


def test_no_nvidia_smi_on_path(tmp_path):
    code, out, err, _ = hk("gpu-info", "--json", fake=False, tmp_path=tmp_path)
    assert code == 1
    assert out == ""
    assert "no NVIDIA driver found: nvidia-smi is not on PATH" in one_error_line(err)


def test_hung_driver_times_out(tmp_path):
    start = time.monotonic()
    code, _, err, _ = hk("gpu-info", env={"FAKE_NVIDIA_SMI_SLEEP": "60"}, tmp_path=tmp_path, timeout=40)
    assert code == 1
    assert time.monotonic() - start < 20
    assert "did not answer within 10 s" in one_error_line(err)


def test_help():
    p = subprocess.run([BIN, "gpu-info", "--help"], capture_output=True, timeout=30)
    assert p.returncode == 0
    assert b"nvidia-smi" in p.stdout


def test_results_match_the_declared_output_schema(tmp_path):
    schema = declared_output_schemas()["gpu_info"]
    for scenario in ("h200", "multi", "old-driver", "na", "mig"):
        code, out, err, _ = hk("gpu-info", "--json", scenario=scenario, tmp_path=tmp_path)
        assert code == 0, err
        check_schema(json.loads(out), schema, scenario)
