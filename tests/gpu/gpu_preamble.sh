# Sourced by the shell checks in tests/gpu/ after they set BIN and PY: exits 0 with SKIP where
# there is no NVIDIA GPU, and 1 with FAIL where the binary or a CUDA torch is missing.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no NVIDIA GPU here (nvidia-smi missing or failing)"
    exit 0
fi
[ -x "$BIN" ] || { echo "FAIL: no hotkernel binary at $BIN (build it, or set HOTKERNEL_BIN)"; exit 1; }
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "FAIL: a GPU is here but $PY has no CUDA torch; set HOTKERNEL_PYTHON"
    exit 1
fi
