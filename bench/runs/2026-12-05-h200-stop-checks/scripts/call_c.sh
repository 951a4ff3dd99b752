#!/usr/bin/env bash
# On the H200, call C: call B's binary (the per-sample checks without audit events) with the parent
# clock's reason naming a shared device. The 4-workload +1% verify and the one-shape 1% verify 3
# times each with build/hotkernel, the 4-workload one once with build/hotkernel.prev (b60309d,
# call A's binary) on this card, then the honest set of tests/gpu/check_cheats.py (the rows call A
# did not reach; an honest row the parent's clock voids beside other verifies is verified again
# alone).
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
HK=$ROOT/build/hotkernel
source /tmp/fns.sh
for round in 1 2 3; do
  v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1; cp $W/V4_1.json $OUT/verify4-$round.json
  v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 1; cp $W/V1_1.json $OUT/verify1-$round.json
done
HK=$ROOT/build/hotkernel.prev; v V4prev $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
cd $ROOT
echo "--- check_cheats, the honest set"
export HOTKERNEL_BIN=$ROOT/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3
s=$(date +%s)
timeout 200 python3 tests/gpu/check_cheats.py --jobs 7 --only blank,compiled,cuda_extension,fused,jittered,triton_kernel,copy_then_kernel > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | tail -16
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
