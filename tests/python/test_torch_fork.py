"""The contract tests run their scripts forked from an interpreter that imported torch
(torch_fork.py): a forked run must see what a fresh `python SCRIPT ARGS` sees, or those tests
would prove less than they say."""
import json
import os
import subprocess

import pytest

from conftest import forked

PROBE = """\
import json, os, sys
MARK = 7
print(json.dumps({"argv": sys.argv, "path0": sys.path[0], "name": __name__, "file": __file__, "cwd": os.getcwd(),
                  "env": os.environ.get("HK_FORK_PROBE"), "stdin": sys.stdin.read(),
                  "main_is_this": sys.modules["__main__"].__dict__.get("MARK") == 7,
                  "contract_imported": "hotkernel_contract" in sys.modules}))
print("to stderr", file=sys.stderr)
sys.exit(3)
"""


def test_a_forked_script_sees_what_a_fresh_one_sees(py, tmp_path):
    server = forked(py)
    if server is None:
        pytest.skip("%s cannot fork after importing torch here: its tests start fresh processes" % py)
    (tmp_path / "sub").mkdir()
    script = tmp_path / "sub" / "probe.py"
    script.write_text(PROBE)
    args = ["--size", "4 k"]
    fresh = subprocess.run([py, str(script), *args], cwd=str(tmp_path), capture_output=True, text=True, timeout=240,
                           env=dict(os.environ, HK_FORK_PROBE="yes"), stdin=subprocess.DEVNULL)
    rc, out, err = server.run(script=str(script), args=args, cwd=tmp_path, env={"HK_FORK_PROBE": "yes"})
    assert (rc, err) == (fresh.returncode, fresh.stderr) == (3, "to stderr\n")
    assert json.loads(out) == json.loads(fresh.stdout)
    # a snippet: as `python -c`, its folder '' first on sys.path, no __file__
    rc, out, err = server.run(code="import sys; print(sys.argv, repr(sys.path[0]), __name__, '__file__' in dir())",
                              cwd=tmp_path)
    assert (rc, out, err) == (0, "['-c'] '' __main__ False\n", "")


def test_a_forked_run_past_its_timeout_is_killed_and_said(py, tmp_path):
    server = forked(py)
    if server is None:
        pytest.skip("%s cannot fork after importing torch here" % py)
    with pytest.raises(subprocess.TimeoutExpired):
        server.run(code="import time\nprint('started', flush=True)\ntime.sleep(60)", timeout=1)
    assert server.run(code="print('next')")[1] == "next\n"  # the server goes on serving
