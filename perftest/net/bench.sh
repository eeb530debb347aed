#!/usr/bin/env bash
# Multi-host benchmark: one PE on each of two namespaced hosts (scripts/netns-hosts.sh: own
# network and host name, a veth pair to a bridge, nothing shared but the kernel), in one run:
#   floor   perftest/net/tcp_floor: plain TCP between the two hosts (8-byte round trip, streams;
#           each write size timed as net_bench times a row: a warm-up, then the median of 3
#           streams of NET_TIME seconds)
#   rshmem  rshmemrun --hosts H1:1,H2:1 (libfabric, the provider rshmem picks: tcp;ofi_rxm here)
#   oshmem  Open MPI's oshrun across the same hosts: spml ucx with UCX_TLS=tcp
# rshmem and OSHMEM run the same program, perftest/net/net_bench.c (timed by the clock: see
# there), and perftest/net/put_rate.c with 2 PEs on each host (blocking 8-byte puts, every PE
# to every PE: the put8_alltoall_np4 row, puts per second of the slowest PE; NET_RATE=0 skips). Each round runs the three back to back, so they see the same load; ROUNDS (default 2)
# rounds, each figure is the median over rounds of each run's median of 3 repetitions.
# With 1 PE on each of 3 hosts the same program measures put8_quiet_multi (8-byte puts to the
# two other PEs, one quiet; NET_MULTI=0 skips it).
# BASE=<another rshmem install prefix> adds its column (an A/B in one run: each round runs the
# base right before rshmem, on every row).
#   bash perftest/net/bench.sh <rshmem install prefix>     (run as root; `make bench HOSTS=2`)
# SAVE=1 keeps the raw CSV and the table in results/net-<date>.{csv,txt}. NET_ROWS
# names net_bench's rows (default: all), NET_TIME its seconds per repetition (default 0.25).
set -u -o pipefail

[ $# -eq 1 ] || { echo "usage: bash perftest/net/bench.sh <rshmem install prefix>" >&2; exit 2; }
STAGE=$(realpath "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RESULTS=$ROOT/results
NETNS=$ROOT/scripts/netns-hosts.sh
AGENT=$ROOT/ctest/multihost/netns-agent.sh
ROUNDS=${ROUNDS:-2}
TIMEOUT=${BENCH_TIMEOUT:-300}
PREFIX=${RSHMEM_NETNS_PREFIX:-rsnb}
H1=$PREFIX-h1 H2=$PREFIX-h2 H3=$PREFIX-h3
MULTI=${NET_MULTI:-1}
read -r -a ROWS <<<"${NET_ROWS:-}"
BENCH_ARGS=(--reps 3 --time "${NET_TIME:-0.25}" "${ROWS[@]}")

if [ "$(id -u)" -ne 0 ] || ! command -v nsenter >/dev/null; then
    echo "perftest/net/bench.sh: the hosts are network namespaces: run it as root, with nsenter (util-linux)" >&2
    exit 1
fi

WORK=$(mktemp -d /tmp/rshmem-netbench.XXXXXX)
RAW=$WORK/raw.csv LOG=$WORK/log
trap 'RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
on_host() { local k=$1; shift; RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" exec "$k" env -u RSHMEM_NETNS_PREFIX "$@"; }

cc -O2 -Wall -Wextra -o "$WORK/tcp_floor" "$HERE/tcp_floor.c" || exit 1
FLAGS=(-O2 -Wall -Wextra -std=gnu11)
# build_with PREFIX SUFFIX: net_bench and put_rate against the rshmem installed at PREFIX.
build_with() {
    local pc="env PKG_CONFIG_PATH=$1/lib/pkgconfig pkg-config" prog
    for prog in net_bench put_rate; do
        # shellcheck disable=SC2046
        cc "${FLAGS[@]}" $($pc --cflags rshmem) "$HERE/$prog.c" -o "$WORK/$prog$2" $($pc --libs rshmem) \
            -Wl,-rpath,"$($pc --variable=libdir rshmem)" || echo "perftest/net/bench.sh: $prog did not build against $1" >&2
        # A copied install keeps the pkg-config file of where it was made: its column would
        # time that other library (an A/B of one build against itself).
        # (ldd's output is kept first: `ldd | grep -q` under pipefail failed whenever grep
        # matched before ldd had written its last line, and ldd died of SIGPIPE.)
        local loads
        loads=$([ -x "$WORK/$prog$2" ] && ldd "$WORK/$prog$2" | sed -n 's/.*librshmem.so.0 => \([^ ]*\).*/\1/p')
        if [ -x "$WORK/$prog$2" ] && [[ $loads != "$1"/* ]]; then
            echo "perftest/net/bench.sh: $prog$2 loads $loads, not the librshmem under $1:" \
                "$1/lib/pkgconfig/rshmem.pc names another prefix (a copied install?). Fix: make install PREFIX=$1" >&2
            exit 1
        fi
    done
}
build_with "$STAGE" ""
BASE=${BASE:+$(realpath "$BASE")}
[ -n "$BASE" ] && build_with "$BASE" _base
if command -v oshcc >/dev/null && command -v oshrun >/dev/null; then
    oshcc "${FLAGS[@]}" "$HERE/net_bench.c" -o "$WORK/net_bench_oshmem" || echo "perftest/net/bench.sh: net_bench did not build with oshcc" >&2
    oshcc "${FLAGS[@]}" "$HERE/put_rate.c" -o "$WORK/put_rate_oshmem" || echo "perftest/net/bench.sh: put_rate did not build with oshcc" >&2
else
    echo "perftest/net/bench.sh: Open MPI OSHMEM (oshcc/oshrun) not installed: its column stays empty" >&2
fi
RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" up $((MULTI == 1 ? 3 : 2)) || exit 1
echo "impl,round,name,size,value,unit" >"$RAW"

# run_one IMPL ROUND CMD...: runs CMD in host 1 (in the scratch directory, where a crash's
# files land), keeps its CSV rows tagged with IMPL and ROUND.
run_one() {
    local impl=$1 round=$2 rc=0
    shift 2
    (cd "$WORK" && on_host 1 timeout "$TIMEOUT" "$@") >"$LOG" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        echo "perftest/net/bench.sh: round $round: $impl failed (exit status $rc); its output ends with:" >&2
        tail -n 15 "$LOG" | sed 's/^/    /' >&2
    fi
    grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' "$LOG" | sed "s/^/$impl,$round,/" >>"$RAW" || true
}

floor() {
    on_host 2 "$WORK/tcp_floor" server 17718 &
    local server=$!
    run_one floor "$1" "$WORK/tcp_floor" client "$("$NETNS" addr 2)" 17718 20000 "${NET_TIME:-0.25}"
    wait "$server"
}

RSHMEMRUN=(env RSHMEM_LAUNCH_AGENT="$AGENT" RSHMEM_BOOTSTRAP_IFNAME=eth0 "$STAGE/bin/rshmemrun")
BASERUN=(env RSHMEM_LAUNCH_AGENT="$AGENT" RSHMEM_BOOTSTRAP_IFNAME=eth0 "$BASE/bin/rshmemrun")
# As root Open MPI needs the two ALLOW variables; osc=^rdma avoids a segfault at exit on this
# Open MPI (4.1.4, see perftest/host/bench.sh). UCX: TCP only, over eth0 (self for the PE's own
# memory); ORTE's own traffic and the btl stay on eth0 too. mpi_yield_when_idle=1 (what Open MPI
# picks itself on an oversubscribed node): without it a waiting PE spins through its whole time
# slice, and on a 2-core machine with any other load every message waited for a scheduler tick
# (8.0 ms per put+quiet, get or fetch-add, 4.0 ms per barrier; 33-60 us with it).
OSHRUN=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 oshrun
    --mca plm_rsh_agent "$AGENT" --mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0
    --mca spml ucx --mca osc ^rdma --mca mpi_yield_when_idle 1
    -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0)
RATE_ARGS=(--reps 3 --time "${NET_TIME:-0.25}")

for round in $(seq 1 "$ROUNDS"); do
    echo "perftest/net/bench.sh: round $round of $ROUNDS" >&2
    floor "$round"
    [ -x "$WORK/net_bench_base" ] && run_one base "$round" "${BASERUN[@]}" --hosts "$H1:1,$H2:1" "$WORK/net_bench_base" "${BENCH_ARGS[@]}"
    [ -x "$WORK/net_bench" ] && run_one rshmem "$round" "${RSHMEMRUN[@]}" --hosts "$H1:1,$H2:1" "$WORK/net_bench" "${BENCH_ARGS[@]}"
    [ -x "$WORK/net_bench_oshmem" ] && run_one oshmem "$round" "${OSHRUN[@]}" -H "$H1:1,$H2:1" -np 2 "$WORK/net_bench_oshmem" "${BENCH_ARGS[@]}"
    if [ "$MULTI" = 1 ]; then
        M=(--reps 3 --time "${NET_TIME:-0.25}" put8_quiet_multi)
        [ -x "$WORK/net_bench_base" ] && run_one base "$round" "${BASERUN[@]}" --hosts "$H1:1,$H2:1,$H3:1" "$WORK/net_bench_base" "${M[@]}"
        [ -x "$WORK/net_bench" ] && run_one rshmem "$round" "${RSHMEMRUN[@]}" --hosts "$H1:1,$H2:1,$H3:1" "$WORK/net_bench" "${M[@]}"
        [ -x "$WORK/net_bench_oshmem" ] && run_one oshmem "$round" "${OSHRUN[@]}" -H "$H1:1,$H2:1,$H3:1" -np 3 "$WORK/net_bench_oshmem" "${M[@]}"
    fi
    [ "${NET_RATE:-1}" = 1 ] || continue
    [ -x "$WORK/put_rate_base" ] && run_one base "$round" "${BASERUN[@]}" --hosts "$H1:2,$H2:2" "$WORK/put_rate_base" "${RATE_ARGS[@]}"
    [ -x "$WORK/put_rate" ] && run_one rshmem "$round" "${RSHMEMRUN[@]}" --hosts "$H1:2,$H2:2" "$WORK/put_rate" "${RATE_ARGS[@]}"
    [ -x "$WORK/put_rate_oshmem" ] && run_one oshmem "$round" "${OSHRUN[@]}" -H "$H1:2,$H2:2" -np 4 "$WORK/put_rate_oshmem" "${RATE_ARGS[@]}"
done

TABLE=$WORK/table.txt
{
    echo "Multi-host benchmark: 1 PE on each of 2 namespaced hosts (veth + bridge; put8_alltoall: 2 on each), $ROUNDS rounds, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    [ -n "$BASE" ] && echo "base: $BASE (run right before rshmem in every round)"
    echo "rshmem: $STAGE, libfabric $(fi_info --version 2>/dev/null | sed -n 's/^libfabric: //p' | head -1) (provider: rshmem's choice);" \
        "OSHMEM: $(command -v oshrun >/dev/null && oshrun --version 2>/dev/null | head -1 || echo absent), spml ucx, UCX_TLS=tcp,self, yield when idle"
    echo
    python3 "$HERE/table.py" "$RAW"
} >"$TABLE"
echo
cat "$TABLE"

if [ "${SAVE:-0}" = 1 ]; then
    mkdir -p "$RESULTS"
    out=$RESULTS/net-$(date +%Y-%m-%d)
    [ -e "$out.csv" ] && out=$RESULTS/net-$(date +%Y-%m-%d-%H%M%S)
    cp "$RAW" "$out.csv"
    cp "$TABLE" "$out.txt"
    echo "raw CSV saved to $out.csv (table: $out.txt)"
fi
