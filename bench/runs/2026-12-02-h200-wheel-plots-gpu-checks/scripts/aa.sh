#!/usr/bin/env bash
# Repeated verifies of the bundled example with the wheel's binary: every verdict, the largest
# share of its allowance any run's parent-clock excess used, and why any run was not ok.
set -u
W=$(ls dist/hotkernel-*.whl)
python3 -m venv --system-site-packages /tmp/hkv >/dev/null 2>&1 && /tmp/hkv/bin/pip install -q --no-index --disable-pip-version-check "$W"
HK=/tmp/hkv/bin/hotkernel; export HOTKERNEL_PYTHON=python3
mkdir -p /tmp/aa && cp -r examples/rmsnorm /tmp/aa/ex && cd /tmp/aa
for i in $(seq 1 28); do
  timeout 40 "$HK" verify ex/rmsnorm_baseline.py ex/rmsnorm_candidate.py --json-out /tmp/aa/v$i.json > /dev/null 2>&1
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
share = max((x["line"]["parent_clock"]["excess_ms"] / x["line"]["parent_clock"]["allowed_ms"]
             for x in r.get("runs", []) if (x.get("line") or {}).get("parent_clock", {}).get("allowed_ms")), default=None)
print("VERDICT", sys.argv[2], r["verdict"], "max_excess_share", None if share is None else round(share, 3), "pairs", r.get("n"))
if r["verdict"] != "faster":
    print("REASONS", json.dumps(r.get("reasons"))[:1500])
    for x in r.get("runs", []):
        if x.get("status") not in (None, "ok"):
            print("RUN", x.get("role"), x.get("index"), x.get("status"), str(x.get("reason"))[:800])
            print("PC", json.dumps((x.get("line") or {}).get("parent_clock")))
            print("FLAGS", json.dumps((x.get("line") or {}).get("flags"))[:600])
' /tmp/aa/v$i.json $i | tee -a $OUT/aa.log
done
