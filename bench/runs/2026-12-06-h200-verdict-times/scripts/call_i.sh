#!/usr/bin/env bash
# Call I: a part of the cheat table of tests/gpu/check_cheats.py (PART, default 1/2) on main's binary.
set -u
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$PWD/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s)
timeout ${CHEATS_S:-400} python3 tests/gpu/check_cheats.py --jobs 10 --part ${PART:-1/2} > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | grep -v "skipped: works on the CPU" | tail -60
} 2>&1 | tee $OUT/call.log
