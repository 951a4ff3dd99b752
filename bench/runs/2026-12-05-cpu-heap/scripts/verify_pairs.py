import sys, os, json, tempfile
sys.path.insert(0, "tests/adversarial")
import harness
from pathlib import Path
py = "/usr/bin/python3"
out = Path(tempfile.mkdtemp(dir="/tmp/mytmp"))
home = Path(tempfile.mkdtemp(dir="/tmp/mytmp"))
ENV = {"HOTKERNEL_CACHE_BYTES": str(1 << 20), "HOME": str(home), "PYTHONUSERBASE": str(home/".local"), "XDG_CACHE_HOME": str(home/".cache")}
base = harness.scaffold(out, py, device="cpu", shape="128x128", iters=48, samples=3, warmup_s=0.1)
bodies = sys.argv[2:]
for it in range(int(sys.argv[1])):
    for b in bodies:
        cand = harness.make_candidate(out, Path(b), base)
        rc, res, err = harness.verify(py, base, cand, n=2, warmup=0, timeout_s=300, env=ENV)
        runs = " ".join("%s%.4f" % (r["role"][0], r["ms"]) for r in res["runs"])
        heap = res["runs"][0]["line"].get("heap")
        print(Path(b).stem, res.get("verdict"), round(res.get("speedup", 0), 3), runs, heap, flush=True)
