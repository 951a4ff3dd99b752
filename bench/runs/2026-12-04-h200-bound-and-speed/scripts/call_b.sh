#!/usr/bin/env bash
# On the H200, with CUPTI's activity buffers made once and reused, and the quiet's signal calls on
# plain numbers: a window's steps again (window_probe), the parent clock's slack and the fakes it
# catches at the default sample (~0.7 ms) and at ~10 ms samples (parent_clock_probe), the
# one-shape 1% verify 3 times and the 4-workload +1% verify twice, check_cheats part 1 of 2.
set -u
ROOT=$PWD
D=$ROOT/bench/runs/2026-12-04-h200-bound-and-speed/scripts
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
echo "--- window probe 16384x8192"; timeout 60 python3 bench/probes/window_probe.py --shape 16384x8192 --runs 1 2>&1 | tail -2
echo "--- parent clock probe, default sample"
timeout 120 python3 bench/probes/parent_clock_probe.py --bin $HK --python python3 --device cuda --shape 16384x8192 --dtype bf16 --n 8 --fractions 0.05,0.1,0.2 > $OUT/b-probe-default.log 2>&1; echo "rc=$?"; tail -1 $OUT/b-probe-default.log
echo "--- parent clock probe, ~10 ms samples (4096x8192, 200 calls)"
timeout 150 python3 bench/probes/parent_clock_probe.py --bin $HK --python python3 --device cuda --shape 4096x8192 --dtype bf16 --iters 200 --n 6 --fractions 0.05,0.1 > $OUT/b-probe-10ms.log 2>&1; echo "rc=$?"; tail -1 $OUT/b-probe-10ms.log
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
python3 $D/slack.py $W/V1_*.json $W/V4_*.json
cp $W/V1_1.json $OUT/b-verify1.json; cp $W/V4_1.json $OUT/b-verify4.json
cd $ROOT
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
timeout 230 python3 tests/gpu/check_cheats.py --jobs 8 --part 1/2 > $OUT/b-check_cheats.log 2>&1; echo "check_cheats rc=$?"; tail -3 $OUT/b-check_cheats.log
} 2>&1 | tee $OUT/b.log | grep -v "^  median\|^  workloads"
