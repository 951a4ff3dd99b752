#!/usr/bin/env bash
# On the H200: a 3-candidate verify through the GPU pool against the same three verifies one
# after another; pct_of_floor of a kernel that streams like calibrate's copy (fp32 x * 2 at three
# sizes) against calibrate's prediction; and the cheat rows call B's time limit cut.
set -u
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3; ROOT=$PWD
W=/tmp/pf; rm -rf $W; mkdir -p $W; cd $W
more() {  # more <candidate> <out> <percent>: the candidate plus a gelu over that share of x's rows
  python3 - "$1" "$2" "$3" <<'PY'
import sys
t = open(sys.argv[1]).read(); p = int(sys.argv[3])
n = t.replace("    return _baseline(x)\n", "    y = _baseline(x)\n    _baseline(x[: max(1, x.shape[0] * %d // 100)])\n    return y\n" % p)
assert n != t
open(sys.argv[2], "w").write(n)
PY
}
"$HK" calibrate --json > $OUT/calibrate_c.json 2>/dev/null; echo "calibrate rc=$?"
"$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir $W/g --name gelu --json > /dev/null 2>&1; echo "new rc=$?"
cp $W/g/gelu_candidate.py $W/g/same_candidate.py
more $W/g/gelu_candidate.py $W/g/slow1_candidate.py 1
more $W/g/gelu_candidate.py $W/g/slow5_candidate.py 5
s=$(date +%s.%N)
"$HK" verify $W/g/gelu_baseline.py $W/g/same_candidate.py $W/g/slow1_candidate.py $W/g/slow5_candidate.py --json > $OUT/pool.json 2> $W/pool.err
echo "pool rc=$? $(python3 -c "import time;print(round(time.time()-$s,1))") s"
python3 -c 'import json;r=json.load(open("'$OUT'/pool.json"));[print("POOL", x.get("candidate_script"), x.get("verdict"), x.get("speedup"), x.get("gpu_uuid")) for x in r.get("results",[])]; print("SPREAD", json.dumps(r.get("spread",{}))[:600])' || tail -20 $W/pool.err
for c in same slow1 slow5; do
  "$HK" verify $W/g/gelu_baseline.py $W/g/${c}_candidate.py --json > $W/seq_$c.json 2>/dev/null
  python3 -c 'import json,sys;r=json.load(open(sys.argv[1]));print("SEQ", sys.argv[2], r["verdict"], r.get("speedup"), r["n"])' $W/seq_$c.json $c
done
cat > $W/scale2.py <<'PY'
def scale2(x):
    return x * 2.0
PY
"$HK" new ./scale2.py:scale2 --shape MxK --dims M=8192,16384,32768 --dims K=8192 --dtype fp32 --device cuda --out-dir $W/s --json > /dev/null 2>&1; echo "new scale2 rc=$?"
"$HK" verify $W/s/scale2_baseline.py $W/s/scale2_candidate.py --json > $OUT/scale2.json 2>/dev/null
python3 - $OUT/scale2.json $OUT/calibrate_c.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); cal = json.load(open(sys.argv[2]))
pred = 100 * cal["mem_gbs"] / cal["spec_mem_gbs"]
print("SCALE2", r["verdict"], "calibrate predicts", round(pred, 2))
for w in r["workloads"]:
    ro = w.get("roofline", {})
    print("  W", w["name"], "pct_of_floor", ro.get("candidate_pct_of_floor"), "diff_vs_prediction_pct",
          None if ro.get("candidate_pct_of_floor") is None else round(100 * (ro["candidate_pct_of_floor"] / pred - 1), 2),
          "pct_of_measured_floor", ro.get("candidate_pct_of_measured_floor"))
PY
cd $ROOT
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
timeout 200 python3 tests/gpu/check_cheats.py --jobs 4 --only copy_repeats,planted_pyc,rewrite_baseline_between_runs > $OUT/check_cheats_c.log 2>&1; echo "check_cheats rc=$?"; tail -6 $OUT/check_cheats_c.log
