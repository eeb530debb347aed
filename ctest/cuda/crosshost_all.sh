#!/usr/bin/env bash
# The CUDA suite across namespaced hosts at both shapes in one GPU-machine call (ctest/cuda/
# crosshost.sh does one run): the 2-PE shape split over RUNNERS host sets side by side, each on
# its own GPU with its own MPS daemon, proxy_bench on the next GPU beside them (then the
# host-to-host floor: net_bench and tcp_floor, $OUT/net_floor.csv); then the 4-PE shape (2 hosts
# x 2 GPUs) over every GPU, first DEBUG_TESTS with RSHMEM_DEBUG=TRACE.
#   OUT=dir LIMIT2=20 LIMIT4=12 DEADLINE2=150 DEADLINE4=150 ALL_LIMIT=330 bash .gpu/<name>/ctest/cuda/crosshost_all.sh
# Results: $OUT/summary.txt (every RESULT line), $OUT/logs.tgz (each run's logs and failures).
# ALL_LIMIT: seconds for everything (the compile included); the 4-PE runs shrink to fit.
# Prebuilt programs, nothing compiled on the device: the suite from the stage's build/cuda
# (`PREBUILD=1 ... stage_gpu.sh`, built there with CUDA_TEST_FLAGS); NV=dir runs NVIDIA's
# examples and perftests prebuilt into dir (scripts/build-nvshmem-programs.sh) after the suite
# at both shapes: NV_TESTS (default: every program in dir but moe_shuffle), then moe_shuffle
# with `-c` (its cudaMalloc option; under MPS each PE may use the whole GPU, MOE_MPS_PERCENT
# default 100: its cooperative launch asks for 96 blocks of 1024 threads, more than 45 % of an
# H200 holds). Known-bad programs (sync_latency: NVIDIA's program reads its
# iteration count out of bounds) stay in the list and get a SKIP line with the reason from
# crosshost.sh's known_bad (RUN_KNOWN_BAD=1 runs them). Without build/cuda the suite is
# compiled here with BUILD_FLAGS (default -DRSHMEM_PROXY_ROUTE, what the stage's route needs at the moment).
# Every run's summary and failures are also written at $OUT's top level (summary.txt,
# failures-<run>.txt): the device tool brings back only top-level files reliably.
set -uo pipefail
began=$(date +%s)
left() { echo $(( ${ALL_LIMIT:-330} - ($(date +%s) - began) )); }
G="$(cd "$(dirname "$0")/../.." && pwd)"
X="$G/ctest/cuda/crosshost.sh"
O="${OUT:-/tmp/rshmem-xh-all}"; W=/tmp/rshmem-xh-all-work; rm -rf "$W"; mkdir -p "$O" "$W"
# The summary so far, at $OUT's top level: written after each phase and when the caller's
# timeout stops the script, so a call cut short keeps what finished (session 20's call lost all).
collect() {
  for d in "$W"/*/; do
    [ -f "$d/crosshost.log" ] || continue
    echo "### $(basename "$d")"; grep -E "^(PASS|FAIL|MISSING|SKIP|STOP|RESULT|NOT RUN)" "$d/crosshost.log"
    [ -f "$d/failures.txt" ] && cp "$d/failures.txt" "$O/failures-$(basename "$d").txt"
  done >"$O/summary.txt"
  grep -h "" "$W"/bench/crosshost.log 2>/dev/null | grep -v "^TIME" >"$O/proxy_bench.log"
}
trap 'collect; exit 124' TERM
ALL="rma amo host host_typed host_amo strided stream signal wait put_block two_tu two_tu_rdc buffer_register user_buffer cumodule nvrtc ring_bcast ring_reduce pipeline jacobi coll_host sync team coll coll_sizes collective_launch"
TESTS="${TESTS:-$ALL}"
RUNNERS="${RUNNERS:-3}"
DEBUG_TESTS="${DEBUG_TESTS:-}"
# The test programs (and proxy_bench) built here in parallel if the stage has none: only what
# runs, not ctest/scripts/cuda_compile.sh's whole compile check.
S="$G/stage" B="$G/build/cuda"
if [ ! -x "$B/host" ]; then
  mkdir -p "$B"; t0=$(date +%s)
  nvcc=/usr/local/cuda/bin/nvcc
  flags=(-arch=sm_90 -std=c++17 -I"$S/include" ${BUILD_FLAGS--DRSHMEM_PROXY_ROUTE})
  libs=(-L"$S/lib" -lrshmem -Xlinker "-rpath=$S/lib")
  for t in first_coll $TESTS; do
    src="$G/ctest/cuda/$t.cu"
    case "$t" in two_tu_rdc) src="$G/ctest/cuda/two_tu.cu" ;; esac
    [ -f "$src" ] || continue
    ( if [ "$t" = two_tu_rdc ]; then "$nvcc" "${flags[@]}" -rdc=true "$src" "$G/ctest/cuda/two_tu.part.cu" -o "$B/$t" "${libs[@]}"
      else "$nvcc" "${flags[@]}" "$src" $(ls "$G/ctest/cuda/$t".part*.cu 2>/dev/null) -o "$B/$t" "${libs[@]}"; fi ) >"$W/build-$t.log" 2>&1 &
  done
  ( "$nvcc" "${flags[@]}" -cubin "$G/ctest/cuda/cumodule.kernel.cu" -o "$B/cumodule.kernel.cubin"
    "$nvcc" "${flags[@]}" -ptx "$G/ctest/cuda/cumodule.kernel.cu" -o "$B/cumodule.kernel.ptx" ) >"$W/build-kernel.log" 2>&1 &
  [ -f "$G/perftest/proxy/proxy_bench.cu" ] && "$nvcc" "${flags[@]}" "$G/perftest/proxy/proxy_bench.cu" -o "$B/proxy_bench" "${libs[@]}" >"$W/build-bench.log" 2>&1 &
  wait
  echo "built $(ls "$B" | wc -l) files in $(( $(date +%s) - t0 )) s"; cat "$W"/build-*.log | grep -i error | head -20
fi
# Round-robin the tests over the runners (first_coll runs in each as its preflight).
declare -a part
i=0
for t in $TESTS; do part[$((i % RUNNERS))]="${part[$((i % RUNNERS))]:-} $t"; i=$((i + 1)); done
pids=()
for r in $(seq 0 $((RUNNERS - 1))); do
  XH_PREFIX=rx$r XH_GPU=$r OUT="$W/p2-$r" TESTS="${part[$r]:-}" LIMIT="${LIMIT2:-20}" DEADLINE="${DEADLINE2:-150}" \
    timeout $(( ${DEADLINE2:-150} + ${LIMIT2:-20} + 20 )) bash "$X" >/dev/null 2>&1 &
  pids+=($!)
done
# The host-to-host floor of the same path: rshmem's CPU-PE net_bench (perftest/net/, built on
# the Rust machine into build/net) and a plain TCP round trip/stream (tcp_floor), between two
# namespaced hosts of their own.
net_floor() {
  local N="$G/scripts/netns-hosts.sh" A="$G/ctest/multihost/netns-agent.sh" nb="$G/build/net"
  [ -x "$nb/net_bench" ] || return 0
  command -v ip >/dev/null || export PATH="$G/tools:$PATH" # iproute2 staged by stage_gpu.sh
  export RSHMEM_NETNS_PREFIX=rxn
  "$N" up 2 >/dev/null || return 0
  "$N" exec 2 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" server 17718 & local server=$!
  sleep 0.3
  timeout 15 "$N" exec 1 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" client "$("$N" addr 2)" 17718 20000 >"$O/net_floor.csv" 2>&1
  kill "$server" 2>/dev/null
  timeout "${NET_FLOOR_LIMIT:-40}" "$N" exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT="$A" RSHMEM_BOOTSTRAP_IFNAME=eth0 \
    LD_LIBRARY_PATH="$S/lib" "$S/bin/rshmemrun" --hosts rxn-h1:1,rxn-h2:1 "$nb/net_bench" --reps 3 --time 0.25 >>"$O/net_floor.csv" 2>&1
  "$N" down >/dev/null 2>&1
}
if [ "${BENCH:-1}" = 1 ] && [ -x "$G/build/cuda/proxy_bench" ]; then
  # RSHMEM_DEBUG=INFO: each PE logs its proxy profile at finalize (src/proxy/profile.rs).
  ( RSHMEM_DEBUG="${BENCH_DEBUG:-INFO}" XH_PREFIX=rxb XH_GPU=$RUNNERS OUT="$W/bench" TESTS=proxy_bench LIMIT="${BENCH_LIMIT:-90}" \
      bash "$X" >/dev/null 2>&1
    net_floor ) &
  pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p"; done
collect
# NVIDIA's programs, prebuilt: one runner at 2 PEs (GPU 0), then at 4 PEs below.
NV="${NV:-}"
# The programs to run (sync_latency among them: crosshost.sh lists it as SKIP, known-bad), the
# slow ones last: NV_LONG (default shmem_g_latency and shmem_p_latency: one remote g or p per
# element up to 4 MiB through the proxy; p took 12-25 s across the hosts, g more than 45) get
# NV_LONG_LIMIT seconds each (default 60) and the deadline grows by what they get above NV_LIMIT,
# up to 30 s before ALL_LIMIT.
NV_LONG="${NV_LONG-shmem_g_latency shmem_p_latency}"
nv_tests() {
  [ -n "${NV_TESTS:-}" ] && { echo "$NV_TESTS"; return; }
  local all; all="$(ls "$NV" | grep -vx moe_shuffle | tr '\n' ' ')"
  for t in $all; do case " $NV_LONG " in *" $t "*) ;; *) printf '%s ' "$t" ;; esac; done
  for t in $NV_LONG; do case " $all " in *" $t "*) printf '%s ' "$t" ;; esac; done
}
nv_runs() { # nv_runs SHAPE-ENV...: the programs, then moe_shuffle -c
  local tag=$1; shift
  local tests d extra=0 t; tests="$(nv_tests)"
  for t in $NV_LONG; do case " $tests " in *" $t "*) extra=$(( extra + ${NV_LONG_LIMIT:-60} - ${NV_LIMIT:-15} )) ;; esac; done
  d=$(( ${NV_DEADLINE:-90} + extra )); [ "$d" -gt $(( $(left) - 30 )) ] && d=$(( $(left) - 30 ))
  env "$@" OUT="$W/$tag" PROGRAMS="$NV" TESTS="$tests" LIMIT="${NV_LIMIT:-15}" LONG_TESTS="$NV_LONG" \
    LONG_LIMIT="${NV_LONG_LIMIT:-60}" DEADLINE="$d" bash "$X" >/dev/null 2>&1
  [ -x "$NV/moe_shuffle" ] && env "$@" MPS_PERCENT="${MOE_MPS_PERCENT:-100}" OUT="$W/$tag-moe" PROGRAMS="$NV" TESTS=moe_shuffle PROGRAM_ARGS=-c LIMIT="${NV_LIMIT:-15}" bash "$X" >/dev/null 2>&1
}
[ -n "$NV" ] && [ -d "$NV" ] && [ "$(left)" -gt 60 ] && nv_runs nv2 XH_PREFIX=rxv XH_GPU=0 && collect
if [ "${FOUR:-1}" = 1 ]; then
  L4="${LIMIT4:-12}"
  if [ -n "$DEBUG_TESTS" ] && [ "$(left)" -gt 40 ]; then
    RSHMEM_DEBUG=TRACE OUT="$W/p4-debug" PES_PER_HOST=2 TESTS="$DEBUG_TESTS" LIMIT="$L4" timeout "$(left)" bash "$X" >/dev/null 2>&1
  fi
  rest=""; for t in $TESTS; do case " $DEBUG_TESTS " in *" $t "*) ;; *) rest="$rest $t" ;; esac; done
  d4=$(( $(left) - L4 - 15 )); [ "$d4" -gt "${DEADLINE4:-150}" ] && d4="${DEADLINE4:-150}"
  if [ "$d4" -gt 10 ]; then
    OUT="$W/p4" PES_PER_HOST=2 TESTS="$rest" LIMIT="$L4" DEADLINE="$d4" timeout $(( $(left) - 5 )) bash "$X" >/dev/null 2>&1
  else
    echo "4-PE shape not run: $(left) s left" >"$O/p4-skipped.txt"
  fi
  [ -n "$NV" ] && [ -d "$NV" ] && [ "$(left)" -gt 40 ] && NV_DEADLINE=$(( $(left) - 30 )) nv_runs nv4 PES_PER_HOST=2 XH_PREFIX=rxv4
fi
collect
for d in "$W"/*/; do
  [ -f "$d/crosshost-logs.tgz" ] && { mkdir -p "$d/logs"; tar xzf "$d/crosshost-logs.tgz" -C "$d/logs"; rm "$d/crosshost-logs.tgz"; }
done
cat "$O/summary.txt"
grep -h "" "$W"/bench/logs/proxy_bench.log 2>/dev/null | grep -v "^TIME" > "$O/proxy_bench.log"
cat "$O/proxy_bench.log"
[ -f "$O/net_floor.csv" ] && { echo "### net floor (tcp_floor, then net_bench rows)"; cat "$O/net_floor.csv"; }
tar czf "$O/logs.tgz" -C "$W" .
