#!/usr/bin/env bash
# Call A: the GPU checks of the loop (the bundled rmsnorm, with the gap allowance per GPU operation
# again) and of the floor by size (calibrate's copy_curve, a 4-workload copy within 5% of it);
# benches of both gelu baselines; the 4-workload +1% verify with its progress lines time-stamped
# (where a first verify's seconds outside its runs go), twice more, the one-shape 1% verify twice
# and the floors of the 4-workload gelu; then A/A verifies of the one-shape gelu in the time left.
source bench/probes/gpu_calls.sh
stamped() {  # LABEL BASELINE CANDIDATE: one verify, each stderr line prefixed by seconds since its start
  local s=$(date +%s.%N)
  timeout 60 "$HK" verify "$2" "$3" --json --detail full > "$W/$1_t.json" \
    2> >(while IFS= read -r l; do echo "$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $s}") $l"; done > "$OUT/$1-stderr.log")
  report "$W/$1_t.json" "$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $s}")" "$1"
  sleep 0.2; cat "$OUT/$1-stderr.log"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); m=r['measurement']; print('  measurement wall_s', m.get('wall_s'), 'runs', round(sum(x['wall_s'] for x in r['runs']), 2), 'fork_server', r.get('fork_server'))" "$W/$1_t.json"
}
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s); timeout 150 bash tests/gpu/check_loop.sh > $OUT/check_loop.log 2>&1; echo "check_loop rc=$? in $(( $(date +%s) - s )) s"
grep "process spread\|PASS\|FAIL\|verdict\|wall" $OUT/check_loop.log
s=$(date +%s); OUT=$OUT/floor timeout 150 bash tests/gpu/check_floor.sh > $OUT/check_floor.log 2>&1; echo "check_floor rc=$? in $(( $(date +%s) - s )) s"
cat $OUT/check_floor.log
gelu_targets /tmp/rf
bench_gelus
stamped V4first $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py; cp $W/V4first_t.json $OUT/verify4-first.json
floors $W/V4first_t.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2; cp $W/V1_1.json $OUT/verify1.json
aa_loop one $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py ${AA_UNTIL:-565}
for f in $W/one_aa_*.json; do python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('verdict') in ('faster','slower','invalid') else 1)" $f && cp $f $OUT/; done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
