#!/usr/bin/env bash
# On the H200, the final binary: the GPU cheats (check_cheats --jobs 8), check_loop, the one-shape
# 1% verify 3 times, the 4-workload +1% verify twice and 10 A/A verifies of the one-shape target.
set -u
ROOT=$PWD
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
"$HK" --version
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
cp $W/V1_1.json $OUT/verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
v AA1 $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 10
cd $ROOT
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
LOG_DIR=$OUT timeout 90 bash scripts/test-gpu check_loop 2>&1 | tail -4
timeout 330 python3 tests/gpu/check_cheats.py --jobs 8 > $OUT/check_cheats.log 2>&1; echo "check_cheats rc=$?"; tail -4 $OUT/check_cheats.log
} 2>&1 | tee $OUT/a.log | grep -v "^  "
