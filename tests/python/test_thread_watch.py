"""The thread watch (hotkernel_defences.ThreadWatch): what its wrappers on the thread- and
process-start functions let the candidate reach through their closures, and what it notices."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = r"""
import json, os, sys, threading, _thread
sys.path.insert(0, sys.argv[1])
import hotkernel_defences as D
w = D.ThreadWatch()
w.take_threads_before()
pinned = w.fingerprint()
out = {}
# Nothing a wrapper's closure holds, however deep, is the watch: its threads taken before the
# import, its originals and wrappers are out of the candidate's reach without a frame.
def reachable(f, seen):
    for c in getattr(f, "__closure__", None) or ():
        v = c.cell_contents
        if id(v) in seen:
            continue
        seen.add(id(v))
        yield v
        yield from reachable(v, seen)
out["watch_reachable"] = any(v is w or isinstance(v, D.ThreadWatch)
                             for name in ("_start_new_thread", "_start_joinable_thread")
                             for v in reachable(getattr(threading, name, None), set()))
before = w.starts()
t = threading.Thread(target=lambda: None); t.start(); t.join()
_thread.start_new_thread(lambda: None, ())
out["counted"] = w.starts() - before
out["same"] = w.fingerprint() == pinned
# A cell of a wrapper's closure given other contents (its counter swapped for a fresh one):
f = threading._start_new_thread
cell = [c for c in f.__closure__ if type(c.cell_contents).__name__ == "count"][0]
real = cell.cell_contents
import itertools
cell.cell_contents = itertools.count()
out["cell_swapped_seen"] = w.fingerprint() != pinned
cell.cell_contents = real
out["restored_same"] = w.fingerprint() == pinned
# Its code replaced:
code = f.__code__
f.__code__ = code.replace(co_name="start2")
out["code_swapped_seen"] = w.fingerprint() != pinned
f.__code__ = code
# The wrapper taken off the module: intact() says so.
threading._start_new_thread = w.originals[(threading, "_start_new_thread")]
out["unwrapped_intact"] = w.intact()
print(json.dumps(out))
"""


def test_the_watch_is_out_of_its_wrappers_reach_and_notices_what_they_hold_change():
    r = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "python")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["watch_reachable"] is False, out
    assert out["counted"] == 2 and out["same"] is True, out
    assert out["cell_swapped_seen"] is True and out["restored_same"] is True, out
    assert out["code_swapped_seen"] is True, out
    assert out["unwrapped_intact"] is False, out
