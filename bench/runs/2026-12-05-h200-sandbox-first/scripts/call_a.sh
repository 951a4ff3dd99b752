#!/usr/bin/env bash
# On the H200, branch early-sandbox (main + the kernel sandbox applied before CUDA's threads
# exist; a sample's state check scoped to its workload): what the checks after each sample cost (bench/probes/sample_checks_probe.py), the one-shape 1% verify twice (its `sandbox` field), then check_cheats in both parts
# (the cheats and the honest set: torch.compile, Triton, CUDA extension; `signal_handler` on them).
set -u
ROOT=$PWD
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
echo "--- sample checks probe"; timeout 120 python3 bench/probes/sample_checks_probe.py > $OUT/a-sample-checks.log 2>&1; echo "rc=$?"; grep -v "^ \{0,8\}[0-9/]* \+[0-9.]* \+[0-9.]*" $OUT/a-sample-checks.log | tail -25
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 1
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1
python3 -c "import json;r=json.load(open('$W/V1_1.json'));print('sandbox', r.get('sandbox'));print('flags', r.get('flags'))"
cp $W/V1_1.json $OUT/a-verify1.json; cp $W/V4_1.json $OUT/a-verify4.json
cd $ROOT
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
for p in 1 2; do
  echo "--- check_cheats part $p/2"
  timeout 250 python3 tests/gpu/check_cheats.py --jobs 8 --part $p/2 > $OUT/a-check_cheats-$p.log 2>&1; echo "rc=$?"; grep -v "| yes$" $OUT/a-check_cheats-$p.log | tail -12
done
} 2>&1 | tee $OUT/a.log | grep -v "^  median\|^  workloads"
