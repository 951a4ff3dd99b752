#!/usr/bin/env bash
# On the H200, after the later-workload warm-up: the 4-workload verify (3 times, timed, with each
# workload's pct_of_floor), a one-shape 1% verify with its phases (2 times), a candidate wrong at
# one shape, then the GPU cheat and contract checks on this code.
set -u
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3; ROOT=$PWD
W=/tmp/wl; rm -rf $W; mkdir -p $W; cd $W
slower() {
  python3 - "$1" "$2" <<'PY'
import sys
t = open(sys.argv[1]).read()
n = t.replace("    return _baseline(x)\n", "    y = _baseline(x)\n    _baseline(x[: max(1, x.shape[0] // 100)])  # 1% more work\n    return y\n")
assert n != t
open(sys.argv[2], "w").write(n)
PY
}
"$HK" calibrate --json > $OUT/calibrate_b.json 2>/dev/null; echo "calibrate rc=$?"
"$HK" new torch.nn.functional:gelu --shape MxK --dims M=2048,4096,8192,16384 --dims K=8192 --device cuda --out-dir $W/g4 --name gelu4 --json > /dev/null 2>&1; echo "new4 rc=$?"
"$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir $W/g1 --name gelu1 --json > /dev/null 2>&1; echo "new1 rc=$?"
slower $W/g4/gelu4_candidate.py $W/g4/gelu4_slow_candidate.py
slower $W/g1/gelu1_candidate.py $W/g1/gelu1_slow_candidate.py
python3 - $W/g4/gelu4_candidate.py $W/g4/gelu4_wrong_candidate.py <<'PY'
import sys
t = open(sys.argv[1]).read()
n = t.replace("    return _baseline(x)\n", "    y = _baseline(x)\n    return y * 1.1 if x.shape[0] == 8192 else y\n")
open(sys.argv[2], "w").write(n)
PY
"$HK" bench $W/g4/gelu4_baseline.py --n 2 --json > /dev/null 2>&1
for i in 1 2 3; do
  s=$(date +%s.%N)
  "$HK" verify $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py --json --detail full > $W/v4_$i.json 2>/dev/null
  e=$(python3 -c "import time;print(round(time.time()-$s,2))")
  python3 - $W/v4_$i.json $e $OUT/calibrate_b.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); cal = json.load(open(sys.argv[3]))
print("V4", sys.argv[2], "s", r["verdict"], "n", r["n"], "geomean", r.get("speedup"), r.get("aggregate", {}).get("slower_on"),
      "runs", [round(x["wall_s"], 2) for x in r["runs"]])
for w in r.get("workloads", []):
    ro = w.get("roofline", {}); by = w.get("roofline_inputs", {}).get("bytes")
    pred = 100 * cal["mem_gbs"] / cal["spec_mem_gbs"]
    print("  W", w["name"], w["verdict"], round(w.get("speedup") or 0, 4), "b_min", w["baseline"]["min_ms"],
          "pct_floor", ro.get("baseline_pct_of_floor"), "predicted_by_calibrate", round(pred, 2),
          "pct_measured_floor", ro.get("baseline_pct_of_measured_floor"), "bytes", by)
l = r["runs"][0]["line"]
print("  phases", l["phases_s"], [(w["name"], w["warmup_s"], w["phases_s"].get("timing_and_checks")) for w in l["workloads"]])
PY
done
cp $W/v4_1.json $OUT/verify4.json
for i in 1 2; do
  s=$(date +%s.%N)
  "$HK" verify $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py --json --detail full > $W/v1_$i.json 2>/dev/null
  e=$(python3 -c "import time;print(round(time.time()-$s,2))")
  python3 - $W/v1_$i.json $e <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("V1", sys.argv[2], "s", r["verdict"], "n", r["n"], r.get("speedup"), "wall", r["measurement"]["wall_s"], "runs", [round(x["wall_s"], 2) for x in r["runs"]])
print("  reasons", str(r.get("reasons"))[:600])
print("  phases", r["runs"][0]["line"].get("phases_s"))
PY
done
"$HK" verify $W/g4/gelu4_baseline.py $W/g4/gelu4_wrong_candidate.py --json > $W/wrong.json 2>/dev/null
python3 -c 'import json;r=json.load(open("'$W'/wrong.json"));print("WRONG", r["verdict"], r["aggregate"].get("incorrect_on"), str(r["reasons"])[:300])'
cd $ROOT
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
timeout 320 python3 tests/gpu/check_cheats.py --jobs 8 > $OUT/check_cheats.log 2>&1; echo "check_cheats rc=$?"; grep -iE "fail|summary|rows|caught" $OUT/check_cheats.log | tail -8
