"""The wheel, installed as a user installs it: `pip install` into an empty venv, then the smoke
test of the install path (docs/install.md): the version, what the binary links, the roofline,
`new` + `bench` on the CPU, `python -m hotkernel`, the shell files, and the MCP server started
from the venv and through `uvx`. HOTKERNEL_WHEEL names the wheel (scripts/test builds it with
scripts/build-wheel); without it every test here skips, saying so."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

WHEEL = os.environ.get("HOTKERNEL_WHEEL", "")
TORCH_PYTHON = os.environ.get("HOTKERNEL_WHEEL_TEST_PYTHON", "/usr/bin/python3")  # Debian's, torch 1.13
UV = os.environ.get("HOTKERNEL_UV", "/opt/hotkernel-dev/wheel/bin/uv")
pytestmark = pytest.mark.skipif(not WHEEL, reason="HOTKERNEL_WHEEL is not set: build one with scripts/build-wheel")

# The wheel's binary stays under this (issue #21: Release, stripped, <= 20 MB).
MAX_BINARY_BYTES = 20 * 1000 * 1000


def run(argv, timeout=120, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    assert p.returncode == 0, "%s exited %d:\n%s\n%s" % (argv, p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return p.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """An empty venv with only the wheel installed, from the file and nothing else (--no-index)."""
    root = tmp_path_factory.mktemp("wheel") / "venv"
    run([sys.executable, "-m", "venv", str(root)])
    run([str(root / "bin" / "pip"), "install", "-q", "--no-index", "--disable-pip-version-check", WHEEL])
    return root


def clean_env(tmp_path, **extra):
    """An environment that names nothing of the repo: the venv's bin first, a fresh home."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
           "HOTKERNEL_KEEP_WARM_S": "0", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.update(extra)
    return env


def test_the_wheel_is_tagged_for_the_glibc_its_binary_needs_and_is_small():
    name = os.path.basename(WHEEL)
    m = re.search(r"-py3-none-manylinux_(\d+)_(\d+)_x86_64\.whl$", name)
    assert m, "not a py3-none-manylinux wheel: " + name
    with zipfile.ZipFile(WHEEL) as z:
        scripts = [i for i in z.infolist() if re.search(r"\.data/scripts/hotkernel$", i.filename)]
        assert len(scripts) == 1, [i.filename for i in z.infolist()]
        assert 1_000_000 < scripts[0].file_size <= MAX_BINARY_BYTES, scripts[0].file_size
        names = z.namelist()
    for shared in ("man/man1/hotkernel.1", "bash-completion/completions/hotkernel",
                   "zsh/site-functions/_hotkernel", "fish/vendor_completions.d/hotkernel.fish"):
        assert any(n.endswith(".data/data/share/" + shared) for n in names), shared


def test_version_from_the_binary_and_python_m_is_the_distributions(venv, tmp_path):
    meta = run([str(venv / "bin" / "python"), "-c",
                "import importlib.metadata as m; print(m.version('hotkernel'))"]).strip()
    assert meta and meta in os.path.basename(WHEEL)
    env = clean_env(tmp_path)
    assert run([str(venv / "bin" / "hotkernel"), "--version"], env=env).strip() == "hotkernel " + meta
    assert run([str(venv / "bin" / "python"), "-m", "hotkernel", "--version"], env=env).strip() == "hotkernel " + meta


def test_the_binary_links_nothing_but_glibc(venv):
    out = run(["ldd", str(venv / "bin" / "hotkernel")])
    libs = sorted(re.findall(r"^\s*(\S+)", out, re.M))
    allowed = re.compile(r"^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|/lib64/ld-linux-x86-64\.so\.2)$")
    assert libs and all(allowed.match(x) for x in libs), libs
    # The newest glibc symbol version it asks for: the wheel's manylinux tag says the same.
    syms = run(["objdump", "-T", str(venv / "bin" / "hotkernel")])
    newest = max((tuple(map(int, v.split("."))) for v in re.findall(r"GLIBC_(\d+\.\d+)", syms)))
    tag = re.search(r"manylinux_(\d+)_(\d+)_", os.path.basename(WHEEL))
    assert newest == (int(tag.group(1)), int(tag.group(2))), newest


def test_roofline_of_a_named_gpu(venv, tmp_path):
    out = run([str(venv / "bin" / "hotkernel"), "roofline", "--gpu", "NVIDIA H200", "--flops", "1e12",
               "--bytes", "1e9", "--dtype", "bf16", "--json"], env=clean_env(tmp_path))
    r = json.loads(out)
    # 1e12 flops at the H200's 989.4 dense bf16 TFLOPS (its datasheet row, embedded in the binary).
    assert r["gpu"] == "NVIDIA H200" and r["bound"] == "compute", r
    assert abs(r["attainable_ms"] - 1e12 / 989.4e12 * 1e3) < 1e-9, r


@pytest.mark.skipif(not os.path.exists(TORCH_PYTHON), reason="no interpreter with torch at " + TORCH_PYTHON)
def test_new_then_bench_on_the_cpu(venv, tmp_path):
    env = clean_env(tmp_path)
    hk = str(venv / "bin" / "hotkernel")
    new = json.loads(run([hk, "new", "--from", "torch.nn.functional:gelu", "--shape", "64x256", "--dtype", "fp32",
                          "--out-dir", "gelu", "--python", TORCH_PYTHON, "--json"], cwd=tmp_path, env=env))
    baseline = new["files"]["baseline"]
    bench = json.loads(run([hk, "bench", baseline, "--n", "2", "--python", TORCH_PYTHON, "--json"],
                           cwd=tmp_path, env=env, timeout=300))
    assert bench["ok"] is True and bench["n"] == 2 and bench["mean_ms"] > 0, {k: bench.get(k) for k in ("ok", "n", "mean_ms")}
    assert bench["timer"] == "cpu" and bench["trusted"] is True


def test_python_m_hotkernel_runs_scripts_in_the_interpreter_that_started_it(venv, tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("import json, sys\nprint(json.dumps({'ms': 1.0, 'python': sys.executable}))\n")
    env = clean_env(tmp_path)
    out = run([str(venv / "bin" / "python"), "-m", "hotkernel", "bench", str(script), "--n", "1", "--json"],
              cwd=tmp_path, env=env)
    line = json.loads(out)["runs"][0]["line"]
    assert Path(line["python"]).parent == venv / "bin", line


def test_shell_files_are_the_binarys_own(venv, tmp_path):
    hk = str(venv / "bin" / "hotkernel")
    env = clean_env(tmp_path)
    share = venv / "share"
    assert (share / "man/man1/hotkernel.1").read_text() == run([hk, "man"], env=env)
    assert (share / "bash-completion/completions/hotkernel").read_text() == run([hk, "completions", "bash"], env=env)
    assert (share / "zsh/site-functions/_hotkernel").read_text() == run([hk, "completions", "zsh"], env=env)
    assert (share / "fish/vendor_completions.d/hotkernel.fish").read_text() == run([hk, "completions", "fish"], env=env)


def mcp_handshake(argv, env, timeout=120):
    """initialize, initialized, tools/list over stdio; returns (serverInfo, tool names)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wheel-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    p = subprocess.run(argv, input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True,
                       text=True, timeout=timeout, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    answers = {m["id"]: m for m in map(json.loads, p.stdout.splitlines()) if "id" in m}
    return answers[1]["result"]["serverInfo"], [t["name"] for t in answers[2]["result"]["tools"]]


def test_mcp_server_from_the_venv(venv, tmp_path):
    info, tools = mcp_handshake([str(venv / "bin" / "hotkernel"), "mcp"], clean_env(tmp_path))
    assert info["name"] == "hotkernel" and info["version"] in os.path.basename(WHEEL)
    assert {"bench", "verify", "roofline", "new", "record"} <= set(tools), tools


@pytest.mark.skipif(not os.path.exists(UV), reason="uv is not installed at " + UV + " (scripts/install-deps.sh wheel)")
def test_uvx_starts_the_mcp_server(tmp_path):
    # `uvx hotkernel mcp` as an agent's MCP config writes it, from this wheel and offline.
    env = clean_env(tmp_path, UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_TOOL_DIR=str(tmp_path / "uv-tools"),
                    UV_PYTHON_DOWNLOADS="never")
    info, tools = mcp_handshake([UV, "tool", "run", "--offline", "--from", WHEEL, "hotkernel", "mcp"], env)
    assert info["name"] == "hotkernel" and len(tools) >= 11, tools
