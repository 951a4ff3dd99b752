#!/usr/bin/env bash
set -u
bash .carry/wheel_h200.sh > /tmp/wh.log 2>&1
grep -E "^TIME|^VERDICT|^RUN|^PC|verdict:|Fontconfig" /tmp/wh.log
cd /tmp/w
for i in 1 2 3; do
  /tmp/hkv/bin/hotkernel verify ex/rmsnorm_baseline.py ex/rmsnorm_candidate.py --json-out /tmp/w/d$i.json > /dev/null 2>&1
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("VERDICT", r["verdict"], "REASONS", json.dumps(r.get("reasons"))[:800])
for x in r.get("runs", []):
    if x.get("status") not in (None, "ok"): print("RUN", x.get("role"), x.get("index"), x.get("status"), str(x.get("reason"))[:600])
' /tmp/w/d$i.json
done
