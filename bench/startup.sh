#!/bin/sh
# CLI and MCP start-up figures for hotkernel; see bench/startup.py for how they are measured.
# Usage: bench/startup.sh [--bin build/hotkernel] [-n 50] [--json]
exec python3 "$(dirname "$0")/startup.py" "$@"
