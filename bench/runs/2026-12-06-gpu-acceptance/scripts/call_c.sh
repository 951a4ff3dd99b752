#!/usr/bin/env bash
# Call C: the parent's clock's slack on each honest candidate of tests/adversarial/honest, benched
# alone on the card (bench/probes/honest_slack.py, the cheat table's gelu 4096x4096 fp32), then on
# this host's CPU the default gelu target with samples grown toward 10 ms of calls (reports 10% and
# 15% short).
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s)
timeout ${HONEST_S:-330} python3 bench/probes/honest_slack.py --python python3 --device cuda --n ${HONEST_N:-5} \
  --only blank,compiled,copy_then_kernel,cuda_extension,fused,jittered,triton_kernel > $OUT/honest-slack.log 2>&1
echo "honest_slack rc=$? in $(( $(date +%s) - s )) s"; grep summary $OUT/honest-slack.log
s=$(date +%s)
OMP_NUM_THREADS=1 timeout ${CPU_S:-150} python3 bench/probes/parent_clock_probe.py --bin "$HK" --python python3 --device cpu \
  --shape 128x128 --n 10 --fractions 0.1,0.15 > $OUT/probe-cpu.log 2>&1
echo "probe cpu rc=$? in $(( $(date +%s) - s )) s"; tail -1 $OUT/probe-cpu.log
} 2>&1 | tee $OUT/call.log
