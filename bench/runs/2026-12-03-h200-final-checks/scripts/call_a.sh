#!/usr/bin/env bash
# On the H200, main as built (portable): the one-shape 1% verify 3 times, the 4-workload +1%
# verify twice, 10 A/A verifies, the parent clock's slack and the fakes it catches, check_loop and
# check_cheats --jobs 8.
set -u
ROOT=$PWD
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
"$HK" --version; git log --oneline -1 2>/dev/null
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
cp $W/V1_1.json $OUT/a-verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
cp $W/V4_1.json $OUT/a-verify4.json
v AA1 $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 10
cd $ROOT
echo "--- parent clock probe"
timeout 100 python3 bench/probes/parent_clock_probe.py --bin $HK --python python3 --device cuda --shape 16384x8192 --dtype bf16 --n 8 --fractions 0.05,0.1,0.2,0.3 > $OUT/a-probe.log 2>&1; echo "probe rc=$?"; tail -3 $OUT/a-probe.log
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
LOG_DIR=$OUT timeout 90 bash scripts/test-gpu check_loop 2>&1 | tail -4
timeout 250 python3 tests/gpu/check_cheats.py --jobs 8 --part 1/2 > $OUT/a-check_cheats.log 2>&1; echo "check_cheats rc=$?"; tail -4 $OUT/a-check_cheats.log
} 2>&1 | tee $OUT/a.log | grep -v "^  "
