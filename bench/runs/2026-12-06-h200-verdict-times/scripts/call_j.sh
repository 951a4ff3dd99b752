#!/usr/bin/env bash
# Call J: the parent's clock on the one-shape gelu (bench/probes/parent_clock_probe.py: honest
# runs' use of their allowance, and whether fakes of 5-30% are caught), then A/A verifies of the
# one-shape gelu at the defaults in the time left.
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
HK=$ROOT/build/hotkernel
T0=$(date +%s)
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "--- parent_clock_probe"
timeout 120 python3 bench/probes/parent_clock_probe.py --bin $HK --python python3 --device cuda --shape 16384x8192 --dtype bf16 --n 6 --fractions 0.05,0.1,0.2,0.3 > $OUT/parent-clock.log 2>&1; echo "rc=$?"
tail -3 $OUT/parent-clock.log
W=/tmp/rj; rm -rf $W; mkdir -p $W
"$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir $W/g1 --name gelu1 --json > /dev/null 2>&1; echo "new1 rc=$?"
i=0
while [ $(( $(date +%s) - T0 )) -lt ${AA_UNTIL:-420} ]; do
  i=$((i+1)); s=$(date +%s.%N)
  timeout 40 "$HK" verify $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py --json > $W/aa_$i.json 2>/dev/null
  python3 - $W/aa_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") $i <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("AA1", sys.argv[3], sys.argv[2], "s", r["verdict"], "n", r.get("n"), "speedup", r.get("speedup"),
      "warnings", [w.get("id") if isinstance(w, dict) else str(w)[:60] for w in r.get("warnings", [])])
PY
done
python3 - $W <<'PY'
import glob, json, sys, collections
v = collections.Counter(json.load(open(f))["verdict"] for f in glob.glob(sys.argv[1] + "/aa_*.json"))
print("A/A verdicts", dict(v))
PY
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/call.log
