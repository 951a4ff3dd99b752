"""What the fork server prepares once for every trusted run (hotkernel_forkserver.py's
_precompile): the harness's code objects and the torch names each reads. A run must get from
them exactly what it would compute itself, and take nothing for an object it was not computed for."""
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = r"""
import os, sys, hashlib
sys.path.insert(0, sys.argv[1])
import torch
import hotkernel_contract as hk
import hotkernel_harness as R
import hotkernel_defences as D
codes = list(D.harness_codes([hk, R, D]).values())
plain = D.torch_names(codes)
assert plain, "the harness reads torch names"
# The fork server's table is built from the module code objects; these modules were imported
# here, so build it from their functions' code (the same objects the run's harness_codes sees).
table = D.torch_name_table(codes)
assert D.torch_names(codes, table) == plain
# An entry whose id matches but whose object is another code is not taken.
fake = compile("def f():\n    return 1\n", "<fake>", "exec")
poisoned = {i: (fake, frozenset({("torch", "nothing_real")})) for i in table}
assert D.torch_names(codes, poisoned) == plain
# The harness's critical names are the same with the table as without it.
h1 = D.Harness(torch, hk, R, [torch.nn.functional.gelu], {})
h2 = D.Harness(torch, hk, R, [torch.nn.functional.gelu], {}, table)
assert h1.critical_names == h2.critical_names
print("ok", len(plain))
"""


@pytest.mark.parametrize("py", ["/usr/bin/python3", "/opt/hotkernel-dev/torch2/bin/python"])
def test_the_torch_name_table_gives_what_the_harness_computes_and_nothing_for_other_objects(py):
    import os
    if not os.path.exists(py):
        pytest.skip("interpreter %s is missing on this machine" % py)
    r = subprocess.run([py, "-c", SCRIPT, str(ROOT / "python")], capture_output=True, text=True, timeout=120)
    if "No module named 'torch'" in r.stderr:
        pytest.skip("interpreter %s has no torch" % py)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("ok ")


def test_a_kept_server_compiles_a_changed_harness_file_afresh(tmp_path):
    """The server's code for a file is keyed by the sha256 of the bytes it compiled: a run whose
    file differs gets the file's own bytes compiled, never the server's older code."""
    probe = r"""
import os, sys, importlib.util
d = sys.argv[1]
spec = importlib.util.spec_from_file_location("fs", os.path.join(d, "hotkernel_forkserver.py"))
fs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fs)
fs._precompile()
keys = [k for k in fs._COMPILED if k != "torch_names"]
assert {os.path.basename(p) for p, _ in keys} >= {"hotkernel_harness.py", "hotkernel_contract.py"}, keys
runner = os.path.join(d, "hotkernel_harness.py")
import runpy
ran = []
runpy.run_path = lambda path, run_name=None: ran.append(("compiled afresh", path))
runpy._run_module_code = lambda code, g, name, **k: ran.append(("precompiled", k["script_name"], sorted(g)))
fs._run_script(runner)  # the bytes it compiled: its code, and the other files' for the runner
assert ran == [("precompiled", runner, ["_HOTKERNEL_COMPILED", "_HOTKERNEL_RAN_SHA256"])], ran
fs._precompile()
with open(runner, "a") as f:
    f.write("\nprint('changed bytes ran')\n")
ran.clear()
fs._run_script(runner)
assert ran == [("compiled afresh", runner)], ran
print("ok")
"""
    d = tmp_path / "py"
    d.mkdir()
    for f in (ROOT / "python").glob("*.py"):
        (d / f.name).write_bytes(f.read_bytes())
    r = subprocess.run([sys.executable, "-c", probe, str(d)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
