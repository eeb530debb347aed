#!/usr/bin/env bash
# Second device call (same warm nvidia-h100-x4 machine, right after call.sh; NVIDIA's programs
# from call.sh's build in /tmp/gpux-work/nvx): everything alone, one after another, each
# result written to $OUT as it comes.
#   OUT=$OUT bash .gpu/gpux/call2.sh
# 1. proxy_bench, 2 PEs under MPS on GPU 0, nothing else running; then the host-to-host floor
# 2. collective_launch at 2 PEs under MPS at 45 % (the new default)
# 3. 4 PEs as 2 hosts x 2 GPUs: signal, collective_launch, then NVIDIA's examples
set -u
G="$(cd "$(dirname "$0")" && pwd)"; X="$G/ctest/cuda/crosshost.sh"; O="${OUT:-/tmp/gpux-out2}"; mkdir -p "$O"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s]"; }
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
run() { local d=$1; shift; env OUT="$O/$d" "$@" bash "$X" >/dev/null 2>&1; echo "$(el) $d: $(grep -E '^RESULT' "$O/$d/crosshost.log")"; }
run bench XH_PREFIX=rxb XH_GPU=0 TESTS=proxy_bench LIMIT=40
tar xzf "$O/bench/crosshost-logs.tgz" -O ./proxy_bench.log 2>/dev/null | grep -v "^TIME" >"$O/proxy_bench.log"; cat "$O/proxy_bench.log"
N="$G/scripts/netns-hosts.sh" A="$G/ctest/multihost/netns-agent.sh" nb="$G/build/net"; S="$G/stage"
command -v ip >/dev/null || export PATH="$G/tools:$PATH"
( export RSHMEM_NETNS_PREFIX=rxn; "$N" up 2 >/dev/null
  "$N" exec 2 env -u RSHMEM_NETNS_PREFIX timeout 20 "$nb/tcp_floor" server 17718 & sleep 0.3
  timeout 15 "$N" exec 1 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" client "$("$N" addr 2)" 17718 20000 >"$O/net_floor.csv" 2>&1
  timeout 40 "$N" exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT="$A" RSHMEM_BOOTSTRAP_IFNAME=eth0 LD_LIBRARY_PATH="$S/lib" \
    "$S/bin/rshmemrun" --hosts rxn-h1:1,rxn-h2:1 "$nb/net_bench" --reps 3 --time 0.25 >>"$O/net_floor.csv" 2>&1
  "$N" down >/dev/null 2>&1 )
echo "$(el) floor done"
run cl45 XH_PREFIX=rx0 XH_GPU=0 TESTS=collective_launch LIMIT=20 MPS_PERCENT=45
run p4 PES_PER_HOST=2 XH_PREFIX=rx4 TESTS="signal collective_launch" LIMIT=25
[ -d /tmp/gpux-work/nvx ] && run p4x PES_PER_HOST=2 XH_PREFIX=rx4 PROGRAMS=/tmp/gpux-work/nvx \
  TESTS="collective-launch dev-guide-ring hello on-stream put-block ring-bcast ring-reduce shmem-based-init thread-group" LIMIT=15 DEADLINE=45
for d in "$O"/*/; do echo "### $(basename "$d")"; grep -E "^(PASS|FAIL|MISSING|STOP|RESULT)" "$d/crosshost.log" 2>/dev/null; done >"$O/summary.txt"
echo "$(el) done"
