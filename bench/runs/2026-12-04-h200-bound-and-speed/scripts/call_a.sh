#!/usr/bin/env bash
# On the H200: what a parent's-clock window holds, empty and timed (bench/probes/window_probe.py,
# with the persisting-L2 reset's effect on the next window), then the one-shape 1% verify and
# the 4-workload +1% verify twice each, with each verify's parent-clock slack.
set -u
ROOT=$PWD
D=$ROOT/bench/runs/2026-12-04-h200-bound-and-speed/scripts
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/rc; rm -rf $W; mkdir -p $W
for sh in 16384x8192 4096x8192; do
  echo "--- window probe $sh"; timeout 90 python3 bench/probes/window_probe.py --shape $sh --runs 2 2>&1 | tail -4
done
cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
python3 $D/slack.py $W/V1_*.json $W/V4_*.json
cp $W/V1_1.json $OUT/a-verify1.json; cp $W/V4_1.json $OUT/a-verify4.json
} 2>&1 | tee $OUT/a.log | grep -v "^  median\|^  workloads"
