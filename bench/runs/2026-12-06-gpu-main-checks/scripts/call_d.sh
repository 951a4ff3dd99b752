#!/usr/bin/env bash
# Call D: main's changes since the primed-clock run, on a GPU: records told apart by CUPTI's time,
# a gap a call under kernel_time_rule "span", spawned processes holding fds 0-3 only, the mix's
# views warmed once (by the prime). calibrate; the parent's clock at the default sample, at 4 GiB
# of sets and on a small gelu; the honest set; the one-shape 1% and 4-workload +1% verifies twice
# each and the floors of the 4-workload gelu and of a 4-workload clone (a copy: calibrate's
# bandwidth predicts its time); A/A verifies of the one-shape gelu in the time left.
source bench/probes/gpu_calls.sh
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
s=$(date +%s.%N); timeout 60 "$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null
echo "calibrate rc=$? in $(python3 -c "import time;print(round(time.time()-$s,1))") s"
grep -o '"process_spread_pct": [0-9.e-]*\|"mem_gbs": [0-9.e-]*\|"mem_pct_of_spec": [0-9.e-]*' $OUT/calibrate.json | head -3
probe big --shape 16384x8192 --n 6 --fractions 0.1,0.2
probe big4g --shape 16384x8192 --sets-bytes 4294967296 --n 5 --fractions 0.05,0.1
probe small --shape 1024x4096 --n 5 --fractions 0.3,0.5
honest_set 170
gelu_targets /tmp/rd
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2; cp $W/V1_1.json $OUT/verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2; cp $W/V4_1.json $OUT/verify4.json
floors $W/V4_1.json
"$HK" new torch:clone --shape MxK --dims M=2048,4096,8192,16384 --dims K=8192 --device cuda --out-dir $W/c4 --name clone4 \
  --json > /dev/null 2>&1; echo "new clone4 rc=$?"
v C4 $W/c4/clone4_baseline.py $W/c4/clone4_candidate.py 1; cp $W/C4_1.json $OUT/verify-clone4.json; floors $W/C4_1.json
aa_loop one $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py ${AA_UNTIL:-570}
cp $W/one_aa_1.json $OUT/aa1.json 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
