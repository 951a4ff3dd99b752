#!/usr/bin/env bash
# Call F: A/A verifies at the defaults, the 4-workload gelu then the one-shape one, in the time given.
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
gelu_targets /tmp/rf
aa_loop four $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py ${AA4_UNTIL:-250}
aa_loop one $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py ${AA_UNTIL:-500}
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/call.log
