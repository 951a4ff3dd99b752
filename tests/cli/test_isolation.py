# The harness's interpreters start isolated from the user's start-up files (`python -I`):
# a .pth in the user site and a sitecustomize on PYTHONPATH never run, in a fresh run or in a
# fork server (its forks inherit it), unless isolate=false asks for them; the target's own
# folder stays importable.
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "adversarial"))
import harness  # noqa: E402

BIN = harness.binary()
HOOK = "import os; open(os.path.join(os.environ['HK_ISO_MARKERS'], '%s-%%d' %% os.getpid()), 'w').close()\n"


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    py = harness.torch_python()
    if py is None:
        pytest.skip("no interpreter with torch: set HOTKERNEL_TORCH_PYTHON")
    out = tmp_path_factory.mktemp("iso")
    base = harness.scaffold(out, py, device="cpu", shape="64x64", iters=8, samples=2, warmup_s=0.05)
    # The target imports a module from its own folder: still found under -I.
    (out / "iso_helper.py").write_text("from torch.nn.functional import gelu\n")
    text = base.read_text().replace("from torch.nn.functional import gelu as _baseline",
                                    "from iso_helper import gelu as _baseline")
    assert text != base.read_text()
    base.write_text(text)
    return py, base


def start_up_files(tmp_path, py):
    """A user site with a .pth and a PYTHONPATH folder with a sitecustomize, each leaving a marker."""
    env = {"PYTHONUSERBASE": str(tmp_path / "ub"), "PYTHONPATH": str(tmp_path / "pp"),
           "HK_ISO_MARKERS": str(tmp_path / "markers"), "HOTKERNEL_KEEP_WARM_S": "0",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOTKERNEL_CACHE_BYTES": str(1 << 20)}
    site = subprocess.run([py, "-c", "import site; print(site.getusersitepackages())"], capture_output=True,
                          text=True, env=dict(os.environ, **env), check=True).stdout.strip()
    Path(site).mkdir(parents=True)
    (Path(site) / "hk_start.pth").write_text(HOOK % "pth")
    (tmp_path / "pp").mkdir()
    (tmp_path / "pp" / "sitecustomize.py").write_text(HOOK % "sitecustomize")
    (tmp_path / "markers").mkdir()
    return env


@pytest.mark.parametrize("warm", [True, False], ids=["forked", "fresh"])
def test_user_start_up_files_do_not_run_unless_asked_for(target, tmp_path, warm):
    py, base = target
    env = start_up_files(tmp_path, py)
    cmd = [BIN, "--python", py, "--json", "bench", str(base), "--n", "1"] + ([] if warm else ["--no-warm"])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=dict(os.environ, **env))
    assert p.returncode == 0, p.stderr[-2000:]
    assert sorted(os.listdir(env["HK_ISO_MARKERS"])) == [], "a start-up file ran in the harness"
    p = subprocess.run(cmd + ["--no-isolate"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, **env))
    assert p.returncode == 0, p.stderr[-2000:]
    ran = {name.split("-")[0] for name in os.listdir(env["HK_ISO_MARKERS"])}
    assert ran == {"pth", "sitecustomize"}, ran


LEAK_FD = 251
LEAKER = '''
import os
try:
    os.write(%d, b"candidate wrote to its launcher's pipe\\n")
except OSError:
    pass
''' % LEAK_FD


@pytest.mark.parametrize("warm", [True, False], ids=["forked", "fresh"])
def test_a_descriptor_hotkernel_inherited_does_not_reach_the_candidate(target, tmp_path, warm):
    # hotkernel started with a pipe open at fd 251 without close-on-exec (as a shell or CI runner
    # can leave one): the candidate, which tries to write to it, must not have it.
    py, base = target
    cand = harness.make_candidate(tmp_path, harness.HONEST / "blank.py", base)
    cand.write_text(LEAKER + cand.read_text())
    r, w = os.pipe()
    os.dup2(w, LEAK_FD)  # handed down to hotkernel by pass_fds, open in it without close-on-exec
    os.close(w)
    env = {"HOTKERNEL_KEEP_WARM_S": "0", "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "HOTKERNEL_CACHE_BYTES": str(1 << 20)}
    cmd = [BIN, "--python", py, "--json", "bench", str(cand), "--n", "1"] + ([] if warm else ["--no-warm"])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=dict(os.environ, **env),
                           pass_fds=(LEAK_FD,))
    finally:
        os.close(LEAK_FD)
    os.set_blocking(r, False)
    try:
        got = os.read(r, 4096)
    except BlockingIOError:
        got = b""
    os.close(r)
    assert p.returncode == 0, p.stderr[-2000:]
    assert got == b"", "the candidate wrote to a pipe hotkernel inherited: %r" % got
