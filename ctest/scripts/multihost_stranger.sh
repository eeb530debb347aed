#!/usr/bin/env bash
# A stranger host on the job's network (issue 18): while a 2-host job (fabric_secret) puts
# and barriers round after round, checking a secret and a canary in every PE's heap, a third
# namespaced host on the same bridge
#   - sends garbage to every port the PEs listen on, holds silent connections open and floods
#     them with connects (the job must not fail, hang or slow down), then
#   - runs its own libfabric tcp;ofi_rxm endpoint (multihost/fabric_attacker.c) that fi_read()s
#     the secret and fi_write()s the canary of each PE with keys 0..63 and a few guesses.
# The job must finish OK with canaries unchanged, and the stranger must read no secret and
# complete no write. Skipped where libfabric (and its headers) are not installed.
source "$(dirname "$0")/../programs/common.sh"
if ! ldconfig -p | grep -q 'libfabric\.so\.1 ' || [ ! -e /usr/include/rdma/fabric.h ]; then
    echo "SKIP: libfabric.so.1 or its headers (libfabric-dev) are not installed"; exit 0
fi
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rst 3
build fabric_secret
gcc -std=gnu11 -O1 -Wall -o "$WORK/fabric_attacker" "$ROOT/ctest/multihost/fabric_attacker.c" -lfabric \
    || { echo "FAIL: cannot compile fabric_attacker.c"; exit 1; }

# First, with no stranger: PE 1 lags 20 ms behind every barrier, so PE 0's "last round" put
# reaches it a round early (the stop protocol must hold; a flaw there once read as lost puts).
lag=$WORK/lag && mkdir -p "$lag"
on_host 1 timeout 60 env RSHMEM_LAUNCH_AGENT="$AGENT" "$RUN" --hosts rst-h1:1,rst-h2:1 \
    "$WORK/fabric_secret" "$lag" 1 20 >"$lag/out" 2>"$lag/err"
if grep -q "fabric_secret: 2 PEs ok after" "$lag/out"; then
    pass "a PE that leaves every barrier 20 ms late stops in the same round as the others"
else
    fail "the job with a late PE did not end intact"; cat "$lag/out"; tail -5 "$lag/err"
fi

dir=$WORK/job && mkdir -p "$dir"

start=$SECONDS
on_host 1 timeout 150 env RSHMEM_DEBUG=INFO RSHMEM_LAUNCH_AGENT="$AGENT" "$RUN" --hosts rst-h1:1,rst-h2:1 \
    "$WORK/fabric_secret" "$dir" 120 >"$dir/out" 2>"$dir/err" &
job=$!
wait_files "$dir/target.*" 2 60 || { fail "the job did not start"; cat "$dir/err"; finish; }

# ports PE: the TCP ports PE's process listens on, in its host (host k = PE + 1).
ports() {
    local pid; pid=$(cut -d' ' -f1 "$dir/target.$1")
    ip netns exec "rst-h$(($1 + 1))" ss -Hltnp | grep "pid=$pid," | awk '{print $4}' | sed 's/.*://' | sort -u
}
for pe in 0 1; do
    p=$(ports $pe | tr '\n' ' ')
    echo "--- PE $pe (host rst-h$((pe + 1))) listens on: $p"
    [ -n "$p" ] || fail "PE $pe listens on no port (ss found none)"
    eval "ports_$pe=\"$p\""
done

# --- garbage, silence and a flood of connects on every port (from host 3)
stranger_noise() { # IP PORTS...
    local ip=$1; shift
    on_host 3 bash -c '
        ip=$1; shift
        for port in "$@"; do
            for i in 1 2 3; do   # garbage, then hang up
                (exec 3<>"/dev/tcp/$ip/$port" && head -c 65536 /dev/urandom >&3) 2>/dev/null
            done
            for i in $(seq 8); do   # silent connections held open for 20 s
                (exec 3<>"/dev/tcp/$ip/$port" && sleep 20) 2>/dev/null &
            done
            (exec 3<>"/dev/tcp/$ip/$port" && printf "\xff\xff\xff\xff\xff\xff\xff\x7f" >&3 && sleep 20) 2>/dev/null &
            for i in $(seq 200); do   # a flood of connects
                (exec 3<>"/dev/tcp/$ip/$port") 2>/dev/null
            done
        done
        wait' noise "$ip" "$@"
}
stranger_noise 10.77.0.1 $ports_0 &
noise0=$!
stranger_noise 10.77.0.2 $ports_1 &
noise1=$!

# --- the stranger's own libfabric endpoint, guessing keys, against each PE on each port
for pe in 0 1; do
    read -r _ secret canary <"$dir/target.$pe"
    eval "p=\$ports_$pe"
    for port in $p; do
        echo "--- attacking PE $pe at 10.77.0.$((pe + 1)):$port (secret at $secret, canary at $canary)"
        # Virtual addresses and offsets into the heap (a 1 GiB-aligned mapping).
        on_host 3 timeout 100 "$WORK/fabric_attacker" 10.77.0.3 "10.77.0.$((pe + 1))" "$port" \
            "$secret,$((secret & 0x3fffffff))" "$canary,$((canary & 0x3fffffff))" 64 \
            0xffffffffffffffff 0x100000000 0x8000000000000000 4096 >"$WORK/attack.$pe.$port" 2>&1
        a=$WORK/attack.$pe.$port
        { sed -n '1,4p' "$a"; grep -m4 ': got\|: completed' "$a"; tail -1 "$a"; }
        want=$(printf '%x' $((0x5ec2e7a11ce5ec2e + pe)))
        grep -q "got 0x$want" "$WORK/attack.$pe.$port" && fail "the stranger read PE $pe's secret (port $port): $(grep -m1 "got 0x$want" "$WORK/attack.$pe.$port")"
        grep -q "^write key .*: completed" "$WORK/attack.$pe.$port" && fail "the stranger wrote into PE $pe's heap (port $port): $(grep -m1 "completed" "$WORK/attack.$pe.$port")"
        grep -q "^read key .*: got" "$WORK/attack.$pe.$port" && fail "the stranger read PE $pe's heap (port $port): $(grep -m1 ": got" "$WORK/attack.$pe.$port")"
    done
done
wait $noise0 $noise1
touch "$dir/stop"
stopped=$SECONDS
wait $job; rc=$?
echo "--- job: exit $rc after $((SECONDS - start)) s (stop asked $((SECONDS - stopped)) s before the end)"
cat "$dir/out"; grep -v "INFO" "$dir/err" | tail -20
[ $rc -eq 0 ] && pass "the job ends with status 0" || fail "the job ends with status $rc"
grep -q "fabric_secret: 2 PEs ok after" "$dir/out" && pass "secret and canary unchanged on every PE, every round" \
    || fail "the job did not report its data intact"
[ $((SECONDS - stopped)) -le 10 ] && pass "the job stops within 10 s of being asked" || fail "the job took $((SECONDS - stopped)) s to stop"
grep -q "^read key .*: got\|^write key .*: completed" "$WORK"/attack.* || pass "no read or write of the stranger's completed"
no_leftovers "stranger"
finish
