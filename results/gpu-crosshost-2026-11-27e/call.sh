#!/usr/bin/env bash
# One device call (nvidia-h100-x4) for this folder, run from the stage:
#   PREBUILD=0 GPU_STAGE=/work/main/.gpu/gpux bash ctest/cuda/stage_gpu.sh        (here)
#   cp -r <NVSHMEM 3.4.5 examples/ perftest/> /work/main/.gpu/gpux/nv/; cp this file and
#   scripts/build-nvshmem-programs.sh there
#   OUT=$OUT ALL=260 bash .gpu/gpux/call.sh                                       (there)
# Phase A, side by side (each 2-PE job: 2 namespaced hosts, one GPU under MPS):
#   GPU 0  collective_launch (MPS 50 %, then with RSHMEM_DEBUG=TRACE), signal
#   GPU 1  collective_launch at MPS 45 % and 40 %; then proxy_bench killed by SIGTERM mid-run
#   GPU 2  proxy_bench, then the host-to-host floor (net_bench, tcp_floor)
#   GPU 3  NVIDIA's examples and some perftests (built here meanwhile with -DRSHMEM_PROXY_ROUTE)
# Phase B: 4 PEs as 2 hosts x 2 GPUs: signal, collective_launch, NVIDIA's examples.
set -u
G="$(cd "$(dirname "$0")" && pwd)"; X="$G/ctest/cuda/crosshost.sh"
O="${OUT:-/tmp/gpux-out}"; W=/tmp/gpux-work; rm -rf "$W"; mkdir -p "$O" "$W"
T0=$(date +%s); left() { echo $(( ${ALL:-260} - ($(date +%s) - T0) )); }
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
export LIBRARY_PATH=/usr/local/cuda/lib64/stubs${LIBRARY_PATH:+:$LIBRARY_PATH}
exec > >(tee "$O/call.log") 2>&1
nvidia-smi -L; nproc
# NVIDIA's programs with the proxy route compiled in (no -rdc; MPI examples not built).
printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DRSHMEM_PROXY_ROUTE "$@"\n' >"$W/nvcc"; chmod +x "$W/nvcc"
( NVCC="$W/nvcc" RSHMEM_PREFIX="$G/stage" MPI=off JOBS=40 bash "$G/build-nvshmem-programs.sh" "$G/nv" "$W/nvb" >"$O/nv-build.txt" 2>&1
  echo "build rc=$? at $(( $(date +%s) - T0 )) s" >>"$O/nv-build.txt"
  mkdir -p "$W/nvx"; cp "$W"/nvb/examples/* "$W"/nvb/perftest/* "$W/nvx/" 2>/dev/null ) &
build=$!
NVEX="collective-launch dev-guide-ring hello moe_shuffle on-stream put-block ring-bcast ring-reduce shmem-based-init thread-group user-buffer"
NVPT="shmem_p_ping_pong_latency shmem_put_ping_pong_latency shmem_signal_ping_pong_latency shmem_atomic_ping_pong_latency barrier_latency latency"
run() { local d=$1; shift; env OUT="$W/$d" "$@" bash "$X" >/dev/null 2>&1; }
( run a0 XH_PREFIX=rx0 XH_GPU=0 TESTS="collective_launch signal" LIMIT=25
  run a0t XH_PREFIX=rx0 XH_GPU=0 TESTS=collective_launch LIMIT=20 RSHMEM_DEBUG=TRACE ) &
( run a1 XH_PREFIX=rx1 XH_GPU=1 TESTS=collective_launch LIMIT=25 MPS_PERCENT=45
  run a1b XH_PREFIX=rx1 XH_GPU=1 TESTS=collective_launch LIMIT=25 MPS_PERCENT=40
  run a1k XH_PREFIX=rx1 XH_GPU=1 TESTS=proxy_bench LIMIT=10 ) &
( run a2 XH_PREFIX=rxb XH_GPU=2 TESTS=proxy_bench LIMIT=90
  N="$G/scripts/netns-hosts.sh" A="$G/ctest/multihost/netns-agent.sh" nb="$G/build/net"; S="$G/stage"
  command -v ip >/dev/null || export PATH="$G/tools:$PATH"; chmod +x "$G/tools/"* "$nb/"* "$N" "$A" 2>/dev/null
  export RSHMEM_NETNS_PREFIX=rxn; "$N" up 2 >/dev/null
  "$N" exec 2 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" server 17718 & sv=$!; sleep 0.3
  timeout 30 "$N" exec 1 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" client "$("$N" addr 2)" 17718 20000 >"$O/net_floor.csv" 2>&1
  kill $sv 2>/dev/null
  timeout 60 "$N" exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT="$A" RSHMEM_BOOTSTRAP_IFNAME=eth0 LD_LIBRARY_PATH="$S/lib" \
    "$S/bin/rshmemrun" --hosts rxn-h1:1,rxn-h2:1 "$nb/net_bench" --reps 3 --time 0.25 >>"$O/net_floor.csv" 2>&1
  "$N" down >/dev/null 2>&1 ) &
( wait $build 2>/dev/null; while [ ! -d "$W/nvx" ]; do sleep 1; done
  d=$(( $(left) - 110 )); [ "$d" -lt 30 ] && d=30
  run a3 XH_PREFIX=rx3 XH_GPU=3 PROGRAMS="$W/nvx" TESTS="$NVEX $NVPT" LIMIT=20 DEADLINE=$d ) &
wait
echo "phase A done at $(( $(date +%s) - T0 )) s"
l=$(left); [ "$l" -gt 30 ] && run b4 PES_PER_HOST=2 XH_PREFIX=rx4 TESTS="signal collective_launch" LIMIT=25 DEADLINE=$((l - 5))
l=$(left); [ "$l" -gt 20 ] && run b4x PES_PER_HOST=2 XH_PREFIX=rx4 PROGRAMS="$W/nvx" TESTS="$NVEX" LIMIT=15 DEADLINE=$((l - 17))
for d in "$W"/*/; do
  [ -f "$d/crosshost.log" ] || continue
  echo "### $(basename "$d")"; grep -E "^(PASS|FAIL|MISSING|STOP|RESULT)" "$d/crosshost.log"
  [ -f "$d/crosshost-logs.tgz" ] && { mkdir -p "$d/logs"; tar xzf "$d/crosshost-logs.tgz" -C "$d/logs"; rm "$d/crosshost-logs.tgz"; }
done | tee "$O/summary.txt"
# The trace run's log: its start and its last 4000 lines (the hang), plus what the doorbell did.
for f in "$W"/a0t/logs/*.log; do
  [ -f "$f" ] || continue
  { echo "== $(wc -l <"$f") lines"; head -n 150 "$f"; echo "== ... last 4000 lines"; tail -n 4000 "$f"; } >"$O/trace-$(basename "$f")"
  grep -n -i -E "atomic|doorbell|stopped|waiting|still" "$f" | tail -n 200 >"$O/trace-amo-$(basename "$f")"
  : >"$f"
done
grep -h -v "^TIME" "$W"/a2/logs/proxy_bench.log >"$O/proxy_bench.log" 2>/dev/null
grep -r -n -E "double free|terminated with signal|free\(\)" "$W"/*/logs >"$O/sigterm.txt" 2>/dev/null
cat "$W"/*/failures.txt >"$O/failures.txt" 2>/dev/null
tar czf "$O/logs.tgz" -C "$W" --exclude=nvb --exclude=nvx . 2>/dev/null
echo "done at $(( $(date +%s) - T0 )) s"
