#!/usr/bin/env bash
# Call C: the rerun of a run voided by the parent's clock alone, with the 2-pair stop. calibrate,
# the 4-workload +1% and one-shape 1% verifies 3 times each, 8 A/A verifies of the 4-workload
# gelu, the rows of tests/gpu/check_cheats.py's second half that call B's 240 s did not reach and
# the CUDA extension candidate alone, then the parent clock's slack and smallest fake caught on
# the one-shape gelu (bench/probes/parent_clock_probe.py).
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
HK=$ROOT/build/hotkernel
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
s=$(date +%s.%N); "$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null; echo "calibrate rc=$? in $(python3 -c "import time;print(round(time.time()-$s,1))") s"
grep -o '"process_spread_pct": [0-9.e-]*' $OUT/calibrate.json
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 3; cp $W/V4_3.json $OUT/verify4.json
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3; cp $W/V1_3.json $OUT/verify1.json
echo "--- A/A x 8: gelu4 baseline against its blank candidate"
for i in $(seq 1 8); do
  s=$(date +%s.%N)
  "$HK" verify $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py --json > $W/aa4_$i.json 2>/dev/null
  python3 - $W/aa4_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") $i <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("AA4", sys.argv[3], sys.argv[2], "s", r["verdict"], "n", r.get("n"), "speedup", round(r.get("speedup") or 0, 5),
      [(w["name"], w["verdict"]) for w in r.get("workloads", [])],
      "warnings", [w.get("id") if isinstance(w, dict) else str(w)[:60] for w in r.get("warnings", [])])
PY
done
cd $ROOT
echo "--- check_cheats: call B's unreached rows, and cuda_extension alone"
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
s=$(date +%s)
timeout 150 python3 tests/gpu/check_cheats.py --jobs 6 --only autogroup_nice,copy_repeats,escape_helper,rewrite_baseline_between_runs,sched_idle_fork_server,sysv_semaphore_counter > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | grep -v "skipped: works on the CPU" | tail -14
s=$(date +%s)
timeout 100 python3 tests/gpu/check_cheats.py --jobs 1 --only cuda_extension > $OUT/check_cheats_ext.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats_ext.log | grep -v "skipped: works on the CPU" | tail -6
echo "--- parent_clock_probe"
timeout 120 python3 bench/probes/parent_clock_probe.py --bin $HK --python python3 --device cuda --shape 16384x8192 --dtype bf16 --n 6 --fractions 0.05,0.1,0.2,0.3 > $OUT/parent-clock.log 2>&1; echo "rc=$?"
tail -3 $OUT/parent-clock.log | cut -c1-1500
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
