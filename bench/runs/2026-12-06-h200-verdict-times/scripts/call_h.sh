#!/usr/bin/env bash
# Call H: the honest set of tests/gpu/check_cheats.py, calibrate, the one-shape 1% and the
# 4-workload +1% verifies 3 times each, then A/A verifies of the 4-workload gelu in the time left.
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
HK=$ROOT/build/hotkernel
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
T0=$(date +%s)
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s)
timeout 150 python3 tests/gpu/check_cheats.py --jobs 7 --only blank,compiled,copy_then_kernel,cuda_extension,fused,jittered,triton_kernel > $OUT/honest.log 2>&1; echo "honest rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/honest.log | tail -12
s=$(date +%s.%N); "$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null; echo "calibrate rc=$? in $(python3 -c "import time;print(round(time.time()-$s,1))") s"
grep -o '"process_spread_pct": [0-9.e-]*' $OUT/calibrate.json
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py ${RUNS:-3}; cp $W/V1_1.json $OUT/verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py ${RUNS:-3}; cp $W/V4_1.json $OUT/verify4.json
i=0
while [ $(( $(date +%s) - T0 )) -lt ${AA_UNTIL:-500} ]; do
  i=$((i+1)); s=$(date +%s.%N)
  timeout 40 "$HK" verify $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py --json > $W/aa4_$i.json 2>/dev/null
  python3 - $W/aa4_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") $i <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("AA4", sys.argv[3], sys.argv[2], "s", r["verdict"], "n", r.get("n"), [(w["name"], w["verdict"]) for w in r.get("workloads", [])],
      "warnings", [w.get("id") if isinstance(w, dict) else str(w)[:60] for w in r.get("warnings", [])])
PY
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
