#!/usr/bin/env bash
# Call G (little device time left): the honest set of tests/gpu/check_cheats.py on main's binary,
# then the one-shape 1% verify twice.
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
HK=$ROOT/build/hotkernel
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s)
timeout 140 python3 tests/gpu/check_cheats.py --jobs 7 --only blank,compiled,copy_then_kernel,cuda_extension,fused,jittered,triton_kernel > $OUT/honest.log 2>&1; echo "honest rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/honest.log | tail -20
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 | grep -v 'new4\|gelu4' > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2; cp $W/V1_1.json $OUT/verify1.json
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
