#!/usr/bin/env bash
# Proxy A/B (issue 19, session 29): proxy_bench (perftest/proxy/) across 2 namespaced hosts, ONE GPU
# EACH (host 1 GPU 0, host 2 GPU 1, no MPS: crosshost.sh XH_MPS=0), two staged trees run alternately:
# old, new, old, new (REPS pairs, default 3). Usage: OUT=dir bash ab.sh OLD NEW (as gpux28/ab.sh).
set -u
OLD="$1" NEW="$2" O="${OUT:-/tmp/gpux-ab}" REPS="${REPS:-3}"
mkdir -p "$O"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 PROXY_BENCH_SCALE="${PROXY_BENCH_SCALE:-4}" XH_MPS=0
T0=$(date +%s)
bench() { # bench TAG TREE
  RSHMEM_DEBUG=INFO XH_PREFIX=rxb OUT=/tmp/gxab-$1 TESTS=proxy_bench LIMIT=40 timeout 55 bash "$2/ctest/cuda/crosshost.sh" >/dev/null 2>&1
  echo "rc=$?" >"$O/bench_$1.log"
  grep -v "^TIME" /tmp/rshmem-rxb-logs/proxy_bench.log | grep -E "^(post|putq|pingpong|bw|floor|note)|proxy profile|rror|FAIL" >>"$O/bench_$1.log"
  echo "== $1 ($(( $(date +%s) - T0 )) s)"
}
for i in $(seq 1 "$REPS"); do bench "old$i" "$OLD"; bench "new$i" "$NEW"; done
{
  printf '%-28s' row; for i in $(seq 1 "$REPS"); do printf '%10s%10s' "old$i" "new$i"; done; echo
  grep -hE "^(bw|putq|pingpong|post)" "$O/bench_old1.log" | sed 's/:.*//' | while read -r key; do
    printf '%-28s' "$key"
    for i in $(seq 1 "$REPS"); do for t in old new; do
      v=$(grep -E "^$key:" "$O/bench_$t$i.log" | head -1 | sed 's/^[^:]*: *//' | awk '{print $1}')
      printf '%10s' "${v:--}"
    done; done; echo
  done
} >"$O/ab.txt"
cat "$O/ab.txt"
