#!/usr/bin/env bash
# On the H200: a plain verify of the bundled example and a pool verify of the same pair started
# 1 s after it: the plain verify holds the card's lease, so the pool's job waits for it.
set -u
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
mkdir -p /tmp/ls && cp -r examples/rmsnorm /tmp/ls/ex && cd /tmp/ls
"$HK" verify ex/rmsnorm_baseline.py ex/rmsnorm_candidate.py --json > plain.json 2> plain.err &
P=$!
sleep 1.0
cat /tmp/hotkernel-gpu-leases/*.lock 2>/dev/null | head -2
s=$(date +%s.%N)
"$HK" verify ex/rmsnorm_baseline.py ex/rmsnorm_candidate.py --gpus all --json > pool.json 2> pool.err
echo "pool done after $(python3 -c "import time;print(round(time.time()-$s,1))") s"
wait $P; echo "plain rc=$?"
python3 - <<'PY'
import json
p = json.load(open("plain.json")); q = json.load(open("pool.json"))
print("PLAIN", p["verdict"], p.get("speedup"), p["measurement"]["wall_s"])
r = q["results"][0]
print("POOL", r.get("verdict"), r.get("speedup"), r.get("waited_s"), [w["id"] for w in q.get("warnings", [])])
PY
