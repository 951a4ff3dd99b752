#!/usr/bin/env bash
# On the H200, with each workload's early stop kept (a workload settled stays settled): 16 A/A
# verifies of the 4-workload target at the defaults and the +1% verify twice, logged.
set -u
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
v AA4 $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py 16
for f in $W/AA4_*.json; do python3 -c "import json,sys; r=json.load(open('$f')); print('$f'.split('/')[-1], r['verdict'], r['n'], [(w['name'], w['verdict'], w.get('settled_after_pairs')) for w in r['workloads']])"; done
} 2>&1 | tee $OUT/d.log | grep -v "^  "
