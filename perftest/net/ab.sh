#!/usr/bin/env bash
# A/B of two rshmem builds across two namespaced hosts that a loaded machine cannot fool: many
# short rounds, old and new back to back in each (the order alternates round by round), the TCP
# floor in every round too, and the 1-minute load average noted before each round. The table
# gives, per load bucket, each row's median for old and new, new/old, and bandwidth against
# the floor of the same rounds, so a build is compared only with the other at the same load.
#   bash perftest/net/ab.sh OLD_PREFIX NEW_PREFIX      (run as root: the hosts are namespaces)
# AB_TIME (default 300): seconds of rounds (a round started before then is finished; with the
# set-up the script ends within about AB_TIME + 60 s). AB_ROWS: net_bench's rows (default
# "put8_quiet get8 fetch_add barrier_all put_bw"). AB_BUSY=N: N busy loops (nice 0) for the
# whole run, as a machine whose other processes never sleep. AB_NEW_ENV="K=V ...": settings
# for the new side only (FI_* ones reach the other host: rshmemrun forwards them), so one
# build against itself A/Bs a setting. AB_NEW_SYSCTL="key=v1,v2 ...": sysctls both hosts (each a
# network namespace) take for the new side's runs only (commas stand for the spaces inside a
# value); the old side and the floor run with the values the hosts started with (the network
# namespace's own, e.g. net.ipv4.tcp_wmem: the machine's are not touched). AB_OUT=DIR keeps
# raw.csv and table.txt there. Each build's net_bench runs 3 repetitions of 0.1 s per row, the
# floor (tcp_floor) 3 streams of 0.1 s per write size.
set -u -o pipefail

[ $# -eq 2 ] || { echo "usage: bash perftest/net/ab.sh OLD_PREFIX NEW_PREFIX" >&2; exit 2; }
OLD=$(realpath "$1") NEW=$(realpath "$2")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NETNS=$ROOT/scripts/netns-hosts.sh
AGENT=$ROOT/ctest/multihost/netns-agent.sh
PREFIX=${RSHMEM_NETNS_PREFIX:-rsab}
AB_TIME=${AB_TIME:-300}
read -r -a ROWS <<<"${AB_ROWS:-put8_quiet get8 fetch_add barrier_all put_bw}"
read -r -a NEW_ENV <<<"${AB_NEW_ENV:-}"
read -r -a NEW_SYSCTL <<<"${AB_NEW_SYSCTL:-}"

if [ "$(id -u)" -ne 0 ]; then
    echo "perftest/net/ab.sh: the hosts are network namespaces: run it as root" >&2
    exit 1
fi

WORK=$(mktemp -d /tmp/rshmem-netab.XXXXXX)
BUSY_PIDS=()
cleanup() {
    local pid
    for pid in "${BUSY_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" down >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT
on_host() { local k=$1; shift; RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" exec "$k" env -u RSHMEM_NETNS_PREFIX "$@"; }

cc -O2 -Wall -Wextra -o "$WORK/tcp_floor" "$HERE/tcp_floor.c" || exit 1
for side in old new; do
    prefix=$OLD
    [ $side = new ] && prefix=$NEW
    pc="env PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config"
    # shellcheck disable=SC2046
    cc -O2 -Wall -Wextra -std=gnu11 $($pc --cflags rshmem) "$HERE/net_bench.c" -o "$WORK/net_bench_$side" \
        $($pc --libs rshmem) -Wl,-rpath,"$($pc --variable=libdir rshmem)" || exit 1
    loads=$(ldd "$WORK/net_bench_$side" | sed -n 's/.*librshmem.so.0 => \([^ ]*\).*/\1/p')
    [[ $loads == "$prefix"/* ]] || { echo "perftest/net/ab.sh: $side loads $loads, not $prefix's library (a copied install? make install PREFIX=$prefix)" >&2; exit 1; }
done
RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" up 2 >/dev/null || exit 1
# The hosts' own values of the sysctls AB_NEW_SYSCTL names, as key=v1,v2 like it.
OLD_SYSCTL=()
for kv in "${NEW_SYSCTL[@]}"; do
    OLD_SYSCTL+=("${kv%%=*}=$(on_host 1 sysctl -n "${kv%%=*}" | tr -s ' \t' ',')") || exit 1
done
# set_sysctls KEY=V1,V2...: sets each in both hosts.
set_sysctls() {
    local kv k
    for kv in "$@"; do
        for k in 1 2; do on_host $k sysctl -q -w "${kv%%=*}=$(tr ',' ' ' <<<"${kv#*=}")" >/dev/null || exit 1; done
    done
}
for _ in $(seq 1 "${AB_BUSY:-0}"); do
    (while :; do :; done) &
    BUSY_PIDS+=($!)
done

RAW=$WORK/raw.csv LOG=$WORK/log
echo "round,load,impl,name,size,value,unit" >"$RAW"
# run IMPL ROUND LOAD CMD...: runs CMD in host 1, keeps its CSV rows.
run() {
    local impl=$1 round=$2 load=$3
    shift 3
    (cd "$WORK" && on_host 1 timeout 120 "$@") >"$LOG" 2>&1 ||
        { echo "perftest/net/ab.sh: round $round: $impl failed:" >&2; tail -n 5 "$LOG" | sed 's/^/    /' >&2; }
    grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' "$LOG" | sed "s/^/$round,$load,$impl,/" >>"$RAW" || true
}

start=$(date +%s) round=0
while [ $(($(date +%s) - start)) -lt "$AB_TIME" ]; do
    round=$((round + 1))
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "perftest/net/ab.sh: round $round, load $load" >&2
    set_sysctls "${OLD_SYSCTL[@]}"
    on_host 2 "$WORK/tcp_floor" server 17719 &
    server=$!
    run floor $round "$load" "$WORK/tcp_floor" client "$(RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" addr 2)" 17719 5000 0.1
    wait "$server"
    if [ $((round % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
    for side in $order; do
        prefix=$OLD extra=()
        [ "$side" = new ] && prefix=$NEW extra=("${NEW_ENV[@]}")
        if [ "$side" = new ]; then set_sysctls "${NEW_SYSCTL[@]}"; else set_sysctls "${OLD_SYSCTL[@]}"; fi
        run "$side" $round "$load" env "${extra[@]}" RSHMEM_LAUNCH_AGENT="$AGENT" RSHMEM_BOOTSTRAP_IFNAME=eth0 "$prefix/bin/rshmemrun" \
            --hosts "$PREFIX-h1:1,$PREFIX-h2:1" "$WORK/net_bench_$side" --reps 3 --time 0.1 "${ROWS[@]}"
    done
done

TABLE=$WORK/table.txt
{
    echo "A/B across 2 namespaced hosts, $round rounds in $(($(date +%s) - start)) s, $(date -u '+%Y-%m-%d %H:%M UTC'), busy loops: ${AB_BUSY:-0}"
    echo "host: $(nproc) cores; old: $OLD; new: $NEW ${AB_NEW_ENV:+(with $AB_NEW_ENV)}${AB_NEW_SYSCTL:+ (sysctls $AB_NEW_SYSCTL)}; libfabric $(fi_info --version 2>/dev/null | sed -n 's/^libfabric: //p' | head -1)"
    echo
    python3 "$HERE/ab_table.py" "$RAW"
} >"$TABLE"
cat "$TABLE"
if [ -n "${AB_OUT:-}" ]; then
    mkdir -p "$AB_OUT" && cp "$RAW" "$TABLE" "$AB_OUT"/ && echo "raw CSV and table kept in $AB_OUT"
fi
