#!/usr/bin/env bash
# (results/net-2026-11-29g-target/) One net_bench put_bw run across 2 namespaced hosts, each PE
# started under WRAP... (e.g. `sh -c 'exec perf trace -s -o OUT.$(hostname) "$@"' pt`), as root.
#   NB_MIN=1048576 TIME=0.3 bash prof.sh RSHMEM_PREFIX TAG [WRAP...]
# NB_MIN: the first put_bw size (a copy of perftest/net/net_bench.c reads it); PROF_ENV="K=V ...":
# settings for the PEs (rshmemrun forwards RSHMEM_*); PROF_BUILD_ONLY=1: only build WORK/nb_TAG.
# Leaves the hosts up (RSHMEM_NETNS_PREFIX=n31 scripts/netns-hosts.sh down removes them).
set -u
PFX=$(realpath "$1") TAG=$2
shift 2
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NETNS=$ROOT/scripts/netns-hosts.sh AGENT=$ROOT/ctest/multihost/netns-agent.sh
WORK=${PROF_WORK:-/tmp/net31}
mkdir -p "$WORK"
export RSHMEM_NETNS_PREFIX=n31
"$NETNS" up 2 >/dev/null || exit 1
sed 's/for (long size = 1024; size <= MAX_BW; size \*= 4)/for (long size = getenv("NB_MIN") ? atol(getenv("NB_MIN")) : 1024; size <= MAX_BW; size *= 4)/' \
    "$ROOT/perftest/net/net_bench.c" >"$WORK/nb.c"
pc="env PKG_CONFIG_PATH=$PFX/lib/pkgconfig pkg-config"
# shellcheck disable=SC2046
cc -O2 -std=gnu11 $($pc --cflags rshmem) "$WORK/nb.c" -o "$WORK/nb_$TAG" $($pc --libs rshmem) -Wl,-rpath,"$($pc --variable=libdir rshmem)" || exit 1
[ -n "${PROF_BUILD_ONLY:-}" ] && exit 0
cd "$WORK" || exit 1
# shellcheck disable=SC2086
"$NETNS" exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT="$AGENT" RSHMEM_BOOTSTRAP_IFNAME=eth0 ${PROF_ENV:-} \
    "$PFX/bin/rshmemrun" --hosts n31-h1:1,n31-h2:1 "$@" "$WORK/nb_$TAG" --reps "${REPS:-3}" --time "${TIME:-0.1}" put_bw
