#!/usr/bin/env bash
# Makes the map-ahead-first variant of ctest/cuda/heap_ahead.cu used in heapdbg2.sh/heapfix.sh:
# RSHMEM_HEAP_MAP_AHEAD=1 runs first in a fresh process (HA_ZERO_FIRST=1: one AHEAD=0 run before).
sed 's/^    run("0", 0);$/    if (!getenv("HA_ZERO_FIRST")) { run("1", 0); run("1", 200); } else { run("0", 0); run("1", 0); }/; s/^    run("0", 200);$//; s/^    run("1", 0);$//; s/^    run("1", 200);$//' \
  "$(dirname "$0")/../../ctest/cuda/heap_ahead.cu" > "${1:-heap_ahead_first.cu}"
