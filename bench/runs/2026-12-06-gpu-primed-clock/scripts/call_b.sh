#!/usr/bin/env bash
# Call B: the bound's CUPTI margins (0.05 ms + 2% of the window, gaps at 2.5x the probe's, no
# launch allowance): the parent's clock at the default sample, at 4 GiB of sets (16 calls) and
# on a small gelu; the honest set; the one-shape 1% and 4-workload +1% verifies twice each, on
# this binary and on main's before the prime (build-old/hotkernel, the same machine); then A/A
# verifies of the one-shape gelu in the time left.
set -u
ROOT=$PWD
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1
HK=$ROOT/build/hotkernel
export HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
T0=$(date +%s)
probe() {  # name, then the probe's own arguments
  local name=$1; shift; local s=$(date +%s)
  timeout 100 python3 bench/probes/parent_clock_probe.py --bin $HK --python python3 --device cuda --dtype bf16 "$@" > $OUT/probe-$name.log 2>&1
  echo "probe $name rc=$? in $(( $(date +%s) - s )) s"; tail -1 $OUT/probe-$name.log
}
{
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
probe big --shape 16384x8192 --n 6 --fractions 0.1,0.2
probe big4g --shape 16384x8192 --sets-bytes 4294967296 --n 5 --fractions 0.05,0.1
probe small --shape 1024x4096 --n 5 --fractions 0.3,0.5
s=$(date +%s)
timeout 150 python3 tests/gpu/check_cheats.py --jobs 7 --only blank,compiled,copy_then_kernel,cuda_extension,fused,jittered,triton_kernel > $OUT/honest.log 2>&1; echo "honest rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/honest.log | tail -12
sed -n '/^slower()/,/^v V1/p' bench/runs/2026-12-02-h200-deferred-checks/scripts/call_a.sh | head -n -1 > /tmp/fns.sh
W=/tmp/rb; rm -rf $W; mkdir -p $W; cd $W
source /tmp/fns.sh
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2; cp $W/V1_1.json $OUT/verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2; cp $W/V4_1.json $OUT/verify4.json
NEW=$HK; HK=$ROOT/build-old/hotkernel
v OLD1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 2
v OLD4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 2
HK=$NEW
i=0
while [ $(( $(date +%s) - T0 )) -lt ${AA_UNTIL:-560} ]; do
  i=$((i+1)); s=$(date +%s.%N)
  timeout 30 "$HK" verify $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py --json > $W/aa_$i.json 2>/dev/null
  python3 - $W/aa_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") $i <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pc = [x["line"].get("parent_clock", {}) for x in r.get("runs", [])]
used = [round(p["excess_ms"] / p["allowed_ms"], 2) for p in pc if p.get("allowed_ms")]
print("AA1", sys.argv[3], sys.argv[2], "s", r["verdict"], "n", r.get("n"), "speedup", r.get("speedup"), "used", max(used) if used else None,
      "warnings", [w.get("id") if isinstance(w, dict) else str(w)[:60] for w in r.get("warnings", [])])
PY
done
python3 - $W <<'PY'
import glob, json, sys, collections
v = collections.Counter(json.load(open(f))["verdict"] for f in glob.glob(sys.argv[1] + "/aa_*.json"))
print("A/A verdicts", dict(v))
PY
cp $W/aa_1.json $OUT/aa1.json 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/call.log | grep -v "^  median\|^  workloads"
