#!/usr/bin/env bash
# On the H200, main before the speed changes: where a run's time goes (run_phases_probe at the
# smallest and the largest of the four workloads, profiled), the 4-workload +1% verify once, and
# check_contract (the honest set, the contract's timers).
set -u
ROOT=$PWD
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
for s in 2048x8192 16384x8192; do
  echo "--- run_phases_probe $s"; timeout 90 python3 bench/probes/run_phases_probe.py --shape $s --runs 3 --top 30 > $OUT/b-phases-$s.log 2>&1; echo "rc=$?"; grep '^{' $OUT/b-phases-$s.log | tail -1
done
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1
cp $W/V4_1.json $OUT/b-verify4.json
cd $ROOT
echo "--- check_contract"
LOG_DIR=/tmp timeout 260 bash scripts/test-gpu check_contract 2>&1 | tail -3; cp /tmp/check_contract.log $OUT/b-check_contract.log
} 2>&1 | tee $OUT/b.log | grep -v "^  median\|^  workloads"
