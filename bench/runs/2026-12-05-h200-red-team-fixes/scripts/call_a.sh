#!/usr/bin/env bash
# On the H200, main with the CPU-tested red-team fixes (the audit hook's pinned copies compared at
# the result, the measurement's changing attributes fingerprinted through their containers, the
# timers' failures as tuples, /proc/<pid>/mem an exposing finding) and a checked replay's held
# outputs screened with one read back: check_cheats in both parts (the cheats, and the honest set
# that must stay clean under the new comparisons), then the one-shape 1% verify and the
# 4-workload +1% verify 3 times each.
set -u
ROOT=$PWD
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
for p in 1 2; do
  echo "--- check_cheats part $p/2"
  timeout 240 python3 tests/gpu/check_cheats.py --jobs 8 --part $p/2 > $OUT/a-check_cheats-$p.log 2>&1; echo "rc=$?"; grep -v "| yes$" $OUT/a-check_cheats-$p.log | tail -14
done
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 3
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
cp $W/V1_1.json $OUT/a-verify1.json; cp $W/V4_1.json $OUT/a-verify4.json
} 2>&1 | tee $OUT/a.log | grep -v "^  median\|^  workloads"
