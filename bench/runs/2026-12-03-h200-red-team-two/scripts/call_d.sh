#!/usr/bin/env bash
# On the H200, the binary that syncs after the persisting-L2 reset (outside the parent's window):
# the one-shape 1% verify 3 times, 8 A/A verifies of the one-shape target, and the check_cheats
# rows call B's time limit cut.
set -u
ROOT=$PWD
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
cp $W/V1_1.json $OUT/verify1.json
v AA1 $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 8
cd $ROOT
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
timeout 130 python3 tests/gpu/check_cheats.py --jobs 8 --only copy_repeats,escape_helper,nan_reference,planted_pyc,rewrite_baseline_between_runs,compiled,cuda_extension,jittered > $OUT/check_cheats.log 2>&1; echo "check_cheats rc=$?"; grep "|" $OUT/check_cheats.log
} 2>&1 | tee $OUT/d.log | grep -v "^  "
