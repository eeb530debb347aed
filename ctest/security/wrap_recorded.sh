#!/bin/sh
# rshmemrun's PE 1 in ctest/security/run.sh reaches its rendezvous through a recording proxy
# (attacker.py proxy), so attackers can replay a real PE's bytes. Other PEs run as they are.
# usage: wrap_recorded.sh ATTACKER_PY RECORD_FILE program args...
attacker=$1 record=$2; shift 2
if [ "$RSHMEM_RANK" != 1 ]; then exec "$@"; fi
name=rshmem-proxy-$$
"${PYTHON:-python3}" "$attacker" proxy --listen "$name" --to "$RSHMEM_STAR_ADDR" --record "$record" >>"$record.log" 2>&1 &
proxy=$!
tries=0
until grep -q "@$name\$" /proc/net/unix; do
    tries=$((tries + 1)); [ $tries -gt 500 ] && { echo "wrap_recorded: the proxy did not start" >&2; kill $proxy; exit 1; }
    sleep 0.01
done
RSHMEM_STAR_ADDR=$name "$@"
rc=$?
kill $proxy 2>/dev/null
exit $rc
