#!/usr/bin/env bash
# Device batch 2: check_profilers (whole), the plots of the bundled example (only they come back).
set -u
export HOTKERNEL_BIN=$PWD/.carry/hotkernel HOTKERNEL_PYTHON=python3
W=/tmp/hk-batch2; mkdir -p $W/logs $W/json "$OUT/plots"
export LOG_DIR=$W/logs
timeout 330 bash scripts/test-gpu check_profilers 2>&1 | tail -45
B=$HOTKERNEL_BIN; EX=examples/rmsnorm
"$B" --python python3 --quiet --json verify $EX/rmsnorm_baseline.py $EX/rmsnorm_candidate.py --plot "$OUT/plots/verify.png" \
  --export "bmf:$OUT/plots/verify.bmf.json" --export "$OUT/plots/verify.md" --fail-on regression:5 > "$W/json/verify.json"; echo "verify exit $?"
"$B" --python python3 --quiet --json bench $EX/rmsnorm_baseline.py --n 5 --plot "$OUT/plots/bench.png" > "$W/json/bench.json"; echo "bench exit $?"
python3 - "$W" "$B" "$OUT" <<'PY'
import json, subprocess, sys
w, b, out = sys.argv[1:]
v = json.load(open(f"{w}/json/verify.json"))
ri = v.get("roofline_inputs") or {}
cmd = [b, "--json", "roofline", "--gpu", "0", "--flops", str(ri.get("flops", 0)), "--bytes", str(ri.get("bytes", 1)),
       "--dtype", str(ri.get("dtype", "bf16")), "--baseline-ms", str(v["baseline"]["mean_ms"]),
       "--candidate-ms", str(v["candidate"]["mean_ms"]), "--plot", f"{out}/plots/roofline.png"]
r = subprocess.run(cmd, capture_output=True, text=True)
print("roofline exit", r.returncode, r.stderr[-300:])
PY
(cd "$W/json" && "$B" --quiet --json record --result verify.json --note "fused one-pass Triton RMSNorm" --who "device batch" \
   --plot "$OUT/plots/history.png" > record.json; echo "record exit $?")
ls -la "$OUT/plots"
