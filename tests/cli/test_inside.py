# The look-inside tools end to end: profile / top-kernels through fake ncu and nsys that replay
# real H200 outputs (tests/fixtures/fake-nsight), disassemble with a REAL cuobjdump (the PyPI
# nvidia-cuda-cuobjdump package or triton's bundled one) on real cubins, and torch-profile on
# the CPU under torch 1.13 and 2.x. Also a few of the same calls over MCP.
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cli_support import McpSession

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("HOTKERNEL_BIN", str(ROOT / "build" / "hotkernel"))
FIX = ROOT / "tests" / "fixtures"
H200 = FIX / "h200"
FAKE = FIX / "fake-nsight"
TORCH2 = os.environ.get("HOTKERNEL_TORCH2_PYTHON", "/opt/hotkernel-dev/torch2/bin/python")
TORCH113 = os.environ.get("HOTKERNEL_TORCH1_PYTHON", "/usr/bin/python3")
TRITON_ENTRY = "ASBCTLMBXQLCZAFXI3W3CL2WTDYCFKQSUYUI4EKCHXHXPQELJDGQ"


def hk(*args, env=None, tmp_path=None, timeout=180, path_prefix=None):
    """Runs the binary; returns (exit code, parsed JSON or None, stdout, stderr)."""
    full = dict(os.environ)
    full.pop("TRITON_CACHE_DIR", None)
    if path_prefix is not None:
        full["PATH"] = str(path_prefix) + os.pathsep + full.get("PATH", "")
    if tmp_path is not None:
        full["XDG_CACHE_HOME"] = str(tmp_path / "cache")
        full["HOME"] = str(tmp_path / "home")
    full.update(env or {})
    p = subprocess.run([BIN, *args], capture_output=True, timeout=timeout, env=full)
    out, err = p.stdout.decode(), p.stderr.decode()
    try:
        parsed = json.loads(out) if "--json" in args else None
    except json.JSONDecodeError:
        parsed = None
    return p.returncode, parsed, out, err


def calls(log):
    return [json.loads(line) for line in Path(log).read_text().splitlines()] if Path(log).exists() else []


@functools.lru_cache(maxsize=None)
def has_torch(python):
    if not Path(python).exists():
        return False
    return subprocess.run([python, "-c", "import torch"], capture_output=True, timeout=120).returncode == 0


def cuobjdump_python():
    """The interpreter whose site-packages hold cuobjdump (and nvdisasm), or None."""
    if not Path(TORCH2).exists():
        return None
    probe = ("import site,glob,os\n"
             "d=site.getsitepackages()\n"
             "print(any(glob.glob(os.path.join(x,'nvidia','*','bin','cuobjdump'))"
             " or os.path.exists(os.path.join(x,'triton','backends','nvidia','bin','cuobjdump')) for x in d))")
    r = subprocess.run([TORCH2, "-c", probe], capture_output=True, text=True, timeout=60)
    return TORCH2 if r.stdout.strip() == "True" else None


needs_cuobjdump = pytest.mark.skipif(
    cuobjdump_python() is None,
    reason=f"no cuobjdump: install nvidia-cuda-cuobjdump + nvidia-cuda-nvdisasm (or triton) into {TORCH2}")


# ----------------------------------------------------------------------------- profile: ncu

def test_ncu_profile_saves_report_and_csv_and_matches_demangled_names(tmp_path):
    log = tmp_path / "ncu.log"
    out = tmp_path / "prof" / "gelu"
    script = tmp_path / "prog.py"
    script.write_text("print('program output')\n")
    rc, r, _, err = hk("--json", "profile", "--tool", "ncu", f"python3 {script}", "--ncu-kernel-regex", "gelu",
                       "--launch-count", "2", "--launch-skip", "1", "--output", str(out),
                       path_prefix=FAKE, tmp_path=tmp_path, env={"FAKE_NCU_LOG": str(log), "FAKE_NCU_MODE": "ok"})
    assert rc == 0, err
    assert r["tool"] == "ncu"
    assert r["report_path"] == str(out) + ".ncu-rep" and Path(r["report_path"]).exists()
    assert r["csv_path"] == str(out) + ".csv"
    assert "Metric Name" in Path(r["csv_path"]).read_text()
    k = r["kernels"][0]
    assert k["name"] == "void saxpy<float>(int, T1, const T1 *, T1 *)"
    assert k["duration_ns"] == 57920
    assert k["achieved_occupancy_pct"] == 74.49
    assert k["dram_throughput_pct"] == 65.69
    assert k["sm_throughput_pct"] == 34.76
    assert k["registers_per_thread"] == 16
    assert k["bound"] == "memory"
    assert "program output" in r["program_output_tail"]
    run, imp = calls(log)
    # Clocks as in real runs; the regex against demangled names, case-insensitively.
    assert run[run.index("--clock-control") + 1] == "none"
    assert run[run.index("--kernel-name-base") + 1] == "demangled"
    assert run[run.index("-k") + 1] == "regex:[gG][eE][lL][uU]"
    assert run[run.index("-c") + 1] == "2" and run[run.index("-s") + 1] == "1"
    assert run[run.index("-o") + 1] == str(out)
    assert run[-1] == str(script) and Path(run[-2]).name.startswith("python")
    assert imp[:3] == ["--import", str(out) + ".ncu-rep", "--csv"]
    assert imp[imp.index("--page") + 1] == "details"


def test_ncu_clock_control_can_be_set(tmp_path):
    log = tmp_path / "ncu.log"
    rc, r, _, err = hk("--json", "profile", "--tool", "ncu", "true", "--clock-control", "base",
                       path_prefix=FAKE, tmp_path=tmp_path, env={"FAKE_NCU_LOG": str(log)})
    assert rc == 0, err
    run = calls(log)[0]
    assert run[run.index("--clock-control") + 1] == "base"
    assert "-k" not in run  # no regex: every kernel
    # The default report goes under the hotkernel cache.
    assert r["report_path"].startswith(str(tmp_path / "cache"))


def test_ncu_no_kernels_profiled_is_an_error_listing_what_ran(tmp_path):
    rc, _, out, err = hk("profile", "--tool", "ncu", "true", "--ncu-kernel-regex", "gelu",
                         path_prefix=FAKE, tmp_path=tmp_path, env={"FAKE_NCU_MODE": "nomatch"})
    assert rc == 1, out
    assert "ncu profiled no kernel matching regex 'gelu'" in err
    assert "1. distribution_elementwise_grid_stride_kernel" in err
    assert "2. vectorized_elementwise_kernel" in err
    assert out == ""


def test_ncu_exit_0_without_report_is_an_error(tmp_path):
    rc, _, _, err = hk("profile", "--tool", "ncu", "true", path_prefix=FAKE, tmp_path=tmp_path,
                       env={"FAKE_NCU_MODE": "noreport"})
    assert rc == 1
    assert "wrote no report" in err and "ERR_NVGPUCTRPERM" in err


def test_profile_bad_calls(tmp_path):
    rc, _, _, err = hk("profile", "--tool", "ncu", "no-such-program-xyz", path_prefix=FAKE, tmp_path=tmp_path)
    assert rc == 1 and "no-such-program-xyz" in err
    rc, _, _, err = hk("profile", "--tool", "ncu", "python3 'unterminated", path_prefix=FAKE, tmp_path=tmp_path)
    assert rc == 2 and "unterminated" in err
    rc, _, _, err = hk("profile", "--tool", "perf", "true", tmp_path=tmp_path)
    assert rc == 2
    # No ncu anywhere: say so and where it looked.
    rc, _, _, err = hk("profile", "--tool", "ncu", "true", tmp_path=tmp_path,
                       env={"PATH": "/usr/bin:/bin", "HOTKERNEL_PYTHON": sys.executable})
    assert rc == 1 and "ncu was not found" in err and "PATH" in err


def test_profile_timeout_kills_the_run(tmp_path):
    start = time.monotonic()
    rc, _, _, err = hk("profile", "--tool", "ncu", "sleep 30", "--timeout-s", "2", path_prefix=FAKE, tmp_path=tmp_path)
    assert rc == 1 and "timed out" in err
    assert time.monotonic() - start < 20


# ----------------------------------------------------------------------------- profile: nsys

def test_nsys_qdstrm_only_is_a_clear_error(tmp_path):
    rc, _, _, err = hk("profile", "--tool", "nsys", "true", path_prefix=FAKE, tmp_path=tmp_path,
                       env={"FAKE_NSYS_MODE": "qdstrm"})
    assert rc == 1
    assert "wrote no report" in err and ".qdstrm" in err
    assert "Importer error status: An unknown error occurred." in err
    assert "tool='ncu'" in err
    # The raw stream hotkernel named itself is removed (they reach gigabytes).
    assert not list((tmp_path / "cache").rglob("*.qdstrm"))


def test_nsys_profile_then_stats(tmp_path):
    log = tmp_path / "nsys.log"
    out = tmp_path / "n" / "run"
    rc, r, _, err = hk("--json", "profile", "--tool", "nsys", "true", "--output", str(out), path_prefix=FAKE,
                       tmp_path=tmp_path, env={"FAKE_NSYS_LOG": str(log)})
    assert rc == 0, err
    assert r["report_path"] == str(out) + ".nsys-rep"
    assert r["csv_path"] == str(out) + "_cuda_gpu_kern_sum.csv"
    assert r["stats_report"] == "cuda_gpu_kern_sum"
    assert r["kernel_count"] == 3
    assert r["kernels"][0]["name"].startswith("nvjet_sm90")
    assert r["kernels"][0]["calls"] == 5
    prof, stats = calls(log)
    assert prof[0] == "profile" and "--force-overwrite" in prof and prof[-1] == "true"
    assert stats[stats.index("--report") + 1] == "cuda_gpu_kern_sum"
    assert stats[stats.index("--format") + 1] == "csv"
    # top-kernels reads the CSV profile() saved and gives the same first row.
    rc, t, _, err = hk("--json", "top-kernels", r["csv_path"], "--n", "2")
    assert rc == 0, err
    assert t["tool"] == "nsys" and t["kernels"] == r["kernels"][:2]


def test_nsys_old_report_name_falls_back_to_gpukernsum(tmp_path):
    rc, r, _, err = hk("--json", "profile", "--tool", "nsys", "true", path_prefix=FAKE, tmp_path=tmp_path,
                       env={"FAKE_NSYS_MODE": "old"})
    assert rc == 0, err
    assert r["stats_report"] == "gpukernsum"
    assert r["generation"] == "gpukernsum-legacy"
    assert r["kernels"][0]["avg_ns"] == 185000


# ----------------------------------------------------------------------------- top-kernels

def test_top_kernels_ncu_real_capture():
    rc, r, _, err = hk("--json", "top-kernels", str(H200 / "ncu-2025.3.1-saxpy.csv"))
    assert rc == 0, err
    assert r["tool"] == "ncu" and r["launches_in_file"] == 1
    k = r["kernels"][0]
    assert (k["duration_ns"], k["registers_per_thread"], k["bound"]) == (57920, 16, "memory")
    assert "memory-bound" in k["hint"]
    assert [x["rule"] for x in k["ncu_rules"]] == ["SOLBottleneck", "AchievedOccupancy"]


@pytest.mark.parametrize("name,generation,first,calls_", [
    ("nsys-cuda_gpu_kern_sum.csv", "cuda_gpu_kern_sum", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 5),
    ("nsys-cuda_gpu_kern_sum-us.csv", "cuda_gpu_kern_sum", "gemm_kernel<float, 128, 128>(const float *, float *, int)", 4),
    ("nsys-gpukernsum-gridblock.csv", "gpukernsum-gridblock", "reduce_kernel<float, 256>(const float *, float *, int)", 4),
    ("nsys-gpukernsum-legacy.csv", "gpukernsum-legacy", "void sgemm_kernel<float, 64>(int, int, float const*, float*)", 10),
    ("nsys-stats-stdout.txt", "cuda_gpu_kern_sum", "void saxpy<float>(int, T1, const T1 *, T1 *)", 1),
])
def test_top_kernels_every_nsys_generation(name, generation, first, calls_):
    rc, r, _, err = hk("--json", "top-kernels", str(FIX / "formats" / name), "--n", "1")
    assert rc == 0, err
    assert r["tool"] == "nsys" and r["generation"] == generation
    assert len(r["kernels"]) == 1
    assert r["kernels"][0]["name"] == first and r["kernels"][0]["calls"] == calls_


def test_top_kernels_us_file_is_reported_in_ns():
    rc, r, _, _ = hk("--json", "top-kernels", str(FIX / "formats" / "nsys-cuda_gpu_kern_sum-us.csv"))
    assert r["kernels"][0]["total_ns"] == 400000 and r["time_unit_in_file"] == "us"


def test_top_kernels_errors(tmp_path):
    rc, _, _, err = hk("top-kernels", str(H200 / "ncu-2025.3.1-no-kernels-matched.txt"))
    assert rc == 1 and "2. vectorized_elementwise_kernel" in err
    rc, _, _, err = hk("top-kernels", str(tmp_path / "missing.csv"))
    assert rc == 1 and "not found" in err
    junk = tmp_path / "junk.csv"
    junk.write_text("a,b,c\n1,2,3\n")
    rc, _, _, err = hk("top-kernels", str(junk))
    assert rc == 1 and "neither an nsys" in err
    rc, _, _, err = hk("top-kernels", str(junk), "--tool", "ncu")
    assert rc == 1 and "no ncu kernel rows" in err
    rc, r, _, _ = hk("--json", "top-kernels", str(FIX / "formats" / "nsys-no-kernel-data.txt"), "--tool", "nsys")
    assert rc == 0 and r["kernels"] == [] and r["warnings"][0]["id"] == "no_kernel_data"


# ----------------------------------------------------------------------------- disassemble

@needs_cuobjdump
def test_disassemble_captured_saxpy_cubin():
    py = cuobjdump_python()
    rc, r, _, err = hk("--python", py, "--json", "disassemble", str(H200 / "saxpy-nvcc-13.0-sm_90.cubin"),
                       "--max-lines", "0")
    assert rc == 0, err
    assert r["arch"] == "sm_90" and r["archs_available"] == ["sm_90"]
    f = r["functions"][0]
    assert f["name"] == "_Z5saxpyIfEviT_PKS0_PS0_"
    assert f["demangled"].startswith("void saxpy<float>(int, float")
    assert f["registers"] == 10  # ptxas -v said "Used 10 registers" (nvcc-13.0-ptxas-v.txt)
    assert r["instruction_count"] == 20
    assert r["widest_global_load_bits"] == 32 and r["global_load_128bit"] is False
    assert r["local_memory_spills"] == {"ldl": 0, "stl": 0}
    assert r["uses_tensor_cores"] is False
    assert {m["opcode"]: m["count"] for m in r["instruction_mix"]}["LDG"] == 2
    assert r["truncated"] is False and "FFMA R7, R2, UR6, R7" in r["text"]
    assert "void saxpy<float>" in r["text"].splitlines()[0]


@needs_cuobjdump
def test_disassemble_max_lines_and_kernel_filter():
    py = cuobjdump_python()
    rc, r, _, err = hk("--python", py, "--json", "disassemble", str(H200 / "saxpy-nvcc-13.0-sm_90.cubin"),
                       "--max-lines", "5")
    assert rc == 0, err
    assert r["truncated"] is True and r["shown_lines"] == 5 and len(r["text"].splitlines()) == 5
    rc, _, _, err = hk("--python", py, "disassemble", str(H200 / "saxpy-nvcc-13.0-sm_90.cubin"), "--kernel", "gemm")
    assert rc == 1 and "saxpy" in err
    rc, _, _, err = hk("--python", py, "disassemble", str(H200 / "saxpy-nvcc-13.0-sm_90.cubin"), "--level", "ptx")
    assert rc == 1 and "no PTX" in err


def copy_cache(tmp_path):
    cache = tmp_path / "triton-cache"
    shutil.copytree(H200 / "triton-3.6-cache", cache)
    return cache


@needs_cuobjdump
def test_disassemble_triton_cache_entry(tmp_path):
    py = cuobjdump_python()
    cache = copy_cache(tmp_path)
    rc, r, _, err = hk("--python", py, "--json", "disassemble", "triton-cache", "--kernel", "SOFTMAX",
                       env={"TRITON_CACHE_DIR": str(cache)})
    assert rc == 0, err
    assert r["arch"] == "sm_90a"
    assert r["triton"]["name"] == "softmax_kernel"
    assert r["triton"]["num_warps"] == 4 and r["triton"]["shared_bytes"] == 16
    assert r["triton"]["triton_version"] == "3.6.0"
    assert r["registers"] == 29
    assert r["instruction_count"] == 207
    assert {m["opcode"]: m["count"] for m in r["instruction_mix"]}["SHFL"] == 14
    assert r["file"].endswith(f"{TRITON_ENTRY}/softmax_kernel.cubin")
    assert any(w["id"] == "disassembler_warning" and "switching to Old format" in w["message"] for w in r["warnings"])


@needs_cuobjdump
def test_disassemble_triton_cache_picks_the_newest_entry(tmp_path):
    py = cuobjdump_python()
    cache = copy_cache(tmp_path)
    newer = cache / "NEWERENTRYNEWERENTRYNEWERENTRYNEWERENTRYNEWERENTRYAA"
    shutil.copytree(cache / TRITON_ENTRY, newer)
    # Set both ages explicitly: copytree keeps the fixture's own mtime, which may be anything.
    now = time.time()
    old = now - 3600
    for f in (cache / TRITON_ENTRY).iterdir():
        os.utime(f, (old, old))
    for f in newer.iterdir():
        os.utime(f, (now, now))
    rc, r, _, err = hk("--python", py, "--json", "disassemble", "triton-cache", "--kernel", "softmax",
                       env={"TRITON_CACHE_DIR": str(cache)})
    assert rc == 0, err
    assert r["triton"]["entry_dir"] == str(newer) and r["triton"]["matching_entries"] == 2
    # A write in progress (tmp.*) is never picked.
    shutil.copytree(cache / TRITON_ENTRY, cache / "tmp.pid_1_abc")
    rc, r, _, _ = hk("--python", py, "--json", "disassemble", "triton-cache", "--kernel", "softmax",
                     env={"TRITON_CACHE_DIR": str(cache)})
    assert r["triton"]["matching_entries"] == 2


def test_disassemble_triton_cache_errors(tmp_path):
    cache = copy_cache(tmp_path)
    rc, _, _, err = hk("disassemble", "triton-cache", env={"TRITON_CACHE_DIR": str(cache)})
    assert rc == 2 and "kernel" in err
    rc, _, _, err = hk("disassemble", "triton-cache", "--kernel", "matmul", env={"TRITON_CACHE_DIR": str(cache)},
                       tmp_path=tmp_path)
    assert rc == 1 and "softmax_kernel" in err and "matmul" in err
    rc, _, _, err = hk("disassemble", "triton-cache", "--kernel", "x", tmp_path=tmp_path,
                       env={"TRITON_CACHE_DIR": str(tmp_path / "empty")})
    assert rc == 1 and "run the kernel once first" in err
    rc, _, _, err = hk("disassemble", str(tmp_path / "nope.cubin"))
    assert rc == 1 and "not found" in err


def test_disassemble_triton_ptx_needs_no_cuobjdump(tmp_path):
    cache = copy_cache(tmp_path)
    rc, r, _, err = hk("--json", "disassemble", "triton-cache", "--kernel", "softmax", "--level", "ptx",
                       "--max-lines", "0", env={"TRITON_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"})
    assert rc == 0, err
    assert r["source"] == "file" and r["arch"] == "sm_90a" and r["functions"] == ["softmax_kernel"]
    assert r["text"].count("\n") == r["total_lines"]
    assert ".visible .entry softmax_kernel(" in r["text"]
    assert r["local_memory_spills"] == {"ldl": 0, "stl": 0}  # same shape as for SASS (ld.local / st.local)


@needs_cuobjdump
def test_disassemble_a_cubin_compiled_here_with_ptxas(tmp_path):
    py = cuobjdump_python()
    site = subprocess.run([py, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, timeout=60).stdout.strip()
    ptxas = Path(site) / "triton" / "backends" / "nvidia" / "bin" / "ptxas"
    if not ptxas.exists():
        pytest.skip(f"no ptxas at {ptxas} (triton is not installed in {py})")
    ptx = H200 / "triton-3.6-cache" / TRITON_ENTRY / "softmax_kernel.ptx"
    cubin = tmp_path / "fresh.cubin"
    subprocess.run([str(ptxas), "-arch=sm_90a", str(ptx), "-o", str(cubin)], check=True, timeout=120)
    rc, r, _, err = hk("--python", py, "--json", "disassemble", str(cubin))
    assert rc == 0, err
    assert r["arch"] == "sm_90a" and r["functions"][0]["name"] == "softmax_kernel"
    assert r["instruction_count"] > 100 and r["registers"] > 0
    rc, _, _, err = hk("--python", py, "disassemble", str(ptx), "--level", "sass")
    assert rc == 1 and "ptxas" in err  # PTX text has no SASS until ptxas compiles it


# ----------------------------------------------------------------------------- torch-profile

JUNK_SCRIPT = """
import os
import sys
import torch
# A bench-contract script writes its result to HOTKERNEL_RESULT_FD when set: it must not find ours.
if os.environ.get("HOTKERNEL_RESULT_FD"):
    os.write(int(os.environ["HOTKERNEL_RESULT_FD"]), b'{"evil": 1}')
print("junk on stdout {not json", flush=True)
sys.stdout.write('{"kernels": "fake"}\\n')
# The gelu's output is 16x the inputs' size, so it ranks among the top ops by time on a loaded
# machine too (a gelu of 64x32 could rank under randn's and sum's and miss the top five).
x = torch.randn(256, 32)
w = torch.randn(32, 1024)
for _ in range(3):
    y = torch.nn.functional.gelu(x @ w)
print(float(y.sum()))
"""


@pytest.mark.parametrize("python,label", [(TORCH113, "torch 1.13"), (TORCH2, "torch 2.x")])
def test_torch_profile_on_cpu(tmp_path, python, label):
    if not has_torch(python):
        pytest.skip(f"{label}: no torch in {python}")
    script = tmp_path / "tiny.py"
    script.write_text(JUNK_SCRIPT)
    rc, r, out, err = hk("--python", python, "--json", "torch-profile", str(script), "--n", "5", tmp_path=tmp_path)
    assert rc == 0, err
    assert r["cuda_available"] is False and r["kernels"] == []
    assert "no CUDA device" in r["note"]
    assert r["torch_version"].startswith("1.13" if "1.13" in label else "2.")
    names = [o["name"] for o in r["ops"]]
    assert "aten::gelu" in names and ("aten::mm" in names or "aten::matmul" in names)
    assert len(r["ops"]) <= 5
    gelu = next(o for o in r["ops"] if o["name"] == "aten::gelu")
    assert gelu["calls"] == 3 and gelu["input_shapes"][0] == [256, 1024] and gelu["cpu_total_us"] > 0
    assert all(not o["name"].startswith("Activity Buffer") for o in r["ops"])
    # The script's prints, a fake result line among them, did not corrupt the result.
    assert r["kernels"] == [] and "junk on stdout" in r["script_output_tail"] and "evil" not in r


def test_torch_profile_errors(tmp_path):
    python = TORCH113 if has_torch(TORCH113) else (TORCH2 if has_torch(TORCH2) else None)
    rc, _, _, err = hk("torch-profile", str(tmp_path / "missing.py"), tmp_path=tmp_path)
    assert rc == 1 and "not found" in err
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nraise ValueError('boom from the script')\n")
    if python:
        rc, _, _, err = hk("--python", python, "torch-profile", str(bad), tmp_path=tmp_path)
        assert rc == 1 and "ValueError: boom from the script" in err
        ex = tmp_path / "exit3.py"
        ex.write_text("import sys\nsys.exit(3)\n")
        rc, _, _, err = hk("--python", python, "torch-profile", str(ex), tmp_path=tmp_path)
        assert rc == 1 and "status 3" in err
        slow = tmp_path / "slow.py"
        slow.write_text("import time\ntime.sleep(60)\n")
        start = time.monotonic()
        rc, _, _, err = hk("--python", python, "torch-profile", str(slow), "--timeout-s", "3", tmp_path=tmp_path)
        assert rc == 1 and "timed out" in err and time.monotonic() - start < 40
    # An interpreter without torch: say so and how to fix it.
    notorch = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode != 0
    if notorch:
        ok = tmp_path / "ok.py"
        ok.write_text("print(1)\n")
        rc, _, _, err = hk("--python", sys.executable, "torch-profile", str(ok), tmp_path=tmp_path)
        assert rc == 1 and "torch could not be imported" in err and "--python" in err


# ----------------------------------------------------------------------------- MCP

def mcp_call(name, arguments, env=None, timeout=60):
    with McpSession(env=env, timeout=timeout) as s:
        return s.call(name, arguments)


def test_mcp_top_kernels_and_profile_error(tmp_path):
    res = mcp_call("top_kernels", {"csv": str(H200 / "ncu-2025.3.1-saxpy.csv")})
    assert not res.get("isError")
    assert res["structuredContent"]["kernels"][0]["duration_ns"] == 57920
    env = {"PATH": str(FAKE) + os.pathsep + os.environ["PATH"], "FAKE_NCU_MODE": "nomatch",
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    res = mcp_call("profile", {"tool": "ncu", "command": "true", "ncu_kernel_regex": "gelu"}, env=env)
    assert res["isError"] is True
    assert "vectorized_elementwise_kernel" in res["content"][0]["text"]
