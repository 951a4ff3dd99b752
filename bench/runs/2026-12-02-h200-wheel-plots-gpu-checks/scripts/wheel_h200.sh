#!/usr/bin/env bash
# The wheel on the H200: installed with pip from the file alone, then gpu-info, new, bench and
# verify of the bundled example, each timed.
set -u
export PYTHONUNBUFFERED=1
REPO=$PWD
t() { local name=$1; shift; local t0=$(date +%s.%N); "$@"; local rc=$?; echo "TIME $name rc=$rc $(python3 -c "print(round($(date +%s.%N)-$t0,2))") s"; return $rc; }
{
ldd --version | head -1; python3 --version; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
command -v gcc g++ cc || echo "no compiler on PATH"
W=$(ls "$REPO"/dist/hotkernel-*.whl); echo "wheel: $(basename "$W") $(du -k "$W" | cut -f1) KiB"
if python3 -m venv --system-site-packages /tmp/hkv 2>/dev/null; then
  t pip-install /tmp/hkv/bin/pip install -q --no-index --disable-pip-version-check "$W"
  HK=/tmp/hkv/bin/hotkernel; PYM=/tmp/hkv/bin/python
else
  echo "no venv module: pip install --target"
  t pip-install python3 -m pip install -q --no-index --target /tmp/hkt "$W"; HK=/tmp/hkt/bin/hotkernel; PYM="env PYTHONPATH=/tmp/hkt python3"
fi
ls -la "$HK"; ldd "$HK"
t version "$HK" --version
export HOTKERNEL_PYTHON=$(command -v python3)
mkdir -p /tmp/w && cd /tmp/w
t gpu-info "$HK" gpu-info
t new "$HK" new --from torch.nn.functional:gelu --shape 4096x8192 --dtype bf16 --out-dir gelu
t bench-gelu "$HK" bench gelu/gelu_baseline.py --n 5
cp -r "$REPO/examples/rmsnorm" ex
t verify-example "$HK" verify ex/rmsnorm_baseline.py ex/rmsnorm_candidate.py --json-out /tmp/w/v1.json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("VERDICT", r["verdict"], "REASONS", json.dumps(r.get("reasons"))[:1500])
for x in r.get("runs", []):
    if x.get("status") not in (None, "ok"): print("RUN", x.get("role"), x.get("index"), x.get("status"), str(x.get("reason"))[:600])
    pc = (x.get("line") or {}).get("parent_clock")
    if pc: print("PC", x.get("role"), x.get("index"), json.dumps(pc))
' /tmp/w/v1.json
t python-m-bench $PYM -m hotkernel bench ex/rmsnorm_candidate.py --n 3
# The bundled example's pictures, drawn by the binary.
t bench-plot "$HK" bench ex/rmsnorm_baseline.py --n 5 --plot "$OUT/bench.png"
t verify-plot "$HK" verify ex/rmsnorm_baseline.py ex/rmsnorm_candidate.py --plot "$OUT/verify.png" --json-out /tmp/w/v2.json
read -r flops bytes bms cms < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); ri = r["roofline_inputs"]
print(int(ri["flops"]), int(ri["bytes"]), r["baseline"]["mean_ms"], r["candidate"]["mean_ms"])' /tmp/w/v2.json)
t roofline-plot "$HK" roofline --gpu 0 --flops "$flops" --bytes "$bytes" --dtype bf16 --baseline-ms "$bms" --candidate-ms "$cms" --plot "$OUT/roofline.png"
t record-1 "$HK" record --result /tmp/w/v1.json --note "fused one-pass Triton RMSNorm" --who "bundled example" --results-dir /tmp/w/results --leaderboard /tmp/w/LB.md
t record-2 "$HK" record --result /tmp/w/v2.json --note "fused one-pass Triton RMSNorm, again" --who "bundled example" --results-dir /tmp/w/results --leaderboard /tmp/w/LB.md --plot "$OUT/history.png"
cat /tmp/w/LB.md
t mcp-handshake bash -c "printf '%s\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}' '{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}' | $HK mcp | head -c 300; echo"
} 2>&1 | tee "$OUT/wheel-h200.log"
