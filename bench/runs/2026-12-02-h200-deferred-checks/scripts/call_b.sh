#!/usr/bin/env bash
# On the H200, the same binary as call A: the 4-workload +1% verify and the one-shape 1% verify 3
# times each (logged this time), then the GPU checks (check_cheats, check_loop).
set -u
ROOT=$PWD
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 3
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
cd $ROOT
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
timeout 400 python3 tests/gpu/check_cheats.py --jobs 8 > $OUT/check_cheats.log 2>&1; echo "check_cheats rc=$?"; tail -3 $OUT/check_cheats.log
LOG_DIR=$OUT timeout 150 bash scripts/test-gpu check_loop 2>&1 | tail -4
} 2>&1 | tee $OUT/b.log | grep -v "^  "
