#!/usr/bin/env bash
# Call B: the stop after one ABBA cycle (2 pairs) for a large effect. calibrate first (the spread
# between processes that the 2-pair stop's floor needs), then the 4-workload +1% verify and the
# one-shape 1% verify 3 times each, 40 A/A verifies of the one-shape gelu (bf16 16384x8192,
# defaults, the blank candidate), and the second half of tests/gpu/check_cheats.py.
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
HK=$ROOT/build/hotkernel
{
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
s=$(date +%s.%N); "$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null; echo "calibrate rc=$? in $(python3 -c "import time;print(round(time.time()-$s,1))") s"
head -c 1500 $OUT/calibrate.json; echo
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 3; cp $W/V4_3.json $OUT/verify4.json
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 3; cp $W/V1_3.json $OUT/verify1.json
echo "--- A/A x ${AA:-40}: gelu1 baseline against its blank candidate"
for i in $(seq 1 ${AA:-40}); do
  s=$(date +%s.%N)
  "$HK" verify $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py --json > $W/aa_$i.json 2>/dev/null
  python3 - $W/aa_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") $i <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("AA", sys.argv[3], sys.argv[2], "s", r["verdict"], "n", r.get("n"), "speedup", round(r.get("speedup") or 0, 5),
      "warnings", [w.get("id") if isinstance(w, dict) else str(w)[:60] for w in r.get("warnings", [])])
PY
done
python3 - $W <<'PY'
import glob, json, sys, collections
v = collections.Counter(json.load(open(f))["verdict"] for f in glob.glob(sys.argv[1] + "/aa_*.json"))
print("A/A verdicts", dict(v))
PY
cd $ROOT
echo "--- check_cheats --part 2/2"
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
s=$(date +%s)
timeout ${CHEATS_S:-240} python3 tests/gpu/check_cheats.py --jobs 10 --part 2/2 > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | grep -v "skipped: works on the CPU" | tail -40
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
