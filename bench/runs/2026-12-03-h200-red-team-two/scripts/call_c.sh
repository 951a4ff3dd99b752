#!/usr/bin/env bash
# On the H200, the same binary as call B: check_contract, calibrate, 10 more A/A verifies of the
# one-shape target and 4 of the 4-workload target at the defaults.
set -u
ROOT=$PWD
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
LOG_DIR=$OUT timeout 300 bash scripts/test-gpu check_contract 2>&1 | tail -4
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
"$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null; echo "calibrate rc=$?"
python3 -c "import json; r=json.load(open('$OUT/calibrate.json')); print({k: r.get(k) for k in ('copy_gbps','bandwidth_gbps','process_spread') if k in r})" 2>&1 | head -3
v AA1 $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 10
v AA4 $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py 4
} 2>&1 | tee $OUT/c.log | grep -v "^  "
