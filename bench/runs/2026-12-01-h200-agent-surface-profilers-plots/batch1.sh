#!/usr/bin/env bash
# Device batch 1: gpu_info, loop, profilers, inside; plots of the bundled example; gates on the GPU.
set -u
export HOTKERNEL_BIN=$PWD/.carry/hotkernel HOTKERNEL_PYTHON=python3 LOG_DIR=$OUT/logs
mkdir -p "$LOG_DIR" "$OUT/plots" "$OUT/json"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
python3 -c "import torch, triton, sys; print(sys.version.split()[0], torch.__version__, triton.__version__)"
"$HOTKERNEL_BIN" --version
for c in check_gpu_info check_loop check_profilers check_inside; do
  timeout 200 bash scripts/test-gpu "$c" 2>&1 | tail -40
done
B=$HOTKERNEL_BIN; EX=examples/rmsnorm
t0=$(date +%s.%N)
"$B" --python python3 --quiet --json verify $EX/rmsnorm_baseline.py $EX/rmsnorm_candidate.py --plot "$OUT/plots/verify.png" \
  --export "bmf:$OUT/json/verify.bmf.json" --export "$OUT/json/verify.md" --fail-on regression:5 > "$OUT/json/verify.json"
echo "verify exit $? in $(python3 -c "import time;print(round(time.time()-$t0,1))") s"
"$B" --python python3 --quiet verify $EX/rmsnorm_baseline.py $EX/rmsnorm_candidate.py --plot "$OUT/plots/verify.svg" --n 3 | tail -3
"$B" --python python3 --quiet --json bench $EX/rmsnorm_baseline.py --n 5 --plot "$OUT/plots/bench.png" > "$OUT/json/bench.json"; echo "bench exit $?"
python3 - "$OUT" "$B" <<'PY'
import json, subprocess, sys
out, b = sys.argv[1], sys.argv[2]
v = json.load(open(f"{out}/json/verify.json"))
ri = v.get("roofline_inputs") or {}
print("verdict", v["verdict"], "speedup", v.get("speedup"), v.get("speedup_ci95"), "gate", v.get("gate"), "plot", v.get("plot"))
cmd = [b, "--json", "roofline", "--gpu", "0", "--flops", str(ri.get("flops", 0)), "--bytes", str(ri.get("bytes", 1)),
       "--dtype", str(ri.get("dtype", "bf16")), "--baseline-ms", str(v["baseline"]["mean_ms"]),
       "--candidate-ms", str(v["candidate"]["mean_ms"]), "--plot", f"{out}/plots/roofline.png"]
r = subprocess.run(cmd, capture_output=True, text=True)
print("roofline exit", r.returncode, r.stderr[-500:])
if r.returncode == 0:
    j = json.loads(r.stdout)
    print("roofline", {k: j.get(k) for k in ("bound", "attainable_ms", "points", "plot")})
    open(f"{out}/json/roofline.json", "w").write(r.stdout)
PY
(cd "$OUT/json" && "$B" --quiet --json record --result verify.json --note "fused one-pass Triton RMSNorm" --who "scripts: device batch" \
   --plot "$OUT/plots/history.png" > record.json; echo "record exit $?")
ls -la "$OUT/plots"
