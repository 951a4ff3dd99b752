#!/usr/bin/env bash
# On the H200, the same binary as call A: the one-shape 1% verify 3 times, the 4-workload +1%
# verify 3 times, 10 A/A verifies (the baseline against its unchanged candidate), each run's
# phases; then check_contract (the contract's timers against torch.profiler, the example).
set -u
ROOT=$PWD
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 3
v AA $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 10
python3 -c "import json;print('fork_server', json.load(open('$W/V4_1.json'))['fork_server'])"
cp $W/V1_1.json $OUT/b-verify1.json; cp $W/V4_1.json $OUT/b-verify4.json; cp $W/AA_1.json $OUT/b-aa1.json
cd $ROOT
echo "--- check_contract"
LOG_DIR=/tmp timeout 260 bash scripts/test-gpu check_contract 2>&1 | tail -3; cp /tmp/check_contract.log $OUT/b-check_contract.log
} 2>&1 | tee $OUT/b.log | grep -v "^  median\|^  workloads"
