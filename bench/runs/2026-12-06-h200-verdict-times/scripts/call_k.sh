#!/usr/bin/env bash
# Call K: the floor from the upper bound of calibrate's spread: calibrate (JSON and text), then
# a 1% verify and an A/A verify of the one-shape gelu, each result's spread fields printed.
set -u
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
HK=$PWD/build/hotkernel
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm --format=csv,noheader
"$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null; echo "calibrate rc=$?"
python3 -c "import json;d=json.load(open('$OUT/calibrate.json'));print({k:d.get(k) for k in ('process_spread_pct','process_spread_bound_pct')})"
python3 - $OUT/calibrate.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(d["details"]["process_spread"])
PY
sed -n '/^slower()/,/^}/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh > /tmp/fns.sh
source /tmp/fns.sh
W=/tmp/rk; rm -rf $W; mkdir -p $W
"$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir $W/g1 --name gelu1 --json > /dev/null 2>&1; echo "new1 rc=$?"
slower $W/g1/gelu1_candidate.py $W/g1/gelu1_slow_candidate.py
for c in gelu1_slow_candidate gelu1_candidate; do
  s=$(date +%s.%N)
  timeout 60 "$HK" verify $W/g1/gelu1_baseline.py $W/g1/$c.py --json > $OUT/$c.json 2>/dev/null
  python3 - $OUT/$c.json $(python3 -c "import time;print(round(time.time()-$s,2))") <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], "s", r["verdict"], "n", r["n"], "speedup", r.get("speedup"), "spread", r.get("process_spread_pct"),
      "bound", r.get("process_spread_bound_pct"), "warnings", [w.get("id") for w in r.get("warnings", [])])
PY
done
} 2>&1 | tee $OUT/call.log
