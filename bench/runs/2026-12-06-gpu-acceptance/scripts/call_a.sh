#!/usr/bin/env bash
# Call A: the acceptance figures of the trust and workloads issues at main's defaults: the floor
# check, the parent's clock on the gelu 16384x8192 bf16 (honest runs, reports 5% and 10% short),
# benches of both gelu baselines, the one-shape 1% verify three times, the 4-workload +1% verify
# six times (how often it needs a third pair), the 4-workload gelu's floors, then A/A verifies of
# the one-shape gelu until AA_UNTIL seconds.
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s); OUT=$OUT/floor timeout 150 bash tests/gpu/check_floor.sh > $OUT/check_floor.log 2>&1; echo "check_floor rc=$? in $(( $(date +%s) - s )) s"
grep "copy by size\|pct_of\|PASS\|FAIL" $OUT/check_floor.log
gelu_targets /tmp/rf
probe big --shape 16384x8192 --n 6 --fractions 0.05,0.1
bench_gelus
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3; cp $W/V1_1.json $OUT/verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 6; cp $W/V4_1.json $OUT/verify4.json
for f in $W/V4_*.json; do python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('n', 0) > 2 else 1)" $f && cp $f $OUT/verify4-long.json; done
floors $W/V4_1.json
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('calls a sample', [(w['name'], w.get('calls_per_sample')) for w in r['runs'][0]['line']['workloads']])" $W/V4_1.json
aa_loop one $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py ${AA_UNTIL:-565}
for f in $W/one_aa_*.json; do python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('verdict') in ('faster','slower','invalid') else 1)" $f && cp $f $OUT/; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
(cd $OUT && tar czf json.tgz *.json && rm -f *.json)  # at most 8 files come back
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
