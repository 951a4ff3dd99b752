#!/usr/bin/env bash
# On the H200, the trust-next harness (each sample's objects collected before its fresh values,
# setsid/setpgid no-ops, /proc read as bytes, tensors' own attributes refused), with the graph
# path's samples split in phases_s: the one-shape 1% verify and the 4-workload +1% verify twice
# each, where a run's time goes (run_phases_probe), CUDA's start, check_loop, check_cheats 2/2.
set -u
ROOT=$PWD
{
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
git log --oneline -1 2>/dev/null
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2
cp $W/V1_1.json $OUT/a-verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
cp $W/V4_1.json $OUT/a-verify4.json
cd $ROOT
for i in 1 2 3; do python3 -c "import time; t=time.perf_counter(); import torch; t1=time.perf_counter(); torch.zeros(1, device='cuda'); torch.cuda.synchronize(); print('import torch %.3f s, CUDA start %.3f s' % (t1-t, time.perf_counter()-t1))"; done
echo "--- run phases probe"
for sh in 16384x8192 2048x8192; do timeout 60 python3 bench/probes/run_phases_probe.py --shape $sh --top 30 > $OUT/a-phases-$sh.log 2>&1; echo "probe $sh rc=$?"; head -3 $OUT/a-phases-$sh.log; done
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
LOG_DIR=/tmp timeout 90 bash scripts/test-gpu check_loop 2>&1 | tail -4; cp /tmp/check_loop.log $OUT/a-check_loop.log
timeout 230 python3 tests/gpu/check_cheats.py --jobs 8 --part 2/2 > $OUT/a-check_cheats.log 2>&1; echo "check_cheats rc=$?"; tail -4 $OUT/a-check_cheats.log
} 2>&1 | tee $OUT/a.log | grep -v "^  "
