# roofline through the real binary: hand-computed H200 values (CLI and MCP tools/call), GPU by
# index through a fake nvidia-smi (tests/fixtures/fake-bin), by table key or nvidia-smi name, the
# calibration cache, and every documented error.
import json
import shutil
import subprocess
import threading

import pytest

from cli_support import BIN, H200_UUID, check_schema, declared_output_schemas, run_with_fake_smi, tools_list

# Compute-bound: 2^40 flops over 384 MiB on an H200 (989.4 bf16 TFLOPS, 4800 GB/s):
# AI = 2^40 / 402653184 = 2730.667 flop/B > ridge 989.4e12 / 4.8e12 = 206.125;
# attainable = 989.4 TFLOPS; floor = 2^40 / 989.4e12 s = 1.111291 ms.
COMPUTE = dict(flops=1099511627776, bytes=402653184)
# Its memory-bound twin: 2^30 flops over 4 GiB: AI = 0.25; attainable = 0.25 * 4.8e12 = 1.2
# TFLOPS; floor = 4294967296 / 4.8e12 s = 0.894785 ms; at a measured 4250 GB/s, 1.010581 ms.
MEMORY = dict(flops=1073741824, bytes=4294967296)


def hk(*args, **kw):
    """(exit code, stdout, stderr) with only the fake nvidia-smi on PATH."""
    return run_with_fake_smi(*args, **kw)[:3]


def roofline(*extra, **kw):
    code, out, err = hk("roofline", *extra, "--json", **kw)
    assert code == 0, err
    return json.loads(out)


def near(got, want):
    """Within 1% (the judging bar)."""
    return got == pytest.approx(want, rel=0.01)


def flags(d):
    """{"flops": 1, "bytes": 2} -> ["--flops", "1", "--bytes", "2"]"""
    return [item for k, v in d.items() for item in (f"--{k}", str(v))]



def test_h200_compute_bound_hand_computed():
    r = roofline("--gpu", "NVIDIA H200", *flags(COMPUTE), "--dtype", "bf16", fake=False)
    assert r["gpu"] == "NVIDIA H200" and r["spec_key"] == "h200_sxm" and r["dtype"] == "bf16"
    assert r["peak_tflops"] == 989.4 and r["peak_mem_gbs"] == 4800
    assert near(r["arithmetic_intensity"], 2730.667)
    assert near(r["ridge_point"], 206.125)
    assert r["bound"] == "compute"
    assert near(r["attainable_tflops"], 989.4)
    assert near(r["attainable_ms"], 1.111291)
    assert "attainable_ms_measured" not in r
    assert "S9" in r["source"]


def test_h200_memory_bound_twin_and_measured_bandwidth():
    r = roofline("--gpu", "NVIDIA H200", *flags(MEMORY), "--dtype", "bf16", fake=False)
    assert r["bound"] == "memory"
    assert near(r["arithmetic_intensity"], 0.25)
    assert near(r["attainable_tflops"], 1.2)
    assert near(r["attainable_ms"], 0.894785)
    r = roofline("--gpu", "NVIDIA H200", *flags(MEMORY), "--measured-mem-gbs", "4250", fake=False)
    assert near(r["attainable_ms_measured"], 1.010581)
    assert r["measured_mem_gbs"] == 4250 and r["measured_mem_gbs_source"] == "argument"
    assert near(r["attainable_ms"], 0.894785)  # the datasheet floor is unchanged


def test_same_numbers_through_mcp_tools_call():
    cli = roofline("--gpu", "NVIDIA H200", *flags(COMPUTE), "--dtype", "bf16", fake=False)
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "roofline", "arguments": {"gpu": "NVIDIA H200", "dtype": "bf16", **COMPUTE}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "roofline", "arguments": {"gpu": "NVIDIA A100-SXM4-80GB", "dtype": "fp8", **COMPUTE}}},
    ]
    # Keep stdin open until both answers are in (the server may stop at EOF); a watchdog kills it.
    p = subprocess.Popen([BIN, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    watchdog = threading.Timer(30, p.kill)
    watchdog.start()
    try:
        p.stdin.write("".join(json.dumps(m) + "\n" for m in msgs).encode())
        p.stdin.flush()
        replies = {}
        while not {2, 3} <= replies.keys():
            line = p.stdout.readline()
            assert line, f"server closed stdout; replies so far: {replies}"
            m = json.loads(line)
            if "id" in m:
                replies[m["id"]] = m
        p.stdin.close()
        p.wait(timeout=10)
    finally:
        watchdog.cancel()
        p.kill()
    res = replies[2]["result"]
    assert res.get("isError") is not True
    assert res["structuredContent"] == cli
    text = res["content"][0]["text"]  # a short summary beside the object, not the JSON again
    assert "bound: " + cli["bound"] in text and "attainable_ms: " in text, text
    assert replies[3]["result"]["isError"] is True
    assert "fp8" in replies[3]["result"]["content"][0]["text"]


def test_default_gpu_is_index_0_of_this_machine(tmp_path):
    r = roofline(*flags(MEMORY), tmp_path=tmp_path)
    assert r["gpu"] == "NVIDIA H200" and r["spec_key"] == "h200_sxm"
    assert r["gpu_index"] == 0 and r["gpu_uuid"] == H200_UUID
    assert near(r["attainable_ms"], 0.894785)
    assert "attainable_ms_measured" not in r  # no calibration cached


def test_calibration_cache_supplies_measured_bandwidth(tmp_path):
    cal = tmp_path / "cache" / "hotkernel" / "calibration" / f"{H200_UUID}.json"
    cal.parent.mkdir(parents=True)
    cal.write_text(json.dumps({"mem_gbs": 4250, "bf16_tflops": 700, "measured_at": "2026-11-30T02:35:17Z",
                               "method": "copy_ 1 GiB, graph timer"}))
    r = roofline(*flags(MEMORY), tmp_path=tmp_path)
    assert near(r["attainable_ms_measured"], 1.010581)
    assert "calibration cache" in r["measured_mem_gbs_source"] and "2026-11-30T02:35:17Z" in r["measured_mem_gbs_source"]
    # An explicit argument wins over the cache.
    r = roofline(*flags(MEMORY), "--measured-mem-gbs", "100", tmp_path=tmp_path)
    assert r["measured_mem_gbs_source"] == "argument"
    # A corrupt cache file is a warning, not a failure.
    cal.write_text("{oops")
    r = roofline(*flags(MEMORY), tmp_path=tmp_path)
    assert "attainable_ms_measured" not in r
    assert any(w["id"] == "calibration_unreadable" and "not valid JSON" in w["message"] for w in r["warnings"])


def test_a_calibrated_copy_of_the_calls_size_sets_the_measured_floor(tmp_path):
    # calibrate measured a 64 MiB copy (bytes a call) at 2125 GB/s and the large one at 4250: a call
    # moving 64 MiB is held to what a copy of its size does, 67108864 B / 2125e9 B/s = 0.031581 ms.
    cal = tmp_path / "cache" / "hotkernel" / "calibration" / f"{H200_UUID}.json"
    cal.parent.mkdir(parents=True)
    cal.write_text(json.dumps({"mem_gbs": 4250, "measured_at": "2026-11-30T02:35:17Z", "method": "copy",
                               "copy_curve": [{"bytes": 67108864, "gbs": 2125}, {"bytes": 2147483648, "gbs": 4250}]}))
    r = roofline("--flops", "0", "--bytes", "67108864", tmp_path=tmp_path)
    assert near(r["measured_mem_gbs"], 2125) and near(r["attainable_ms_measured"], 0.031581)
    assert "64 MiB a call" in r["measured_mem_gbs_source"]
    r = roofline(*flags(MEMORY), tmp_path=tmp_path)  # 4 GiB: past the largest point, the large copy's
    assert near(r["measured_mem_gbs"], 4250) and near(r["attainable_ms_measured"], 1.010581)


def test_index_into_several_gpus(tmp_path):
    r = roofline("--gpu", "2", *flags(COMPUTE), scenario="multi", tmp_path=tmp_path)
    assert r["spec_key"] == "l40s" and r["gpu_index"] == 2
    code, _, err = hk("roofline", "--gpu", "3", *flags(COMPUTE), scenario="multi", tmp_path=tmp_path)
    assert code == 1 and "not in the spec table" in err
    code, _, err = hk("roofline", "--gpu", "7", *flags(COMPUTE), scenario="multi", tmp_path=tmp_path)
    assert code == 1 and "no GPU 7" in err and "4 GPUs" in err


@pytest.mark.parametrize("name,key", [
    ("h200", "h200_sxm"), ("H200_SXM", "h200_sxm"), ("nvidia h100 80gb hbm3", "h100_sxm5"),
    ("NVIDIA A100-SXM4-80GB", "a100_sxm4_80gb"), ("NVIDIA A100-SXM4-40GB MIG 1g.5gb", "a100_sxm4_40gb"),
    ("Tesla T4", "t4"), ("NVIDIA GeForce RTX 5090", "rtx_5090")])
def test_gpu_by_name_or_key_case_insensitive(name, key):
    assert roofline("--gpu", name, *flags(COMPUTE), "--dtype", "fp16", fake=False)["spec_key"] == key


def test_mig_instance_warns_that_peaks_are_for_the_whole_gpu(tmp_path):
    r = roofline("--gpu", "NVIDIA A100-SXM4-40GB MIG 1g.5gb", *flags(COMPUTE), "--dtype", "fp16", fake=False)
    assert any(w["id"] == "mig_enabled" for w in r["warnings"])
    r = roofline(*flags(COMPUTE), "--dtype", "fp16", scenario="mig", tmp_path=tmp_path)
    assert r["spec_key"] == "a100_sxm4_80gb" and any(w["id"] == "mig_enabled" for w in r["warnings"])
    assert not any(w["id"] == "mig_enabled" for w in roofline("--gpu", "h200", *flags(COMPUTE), fake=False)["warnings"])


def test_every_dtype_the_card_has():
    for dtype, peak in [("bf16", 989.4), ("fp16", 989.4), ("fp8", 1978.9), ("fp32", 66.9), ("tf32", 494.7),
                        ("int8", 1978.9)]:
        r = roofline("--gpu", "h200_sxm", *flags(COMPUTE), "--dtype", dtype, fake=False)
        assert r["peak_tflops"] == peak and near(r["attainable_ms"], COMPUTE["flops"] / (peak * 1e12) * 1e3)


def test_errors(tmp_path):
    code, out, err = hk("roofline", "--gpu", "NVIDIA H2000", *flags(COMPUTE), fake=False)
    assert code == 1 and out == "" and "unknown GPU 'NVIDIA H2000'" in err and "h200_sxm" in err
    code, _, err = hk("roofline", "--gpu", "NVIDIA A100-SXM4-80GB", *flags(COMPUTE), "--dtype", "fp8", fake=False)
    assert code == 1 and "no fp8" in err and "bf16" in err  # says which dtypes it has
    code, _, err = hk("roofline", "--gpu", "h200", "--flops", "-5", "--bytes", "10", fake=False)
    assert code == 2 and "flops" in err
    code, _, err = hk("roofline", "--gpu", "h200", "--flops", "5", "--bytes", "-10", fake=False)
    assert code == 2 and "bytes" in err
    code, _, err = hk("roofline", "--gpu", "h200", "--flops", "5", "--bytes", "0", fake=False)
    assert code == 2 and "bytes must be > 0" in err
    code, _, err = hk("roofline", "--gpu", "h200", "--flops", "5", fake=False)
    assert code == 2 and "bytes" in err
    code, _, err = hk("roofline", "--gpu", "h200", *flags(COMPUTE), "--dtype", "fp64", fake=False)
    assert code == 2 and "dtype" in err
    code, _, err = hk("roofline", "--gpu", "h200", *flags(COMPUTE), "--measured-mem-gbs", "0", fake=False)
    assert code == 2 and "measured_mem_gbs" in err


def test_no_gpu_in_the_machine_and_none_named(tmp_path):
    code, out, err = hk("roofline", *flags(COMPUTE), fake=False, tmp_path=tmp_path)
    assert code == 1 and out == ""
    assert "no GPU in this machine" in err and "nvidia-smi is not on PATH" in err and "--gpu" in err
    code, _, err = hk("roofline", *flags(COMPUTE), scenario="failing-driver", tmp_path=tmp_path)
    assert code == 1 and "couldn't communicate with the NVIDIA driver" in err


def test_table_is_embedded_binary_works_without_the_repo(tmp_path):
    lonely = tmp_path / "hotkernel"
    shutil.copy(BIN, lonely)
    r = roofline("--gpu", "NVIDIA H200", *flags(COMPUTE), fake=False, binary=str(lonely), cwd=str(tmp_path))
    assert r["spec_key"] == "h200_sxm" and near(r["attainable_ms"], 1.111291)


def test_results_match_the_declared_output_schema(tmp_path):
    schema = declared_output_schemas()["roofline"]
    check_schema(roofline("--gpu", "NVIDIA H200", *flags(COMPUTE), fake=False), schema, "named")
    check_schema(roofline(*flags(MEMORY), "--measured-mem-gbs", "4250", tmp_path=tmp_path), schema, "index+measured")
    tool = tools_list()["roofline"]
    props = tool["inputSchema"]["properties"]
    assert set(props) == {"gpu", "flops", "bytes", "dtype", "measured_mem_gbs", "baseline_ms", "candidate_ms", "plot"}
    assert props["dtype"]["enum"] == ["bf16", "fp16", "fp8", "fp32", "tf32", "int8"]
    assert set(tool["inputSchema"]["required"]) == {"flops", "bytes"}
    # plot writes a picture, so not read-only; the same answer for the same inputs
    assert tool["annotations"]["readOnlyHint"] is False and tool["annotations"]["idempotentHint"] is True
