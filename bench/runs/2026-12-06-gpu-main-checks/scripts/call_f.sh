#!/usr/bin/env bash
# Call F: verify's floors from a bench of the baseline (the spread between its processes on this
# card, measure/process_spread.h). tests/gpu/check_loop.sh; benches of both gelu baselines; the
# one-shape 1% and 4-workload +1% verifies; then A/A verifies of the one-shape gelu at the
# defaults in the time left.
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s); timeout 120 bash tests/gpu/check_loop.sh > $OUT/check_loop.log 2>&1; echo "check_loop rc=$? in $(( $(date +%s) - s )) s"
grep "process spread\|PASS\|FAIL\|verdict" $OUT/check_loop.log
timeout 60 "$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null; grep -o '"process_spread_pct": [0-9.e-]*' $OUT/calibrate.json
gelu_targets /tmp/rf
bench_gelus
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2; cp $W/V1_1.json $OUT/verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 1; cp $W/V4_1.json $OUT/verify4.json
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('floors', r.get('process_spread_bound_pct'), r.get('process_spread_source'), r.get('stopped_early'))" $W/V1_1.json
aa_loop one $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py ${AA_UNTIL:-520}
cp $W/one_aa_1.json $OUT/aa1.json 2>/dev/null
for f in $W/one_aa_*.json; do python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('verdict') in ('faster','slower') else 1)" $f && cp $f $OUT/; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
