#!/usr/bin/env bash
# On the H200: calibrate (bandwidth and the spread between processes), a 4-workload gelu target
# verified against a candidate 1% slower at every shape (3 times, timed), a one-shape 1% verify
# (3 times, timed), and 40 A/A verifies of gelu bf16 16384x8192 at the defaults.
set -u
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3
W=/tmp/wl; rm -rf $W; mkdir -p $W; cd $W
slower() {  # slower <candidate> <out>: the candidate plus a gelu over 1% of x's rows
  python3 - "$1" "$2" <<'PY'
import sys
t = open(sys.argv[1]).read()
n = t.replace("    return _baseline(x)\n", "    y = _baseline(x)\n    _baseline(x[: max(1, x.shape[0] // 100)])  # 1% more work\n    return y\n")
assert n != t
open(sys.argv[2], "w").write(n)
PY
}
t0=$(date +%s.%N)
"$HK" calibrate --json > $OUT/calibrate.json 2> $OUT/calibrate.err; echo "calibrate rc=$? $(python3 -c "import time;print(round(time.time()-$t0,1))") s"
python3 -c 'import json;r=json.load(open("'$OUT'/calibrate.json"));print("CAL", r.get("mem_gbs"), r.get("spec_mem_gbs"), r.get("process_spread_pct"), r.get("details",{}).get("process_spread"))'
"$HK" new torch.nn.functional:gelu --shape MxK --dims M=2048,4096,8192,16384 --dims K=8192 --device cuda --out-dir $W/g4 --name gelu4 --json > $OUT/new4.json 2>&1; echo "new4 rc=$?"
"$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir $W/g1 --name gelu1 --json > /dev/null 2>&1; echo "new1 rc=$?"
slower $W/g4/gelu4_candidate.py $W/g4/gelu4_slow_candidate.py
slower $W/g1/gelu1_candidate.py $W/g1/gelu1_slow_candidate.py
"$HK" bench $W/g4/gelu4_baseline.py --n 3 --json > $OUT/bench4.json 2>/dev/null; echo "bench4 rc=$?"
for i in 1 2 3; do
  s=$(date +%s.%N)
  "$HK" verify $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py --json --detail full > $W/v4_$i.json 2>/dev/null
  e=$(python3 -c "import time;print(round(time.time()-$s,2))")
  python3 - $W/v4_$i.json $e <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("V4", sys.argv[2], "s", r["verdict"], "n", r["n"], "geomean", r.get("speedup"), r.get("aggregate", {}).get("slower_on"))
for w in r.get("workloads", []):
    ro = w.get("roofline", {})
    print("  W", w["name"], w["verdict"], round(w.get("speedup") or 0, 4), "b_ms", w["baseline"]["mean_ms"],
          "pct_floor", ro.get("baseline_pct_of_floor"), "pct_measured", ro.get("baseline_pct_of_measured_floor"),
          "bytes", w.get("roofline_inputs", {}).get("bytes"))
print("  stopped", r.get("stopped_early"), "warnings", [x["id"] for x in r.get("warnings", [])], "flags", [x["id"] for x in r.get("flags", [])])
PY
done
cp $W/v4_1.json $OUT/verify4.json
for i in 1 2 3; do
  s=$(date +%s.%N)
  "$HK" verify $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py --json > $W/v1_$i.json 2>/dev/null
  e=$(python3 -c "import time;print(round(time.time()-$s,2))")
  python3 -c 'import json,sys;r=json.load(open(sys.argv[1]));print("V1", sys.argv[2], "s", r["verdict"], "n", r["n"], r.get("speedup"), [x["id"] for x in r.get("warnings",[])])' $W/v1_$i.json $e
done
for i in $(seq 1 40); do
  s=$(date +%s.%N)
  "$HK" verify $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py --json > $W/aa_$i.json 2>/dev/null
  e=$(python3 -c "import time;print(round(time.time()-$s,2))")
  python3 -c 'import json,sys;r=json.load(open(sys.argv[1]));print("AA", sys.argv[2], sys.argv[3], "s", r["verdict"], "n", r["n"], r.get("speedup"), [x["id"] for x in r.get("warnings",[])])' $W/aa_$i.json $i $e
done
