#!/usr/bin/env bash
# One device call (session 22, gpux): proxy_bench across 2 namespaced hosts on one GPU under MPS
# with the library before (main 7b6f98e, oldlib/) and after this branch's proxy changes, run
# alternately (old, new, old, new), then the host-to-host floor of the same path (tcp_floor,
# net_bench), then a subset of the CUDA suite across the hosts with the new library. The stage
# (ctest/cuda/stage_gpu.sh, PREBUILD=0; proxy_bench and the suite prebuilt with
# -DRSHMEM_PROXY_ROUTE on the build machine) is this script's folder. Results at $OUT's top level.
set -u
G="$(cd "$(dirname "$0")" && pwd)"; O="${OUT:-/tmp/gpux-out}"; mkdir -p "$O"
exec > >(tee "$O/call.log") 2>&1
T0=$(date +%s); nvidia-smi -L; nproc
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
X="$G/ctest/cuda/crosshost.sh" LIB="$G/stage/lib/librshmem.so.0.1.0"
cp "$LIB" /tmp/librshmem.new
bench() { # bench TAG LIBFILE
  cp "$2" "$LIB"
  RSHMEM_DEBUG=INFO XH_PREFIX=rxb OUT=/tmp/gx-$1 TESTS=proxy_bench LIMIT=40 timeout 50 bash "$X" >/dev/null 2>&1
  grep -v "^TIME" /tmp/rshmem-rxb-logs/proxy_bench.log | grep -E "^(post|putq|pingpong|bw|floor|note)|proxy profile|rror|FAIL" >"$O/bench_$1.log"
  echo "== $1 ($(( $(date +%s) - T0 )) s)"; cat "$O/bench_$1.log"
}
# The suite subset the change touches (puts through the bounce slots, mailboxes, signals,
# AMOs), new library, on the second GPU (its own MPS daemon) beside the benchmarks; on a
# one-GPU machine after them.
suite() {
  XH_PREFIX=rxs XH_GPU=$1 OUT=/tmp/gx-suite TESTS="${SUITE:-rma put_block signal amo wait host stream strided sync ring_bcast two_tu}" \
    LIMIT=20 DEADLINE="${SUITE_DEADLINE:-150}" timeout 190 bash "$X" >/dev/null 2>&1
}
mkdir -p "$G/suite/stage/lib" && cp -a "$G/stage/." "$G/suite/stage/" # its own copy: the benches swap theirs
NGPU=$(nvidia-smi -L | wc -l)
if [ "$NGPU" -ge 2 ]; then
  (G2="$G/suite"; cp -a "$G/ctest" "$G/scripts" "$G/build" "$G/tools" "$G2/" 2>/dev/null; X="$G2/ctest/cuda/crosshost.sh"; suite 1) & suite_pid=$!
else suite_pid=; fi
bench old1 "$G/oldlib/librshmem.so"; bench new1 /tmp/librshmem.new
bench old2 "$G/oldlib/librshmem.so"; bench new2 /tmp/librshmem.new
cp /tmp/librshmem.new "$LIB"
# The floor: plain TCP round trip/stream and rshmem's CPU-PE net_bench between 2 namespaced hosts.
(
  N="$G/scripts/netns-hosts.sh" A="$G/ctest/multihost/netns-agent.sh" nb="$G/build/net"
  command -v ip >/dev/null || export PATH="$G/tools:$PATH"
  export RSHMEM_NETNS_PREFIX=rxn
  "$N" up 2 >/dev/null
  "$N" exec 2 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" server 17718 & server=$!
  sleep 0.3
  timeout 15 "$N" exec 1 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" client "$("$N" addr 2)" 17718 20000 >"$O/net_floor.csv" 2>&1
  kill $server 2>/dev/null
  timeout 30 "$N" exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT="$A" RSHMEM_BOOTSTRAP_IFNAME=eth0 \
    LD_LIBRARY_PATH="$G/stage/lib" "$G/stage/bin/rshmemrun" --hosts rxn-h1:1,rxn-h2:1 "$nb/net_bench" --reps 3 --time 0.25 >>"$O/net_floor.csv" 2>&1
  "$N" down >/dev/null 2>&1
)
echo "== floor ($(( $(date +%s) - T0 )) s)"; cat "$O/net_floor.csv"
if [ -n "$suite_pid" ]; then wait $suite_pid; else X="$G/ctest/cuda/crosshost.sh"; suite 0; fi
grep -E "^(PASS|FAIL|MISSING|RESULT|NOT RUN)" /tmp/gx-suite/crosshost.log >"$O/suite.txt"
cp /tmp/gx-suite/failures.txt "$O/suite_failures.txt" 2>/dev/null
cat "$O/suite.txt"
echo "call done at $(( $(date +%s) - T0 )) s"
