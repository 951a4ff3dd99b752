#!/usr/bin/env bash
# On the H200, the same binary as call A: where a 4-workload run's time goes, harness step by
# harness step (bench/probes/sample_checks_probe.py), 40 A/A verifies at the defaults (gelu bf16
# 16384x8192, the baseline against its unchanged scaffolded candidate), then check_contract.
set -u
ROOT=$PWD
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
echo "--- sample_checks_probe"
timeout 90 python3 bench/probes/sample_checks_probe.py --top 45 > $OUT/b-sample-checks.log 2>&1; echo "rc=$?"
head -6 $OUT/b-sample-checks.log
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v AA $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 40
cp $W/AA_1.json $OUT/b-aa1.json
cd $ROOT
echo "--- check_contract"
LOG_DIR=/tmp timeout 230 bash scripts/test-gpu check_contract 2>&1 | tail -3; cp /tmp/check_contract.log $OUT/b-check_contract.log
} 2>&1 | tee $OUT/b.log | grep -v "^  median\|^  workloads"
