#!/bin/bash
# loop.sh N NP HOSTS OUTDIR PROG ARGS...: runs PROG N times with NP PEs over HOSTS namespaced hosts
# (scripts/netns-hosts.sh) under this checkout's build/stage rshmemrun --hosts; STOP=1 stops at the first failure
set -u
W=$(cd "$(dirname "$0")/../.." && pwd)
n=$1 np=$2 hosts=$3 out=$4; shift 4
mkdir -p $out
export RSHMEM_NETNS_PREFIX=${PFX:-fc31}
$W/scripts/netns-hosts.sh up $hosts >/dev/null
spec=
for k in $(seq 1 $hosts); do c=$((np / hosts + (k <= np % hosts))); [ $c -gt 0 ] && spec="$spec${spec:+,}${PFX:-fc31}-h$k:$c"; done
fails=0
for i in $(seq 1 $n); do
  t0=$(date +%s.%N)
  $W/scripts/netns-hosts.sh exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT=$W/ctest/multihost/netns-agent.sh \
     timeout -k 5 ${LIMIT:-120} $W/build/stage/bin/rshmemrun --hosts "$spec" "$@" > $out/run$i.log 2>&1 </dev/null
  rc=$?
  printf '%s\t%s\t%.1f\n' $i $rc $(echo "$(date +%s.%N) - $t0" | bc) >> $out/runs.tsv
  [ $rc -ne 0 ] && { fails=$((fails+1)); grep -h FAIL $out/run$i.log | head -3; }
  [ -n "${STOP:-}" ] && [ $rc -ne 0 ] && break
done
echo "$fails of $n failed"
