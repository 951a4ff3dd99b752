#!/usr/bin/env bash
# Final device call B: check_cheats (the whole table) and check_profilers, with the wheel's binary.
set -u
export PYTHONUNBUFFERED=1
W=$(ls dist/hotkernel-*.whl)
python3 -m venv --system-site-packages /tmp/hkv >/dev/null 2>&1 && /tmp/hkv/bin/pip install -q --no-index --disable-pip-version-check "$W"
export HOTKERNEL_BIN=/tmp/hkv/bin/hotkernel HOTKERNEL_PYTHON=python3 HOTKERNEL_TORCH_PYTHON=python3
"$HOTKERNEL_BIN" --version
t0=$SECONDS; timeout 300 python3 tests/gpu/check_cheats.py --jobs 8 > $OUT/check_cheats.log 2>&1; echo "check_cheats rc=$? $((SECONDS - t0)) s"; tail -70 $OUT/check_cheats.log
t0=$SECONDS; LOG_DIR=$(mktemp -d) timeout 250 scripts/test-gpu check_profilers > $OUT/check_profilers.log 2>&1; echo "check_profilers rc=$? $((SECONDS - t0)) s"; tail -30 $OUT/check_profilers.log
# Repeated verifies of the bundled example: every verdict, and why any run was not ok.
mkdir -p /tmp/aa && cp -r examples/rmsnorm /tmp/aa/ex && cd /tmp/aa
for i in $(seq 1 8); do
  timeout 40 "$HOTKERNEL_BIN" verify ex/rmsnorm_baseline.py ex/rmsnorm_candidate.py --json-out /tmp/aa/v$i.json > /dev/null 2>&1
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("VERDICT", r["verdict"], "REASONS", json.dumps(r.get("reasons"))[:1200])
for x in r.get("runs", []):
    if x.get("status") not in (None, "ok"):
        print("RUN", x.get("role"), x.get("index"), x.get("status"), str(x.get("reason"))[:800])
        print("PC", json.dumps((x.get("line") or {}).get("parent_clock")))
' /tmp/aa/v$i.json
done
