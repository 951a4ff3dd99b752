#!/usr/bin/env bash
# On the H200, with the fork server's GPU holder and the harness's code compared by marshal's
# bytes: the one-shape 1% verify 3 times, the 4-workload +1% verify 3 times, 12 A/A verifies
# (the baseline against its own unchanged candidate), each run's phases; check_cheats part 1/2.
set -u
ROOT=$PWD
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 3
v AA $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 12
python3 -c "import json;print('fork_server', json.load(open('$W/V4_1.json'))['fork_server'])"
cp $W/V1_1.json $OUT/c-verify1.json; cp $W/V4_1.json $OUT/c-verify4.json; cp $W/AA_1.json $OUT/c-aa1.json
cd $ROOT
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
timeout 250 python3 tests/gpu/check_cheats.py --jobs 8 --part 1/2 > $OUT/c-check_cheats-1.log 2>&1; echo "check_cheats rc=$?"; tail -3 $OUT/c-check_cheats-1.log
} 2>&1 | tee $OUT/c.log | grep -v "^  median\|^  workloads"
