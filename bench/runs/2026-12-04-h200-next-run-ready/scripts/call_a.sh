#!/usr/bin/env bash
# On the H200, main as it was (the CPU-tested red-team fixes): check_cheats in both parts, and
# bench/probes/spare_probe.py (a run's CUDA context: its cost, and whether making one disturbs a
# process that is timing).
set -u
HK=$PWD/build/hotkernel
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
{
nvidia-smi --query-gpu=uuid,name --format=csv,noheader
echo "--- spare probe"; timeout 90 python3 bench/probes/spare_probe.py
for p in 1 2; do
  echo "--- check_cheats part $p/2"
  timeout 260 python3 tests/gpu/check_cheats.py --jobs 8 --part $p/2 > $OUT/a-check_cheats-$p.log 2>&1; echo "rc=$?"; tail -3 $OUT/a-check_cheats-$p.log
done
} 2>&1 | tee $OUT/a.log
