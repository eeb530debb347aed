#!/usr/bin/env bash
# (results/net-2026-11-29d-putbw/) Rounds of: the old floor (one 128 MiB stream per size), the new floor (median of 3 timed
# streams after a warm-up), rshmem's put_bw (one install), order rotating; load noted.
#   bash floorab.sh REPO RSHMEM_PREFIX SECONDS TIME OUTCSV
set -u -o pipefail
ROOT=$1 P=$(realpath "$2") SEC=$3 T=$4 CSV=$5
NETNS=$ROOT/scripts/netns-hosts.sh AGENT=$ROOT/ctest/multihost/netns-agent.sh PREFIX=rsfl29
W=$(mktemp -d /tmp/floorab.XXXXXX)
trap 'RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" down >/dev/null 2>&1; rm -rf "$W"' EXIT
on_host() { local k=$1; shift; RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" exec "$k" env -u RSHMEM_NETNS_PREFIX "$@"; }
git -C "$ROOT" show 2a3da42:perftest/net/tcp_floor.c >"$W/fo.c" && cc -O2 -o "$W/fo" "$W/fo.c" && cc -O2 -o "$W/fn" "$ROOT/perftest/net/tcp_floor.c" || exit 1
pc="env PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config"
cc -O2 -std=gnu11 $($pc --cflags rshmem) "$ROOT/perftest/net/net_bench.c" -o "$W/nb" $($pc --libs rshmem) -Wl,-rpath,"$($pc --variable=libdir rshmem)" || exit 1
RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" up 2 >/dev/null || exit 1
A=$(RSHMEM_NETNS_PREFIX=$PREFIX "$NETNS" addr 2)
echo "round,load,impl,name,size,value,unit" >"$CSV"
run() { local impl=$1 r=$2 l=$3; shift 3; (cd "$W" && on_host 1 timeout 120 "$@") >"$W/log" 2>&1 || { echo "round $r $impl failed" >&2; tail -3 "$W/log" >&2; }
  grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' "$W/log" | sed "s/^/$r,$l,$impl,/" >>"$CSV" || true; }
fl() { on_host 2 "$W/$1" server 17731 & local s=$!; run "$2" "$3" "$4" "$W/$1" client "$A" 17731 2000 ${5:-}; wait $s; }
start=$(date +%s) r=0
while [ $(($(date +%s) - start)) -lt "$T" ]; do
  r=$((r+1)); l=$(cut -d' ' -f1 /proc/loadavg); echo "round $r load $l" >&2
  for k in $(seq 0 2); do case $(( (r + k) % 3 )) in
    0) fl fo floor_old $r $l ;;
    1) fl fn floor_new $r $l "$SEC" ;;
    2) run rshmem $r $l env RSHMEM_LAUNCH_AGENT="$AGENT" RSHMEM_BOOTSTRAP_IFNAME=eth0 "$P/bin/rshmemrun" --hosts "$PREFIX-h1:1,$PREFIX-h2:1" "$W/nb" --reps 3 --time "$SEC" put_bw ;;
  esac; done
done
