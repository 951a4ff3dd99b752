#!/usr/bin/env bash
# On the H200, with the gap probe's launch cost allowed once a sample (5 gap samples, their
# median): the one-shape 1% verify and the 4-workload +1% verify twice each with their
# parent-clock slack, the parent clock probe, check_contract (the honest set), check_cheats 2/2.
set -u
ROOT=$PWD
D=$ROOT/bench/runs/2026-12-04-h200-bound-and-speed/scripts
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
python3 $D/slack.py $W/V1_*.json $W/V4_*.json
cp $W/V1_1.json $OUT/c-verify1.json; cp $W/V4_1.json $OUT/c-verify4.json
cd $ROOT
echo "--- parent clock probe, default sample"
timeout 90 python3 bench/probes/parent_clock_probe.py --bin $HK --python python3 --device cuda --shape 16384x8192 --dtype bf16 --n 6 --fractions 0.1,0.3,0.5 > $OUT/c-probe-default.log 2>&1; echo "rc=$?"; tail -1 $OUT/c-probe-default.log
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
LOG_DIR=/tmp timeout 200 bash scripts/test-gpu check_contract 2>&1 | tail -3; cp /tmp/check_contract.log $OUT/c-check_contract.log
timeout 190 python3 tests/gpu/check_cheats.py --jobs 8 --part 2/2 > $OUT/c-check_cheats.log 2>&1; echo "check_cheats rc=$?"; tail -3 $OUT/c-check_cheats.log
} 2>&1 | tee $OUT/c.log | grep -v "^  median\|^  workloads"
