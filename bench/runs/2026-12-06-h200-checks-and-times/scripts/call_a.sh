#!/usr/bin/env bash
# Call A: main's binary (0589e27 and later) on the card lent: the sample-checks probe, the
# 4-workload +1% verify and the one-shape 1% verify 3 times each, then the first half of
# tests/gpu/check_cheats.py (every second row of the table, the honest set's rows among them).
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
echo "--- sample_checks_probe"
timeout 90 python3 bench/probes/sample_checks_probe.py > $OUT/sample-checks.log 2>&1; echo "rc=$?"
grep "made in\|audit events\|  [a-z].* ms$\|^M=\|^prepare\|^cuInit" $OUT/sample-checks.log
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
HK=$ROOT/build/hotkernel
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 3; cp $W/V4_3.json $OUT/verify4.json
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3; cp $W/V1_3.json $OUT/verify1.json
cd $ROOT
echo "--- check_cheats --part ${PART:-1/2}"
export HOTKERNEL_BIN=$ROOT/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3
s=$(date +%s)
timeout ${CHEATS_S:-300} python3 tests/gpu/check_cheats.py --jobs 10 --part ${PART:-1/2} > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | tail -30
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
