#!/usr/bin/env bash
# On the H200, the final binary: torch_profile and profile (ncu) of the 4-workload target at one
# workload picked by `workload`, the 4-workload +1% verify 4 times and 16 A/A verifies of the
# 4-workload target at the defaults (how often an A/A pair of four workloads is decisive), logged.
set -u
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
"$HK" torch-profile $W/g4/gelu4_candidate.py --workload M=4096 --json > $OUT/torch_profile_M4096.json; echo "torch-profile rc=$?"
python3 -c "import json; r=json.load(open('$OUT/torch_profile_M4096.json')); print('torch_profile', r['profile_mode']['workload'], r['profile_mode']['shapes'], [(k['name'][:40], k['calls']) for k in r['kernels'][:2]])"
"$HK" profile --tool ncu --workload M=2048 --launch-count 1 --json "python $W/g4/gelu4_candidate.py" > $OUT/profile_ncu_M2048.json; echo "profile rc=$?"
python3 -c "import json; r=json.load(open('$OUT/profile_ncu_M2048.json')); print('profile', r['target'], [(k.get('name','')[:40]) for k in r['kernels'][:2]])"
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 4
v AA4 $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py 16
} 2>&1 | tee $OUT/c.log | grep -v "^  "
