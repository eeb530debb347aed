#!/usr/bin/env bash
# (results/net-2026-11-29g-target/) Rounds of: the TCP floor (tcp_floor, 256 KiB-4 MiB writes),
# then one put_bw run (256 KiB-4 MiB) of one install per MODE, the order rotating round by round;
# the 1-minute load noted. A MODE is an environment setting for the PEs ("RSHMEM_X_INPLACE=1").
#   XOUT=RAW.csv bash modes_ab.sh RSHMEM_PREFIX SECONDS MODE...   (as root), then
#   python3 modes_table.py RAW.csv   (its "mode0" column wants a mode named RSHMEM_X_INPLACE=0)
set -u
PFX=$(realpath "$1") T=$2
shift 2
MODES=("$@")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NETNS=$ROOT/scripts/netns-hosts.sh AGENT=$ROOT/ctest/multihost/netns-agent.sh
WORK=${PROF_WORK:-/tmp/net31}
mkdir -p "$WORK"
export RSHMEM_NETNS_PREFIX=n31
trap '"$NETNS" down >/dev/null 2>&1' EXIT
"$NETNS" up 2 >/dev/null || exit 1
cc -O2 -o "$WORK/tcp_floor" "$ROOT/perftest/net/tcp_floor.c" || exit 1
PROF_BUILD_ONLY=1 bash "$HERE/prof.sh" "$PFX" x || exit 1
OUT=${XOUT:-$WORK/xab.csv}
echo "round,load,impl,name,size,value,unit" >"$OUT"
ADDR=$("$NETNS" addr 2)
start=$(date +%s) r=0
while [ $(($(date +%s) - start)) -lt "$T" ]; do
    r=$((r + 1))
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$NETNS" exec 2 env -u RSHMEM_NETNS_PREFIX "$WORK/tcp_floor" server 17720 &
    sp=$!
    "$NETNS" exec 1 env -u RSHMEM_NETNS_PREFIX timeout 120 "$WORK/tcp_floor" client "$ADDR" 17720 5000 0.1 2>&1 |
        grep -E '^tcp_stream,(262144|1048576|4194304),' | sed "s/^/$r,$load,floor,/" >>"$OUT"
    wait "$sp"
    n=${#MODES[@]}
    for ((i = 0; i < n; i++)); do
        m=${MODES[$(((i + r) % n))]}
        # shellcheck disable=SC2086
        "$NETNS" exec 1 env -u RSHMEM_NETNS_PREFIX timeout 120 env NB_MIN=262144 $m RSHMEM_LAUNCH_AGENT="$AGENT" \
            RSHMEM_BOOTSTRAP_IFNAME=eth0 "$PFX/bin/rshmemrun" --hosts n31-h1:1,n31-h2:1 "$WORK/nb_x" --reps 3 --time 0.1 put_bw 2>&1 |
            grep '^put_bw' | sed "s/^/$r,$load,$m,/" >>"$OUT"
    done
    echo "round $r load $load" >&2
done
