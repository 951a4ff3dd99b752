#!/usr/bin/env bash
# On the H200, one call (device time was short): main with the changes that had not run on a GPU
# (the seccomp filter's key store and prlimit64 rules, the thread watch's counter and fingerprint,
# operators recorded under inference_mode, harness containers compared by content, the
# per-sample profile-hook look, the kept server's prompt vetting, no library's word for raw
# memory or heap walks, CPython's test modules an alarm, a run's syncfs of what earlier runs
# wrote, int64 word sums as the harness's digests). In order: the digest probe (float64 sums
# against int64 word sums of a sample's held copies), the 4-workload +1% verify and the
# one-shape 1% verify with build/hotkernel, the 4-workload verify with build/hotkernel.base
# (float64 digests, 51f2165), then tests/gpu/check_cheats.py, the whole table.
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
python3 -VV; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
echo "--- digest_probe"
timeout 40 python3 bench/probes/digest_probe.py --m 2048 --k 8192 --tensors 64
timeout 40 python3 bench/probes/digest_probe.py --m 16384 --k 8192 --tensors 8
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
HK=$ROOT/build/hotkernel
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 1
cp $W/V1_1.json $OUT/verify1.json; cp $W/V4_1.json $OUT/verify4.json
HK=$ROOT/build/hotkernel.base
v V4base $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1
HK=$ROOT/build/hotkernel
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1
cp $W/V4_1.json $OUT/verify4-second.json; cp $W/V4base_1.json $OUT/verify4-base.json
cd $ROOT
echo "--- sample_checks_probe"
timeout 90 python3 bench/probes/sample_checks_probe.py > $OUT/sample-checks.log 2>&1; echo "rc=$?"; tail -20 $OUT/sample-checks.log
echo "--- check_cheats, the whole table"
export HOTKERNEL_BIN=$ROOT/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3
s=$(date +%s)
timeout 300 python3 tests/gpu/check_cheats.py --jobs 10 > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$" $OUT/check_cheats.log | tail -20
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
