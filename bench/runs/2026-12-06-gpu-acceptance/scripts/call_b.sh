#!/usr/bin/env bash
# Call B: the bundled example's loop check, then the whole cheat table of tests/gpu/check_cheats.py
# (both parts, the honest rows included).
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s); timeout 150 bash tests/gpu/check_loop.sh > $OUT/check_loop.log 2>&1; echo "check_loop rc=$? in $(( $(date +%s) - s )) s"
grep "process spread\|PASS\|FAIL\|verdict\|wall" $OUT/check_loop.log
} 2>&1 | tee $OUT/loop.log
exec bash bench/runs/2026-12-06-gpu-main-checks/scripts/call_e.sh
