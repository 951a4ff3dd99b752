#!/usr/bin/env bash
# Call C, the device time left, on main's final code: the parent's clock at the grown default
# sample of the gelu 16384x8192 (reports 10% short), the 4-workload +1% verify twice and the
# one-shape 1% verify once, the floor check, then A/A verifies of the one-shape gelu (after a
# bench of its baseline) until AA_UNTIL seconds.
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
gelu_targets /tmp/rf
probe big --shape 16384x8192 --n 4 --fractions 0.1
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2; cp $W/V4_1.json $OUT/verify4.json
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 1
s=$(date +%s); OUT=$OUT/floor timeout 60 bash tests/gpu/check_floor.sh > $OUT/check_floor.log 2>&1; echo "check_floor rc=$? in $(( $(date +%s) - s )) s"
tail -6 $OUT/check_floor.log
timeout 40 "$HK" bench $W/g1/gelu1_baseline.py --n 5 --json > /dev/null 2>&1
aa_loop one $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py ${AA_UNTIL:-225}
for f in $W/one_aa_*.json; do python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('verdict') in ('faster','slower','invalid') else 1)" $f && cp $f $OUT/; done
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
