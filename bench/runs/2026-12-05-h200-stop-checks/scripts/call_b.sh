#!/usr/bin/env bash
# On the H200, call B: the per-sample checks without audit events (identities by object.__hash__,
# libtorch's kernel pointers read through views made once, the hook letting go of events none of
# its rules take first) and the operator recorder's round of two sets. In order: the sample-checks
# probe (each workload's preparation timed and profiled, each check part's audit events), the
# 4-workload +1% verify and the one-shape 1% verify 3 times each with build/hotkernel and with
# build/hotkernel.prev (b60309d, call A's binary) on this card, then the rows of
# tests/gpu/check_cheats.py that call A's 300 s did not reach (the honest set among them).
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
echo "--- sample_checks_probe"
timeout 90 python3 bench/probes/sample_checks_probe.py > $OUT/sample-checks.log 2>&1; echo "rc=$?"
grep "made in\|audit events\|  [a-z].* ms$\|^M=" $OUT/sample-checks.log
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
HK=$ROOT/build/hotkernel
source /tmp/fns.sh
for round in 1 2 3; do
  HK=$ROOT/build/hotkernel.prev; v V4prev $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1; cp $W/V4prev_1.json $OUT/verify4-prev-$round.json
  HK=$ROOT/build/hotkernel; v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1; cp $W/V4_1.json $OUT/verify4-$round.json
  HK=$ROOT/build/hotkernel.prev; v V1prev $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 1
  HK=$ROOT/build/hotkernel; v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 1; cp $W/V1_1.json $OUT/verify1-$round.json
done
cd $ROOT
echo "--- check_cheats, the rows call A did not reach"
export HOTKERNEL_BIN=$ROOT/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3
s=$(date +%s)
timeout 270 python3 tests/gpu/check_cheats.py --jobs 10 --only autogroup_nice,copy_repeats,escape_helper,planted_pyc,rewrite_baseline_between_runs,sched_idle_fork_server,sysv_semaphore_counter,sysv_shared_memory_left,torch_check_fn,unwritten_output,zero_input,blank,compiled,cuda_extension,fused,jittered,triton_kernel > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | tail -24
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
