#!/usr/bin/env bash
# Call B: the whole cheat table of tests/gpu/check_cheats.py (both parts, one after the other).
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
for part in 1/2 2/2; do
  s=$(date +%s)
  timeout ${CHEATS_S:-280} python3 tests/gpu/check_cheats.py --jobs 10 --part $part > $OUT/check_cheats-${part%/2}.log 2>&1
  echo "part $part rc=$? in $(( $(date +%s) - s )) s"
  grep -v "| yes$\|| no$" $OUT/check_cheats-${part%/2}.log | grep -v "skipped: works on the CPU" | tail -40
done
} 2>&1 | tee $OUT/call.log
