#!/usr/bin/env bash
# On the H200, the same binary as calls A and B: the 4-workload +1% verify 4 times and 20 A/A
# verifies of the 4-workload target at the defaults (how often an A/A pair of four workloads is
# decisive anywhere), logged.
set -u
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 4
v AA4 $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py 20
} 2>&1 | tee $OUT/c.log | grep -v "^  "
