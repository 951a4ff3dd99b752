#!/usr/bin/env bash
# Call B: the whole cheat table of tests/gpu/check_cheats.py, both parts, as call E of
# bench/runs/2026-12-06-gpu-main-checks ran it.
exec bash bench/runs/2026-12-06-gpu-main-checks/scripts/call_e.sh
