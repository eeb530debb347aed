#!/usr/bin/env bash
# A host vanishes mid-job while no PE talks to it (issue 18 item 6): host 2's link goes down
# (no reset reaches anyone, as when a cable is pulled) while every PE sleeps outside SHMEM. No
# read or write will ever fail on its own, so only the control connections' keepalive can
# notice: the job must end within the hang timeout (10 s) on both hosts, the head naming
# host 2 and its PEs, host 2's launcher saying it lost the head, and nothing left running.
source "$(dirname "$0")/../programs/common.sh"
source "$(dirname "$0")/../multihost/hosts.sh"
hosts_up rka 2
build hosts_check

dir=$WORK/cut && mkdir -p "$dir"
on_host 1 timeout 90 env RSHMEM_LAUNCH_AGENT="$AGENT" "$RUN" --hosts rka-h1:1,rka-h2:2 \
    "$WORK/hosts_check" hold "$dir" >"$dir/out" 2>"$dir/err" &
job=$!
wait_files "$dir/pid.*" 3 30 || { fail "the PEs did not start"; cat "$dir/err"; finish; }
sleep 1
ip -n rka-h2 link set eth0 down
start=$SECONDS
wait $job; rc=$?
took=$((SECONDS - start)); echo "--- host 2 cut off: exit $rc after ${took}s"; cat "$dir/err"
ip -n rka-h2 link set eth0 up
[ $rc -ne 0 ] && pass "the job fails (exit $rc)" || fail "exit 0"
[ $took -le 10 ] && pass "over within the hang timeout (${took}s)" || fail "took ${took}s, more than the 10 s hang timeout"
grep -q "rshmemrun: lost the per-host launcher of host rka-h2 (PEs 1-2) (.*timed out" "$dir/err" \
    && pass "the head names host 2, its PEs, and the time-out" || fail "the head did not name host 2 and its PEs"
grep -q "rshmemrun (host rka-h2): lost the head launcher (.*timed out.*); stopping this host's 2 PE(s)" "$dir/err" \
    && pass "host 2's launcher says it lost the head and stops its PEs" || fail "host 2's launcher did not say so"
no_leftovers "host 2 cut off"
finish
