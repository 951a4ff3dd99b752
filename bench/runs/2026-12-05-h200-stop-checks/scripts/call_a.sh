#!/usr/bin/env bash
# On the H200: main with the CPU-tested changes that had not run on a GPU (the seccomp filter's
# key store and prlimit64 rules, the thread watch's counter and fingerprint, the operators
# recorded a second time under inference_mode, harness containers compared by content, the
# per-sample profile-hook look, the kept server's prompt vetting). The interpreter's version,
# the /proc grant probe, then tests/gpu/check_cheats.py in both parts (the honest set must stay
# clean; every cheat caught).
set -u
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
python3 -VV; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
echo "--- sandbox_proc_probe"
timeout 80 python3 bench/probes/sandbox_proc_probe.py > $OUT/a-proc-probe.log 2>&1; echo "rc=$?"; tail -30 $OUT/a-proc-probe.log
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
for p in 1 2; do
  echo "--- check_cheats part $p/2"
  s=$(date +%s)
  timeout 235 python3 tests/gpu/check_cheats.py --jobs 8 --part $p/2 > $OUT/a-check_cheats-$p.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"; grep -v "| yes$" $OUT/a-check_cheats-$p.log | tail -14
done
} 2>&1 | tee $OUT/a.log
